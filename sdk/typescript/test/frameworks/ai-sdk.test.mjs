// The Vercel AI SDK (`ai`): generateText runs a scripted model's tool call
// through gateAiSdkTools() and the SDK's own tool execution.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";

import { generateText, isStepCount, tool } from "ai";
import { z } from "zod";

import { gateAiSdkTools } from "../../dist/frameworks.js";
import { alive, canary, DESTRUCTIVE, eventFields, files, liveClient, runBash, runRead, stoppedClient, UNREACHABLE } from "./common.mjs";
import { scriptedModel, toolResultSent } from "./scripted-model.mjs";

const tools = {
  Bash: tool({ description: "Run a shell command", inputSchema: z.object({ command: z.string() }), execute: runBash }),
  Read: tool({ description: "Read a file", inputSchema: z.object({ file_path: z.string() }), execute: runRead }),
  Write: tool({ description: "Write a file", inputSchema: z.object({ file_path: z.string(), content: z.string() }), execute: ({ file_path, content }) => writeFile(file_path, content) }),
  Deploy: tool({ description: "Deploy a service", inputSchema: z.object({ service: z.string() }), execute: async () => "deployed" }),
};

async function run(toolSet, toolName, input) {
  const model = scriptedModel(toolName, input);
  await generateText({ model, tools: toolSet, prompt: "go", stopWhen: isStepCount(2) });
  return toolResultSent(model);
}

describe("Vercel AI SDK", () => {
  it("without the guard, the scripted delete runs (positive control)", async () => {
    const dir = await canary("ai-control");
    await run(tools, "Bash", { command: `rm -rf ${dir}` });
    assert.equal(alive(dir), false);
  });

  it("blocks a recursive delete; the canary survives and the model reads gated's reason", async () => {
    const dir = await canary("ai-delete");
    const output = await run(gateAiSdkTools(liveClient(), tools, { event: eventFields }), "Bash", { command: `rm -rf ${dir}` });
    assert.equal(alive(dir), true);
    assert.equal(output.type, "error-text", JSON.stringify(output));
    // The AI SDK sends the error as "<name>: <message>".
    assert.match(output.value, /^ToolBlockedError: gated refuses this call: /);
    assert.ok(output.value.includes(DESTRUCTIVE), output.value);
    assert.match(output.value, /\(decision [0-9a-f-]{36}\)\.$/);
  });

  it("blocks an ask (a write the catalog wants a person to confirm) and a defer (a tool no catalog describes), each with its route", async () => {
    const guarded = gateAiSdkTools(liveClient(), tools, { event: eventFields });
    const target = join(files.dir, "ai-written.txt");
    const ask = await run(guarded, "Write", { file_path: target, content: "x" });
    assert.equal(existsSync(target), false);
    assert.match(ask.value, /^ToolBlockedError: gated needs a person to approve this call: .+ \(decision [0-9a-f-]{36}\)\.$/);
    const defer = await run(gateAiSdkTools(liveClient(), tools, { event: () => ({ ...eventFields("Deploy"), tool_category: "unknown", recommended_route: "defer" }) }), "Deploy", { service: "api" });
    assert.match(defer.value, /^ToolBlockedError: gated defers this call to a person: .+ \(decision [0-9a-f-]{36}\)\.$/);
  });

  it("runs a harmless read", async () => {
    const output = await run(gateAiSdkTools(liveClient(), tools, { event: eventFields }), "Read", { file_path: files.readme });
    assert.deepEqual(output, { type: "text", value: files.readmeText });
  });

  it("with gated stopped, blocks even the harmless read", async () => {
    const dir = await canary("ai-stopped");
    const toolSet = gateAiSdkTools(stoppedClient(), tools, { event: eventFields });
    const output = await run(toolSet, "Bash", { command: `rm -rf ${dir}` });
    assert.equal(alive(dir), true);
    assert.ok(output.value.startsWith(`ToolBlockedError: ${UNREACHABLE}`), output.value);
    const read = await run(toolSet, "Read", { file_path: files.readme });
    assert.equal(read.type, "error-text");
    assert.ok(read.value.startsWith(`ToolBlockedError: ${UNREACHABLE}`), read.value);
  });
});
