// Mastra (`@mastra/core`): an Agent with the AI SDK's scripted model
// (ai/test) asks for a tool call, and Mastra runs the guarded tool.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { Agent } from "@mastra/core/agent";
import { createTool } from "@mastra/core/tools";
import { z } from "zod";

import { gateMastraTool } from "../../dist/frameworks.js";
import { alive, canary, DESTRUCTIVE, eventFields, files, liveClient, runBash, runRead, stoppedClient, UNREACHABLE } from "./common.mjs";
import { scriptedModel, toolResultSent } from "./scripted-model.mjs";

const Bash = createTool({ id: "Bash", description: "Run a shell command", inputSchema: z.object({ command: z.string() }), execute: async (input) => runBash(input) });
const Read = createTool({ id: "Read", description: "Read a file", inputSchema: z.object({ file_path: z.string() }), execute: async (input) => runRead(input) });

// Runs one agent turn; returns what the model was sent back about its tool call.
async function run(tools, toolName, input) {
  const model = scriptedModel(toolName, input);
  const agent = new Agent({ id: "gated-test", name: "gated-test", instructions: "Use the tools.", model, tools });
  await agent.generate("go", { maxSteps: 2 });
  return toolResultSent(model);
}

const guarded = (client) => ({ Bash: gateMastraTool(client, Bash, { event: eventFields }), Read: gateMastraTool(client, Read, { event: eventFields }) });

// The text of a tool's result, whatever output type Mastra chose for an error.
const text = (output) => (typeof output.value === "string" ? output.value : JSON.stringify(output.value));

describe("Mastra", () => {
  it("without the guard, the scripted delete runs (positive control)", async () => {
    const dir = await canary("mastra-control");
    await run({ Bash, Read }, "Bash", { command: `rm -rf ${dir}` });
    assert.equal(alive(dir), false);
  });

  it("blocks a recursive delete; the canary survives and the model reads gated's reason", async () => {
    const dir = await canary("mastra-delete");
    const output = await run(guarded(liveClient()), "Bash", { command: `rm -rf ${dir}` });
    assert.equal(alive(dir), true);
    assert.equal(output.type, "error-text", JSON.stringify(output));
    assert.ok(text(output).includes(`gated refuses this call: ${DESTRUCTIVE}`), JSON.stringify(output));
    assert.match(text(output), /\(decision [0-9a-f-]{36}\)\./);
  });

  it("runs a harmless read", async () => {
    const output = await run(guarded(liveClient()), "Read", { file_path: files.readme });
    assert.deepEqual(output, { type: "text", value: files.readmeText });
  });

  it("with gated stopped, blocks the delete and the read", async () => {
    const dir = await canary("mastra-stopped");
    for (const [name, args] of [["Bash", { command: `rm -rf ${dir}` }], ["Read", { file_path: files.readme }]]) {
      const output = await run(guarded(stoppedClient()), name, args);
      assert.equal(output.type, "error-text", JSON.stringify(output));
      assert.ok(text(output).includes(UNREACHABLE), JSON.stringify(output));
    }
    assert.equal(alive(dir), true);
  });
});
