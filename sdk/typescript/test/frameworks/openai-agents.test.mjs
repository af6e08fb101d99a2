// The OpenAI Agents SDK (`@openai/agents`): run() drives an Agent whose
// Model is scripted (the SDK's Model interface) to ask for a tool call; the
// guarded tool carries gated's tool input guardrail.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { Agent, run, setTracingDisabled, tool, Usage } from "@openai/agents";
import { z } from "zod";

import { gatedToolInputGuardrail } from "../../dist/frameworks.js";
import { alive, canary, DESTRUCTIVE, eventFields, files, liveClient, runBash, runRead, stoppedClient, UNREACHABLE } from "./common.mjs";

// No network: traces would be exported to OpenAI.
setTracingDisabled(true);

// A Model that asks for one function call, then answers "done"; it keeps the requests it got.
function scriptedModel(name, args) {
  const requests = [];
  return {
    requests,
    async getResponse(request) {
      requests.push(request);
      const output =
        requests.length === 1
          ? [{ type: "function_call", callId: "call-1", name, arguments: JSON.stringify(args), status: "completed" }]
          : [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "done" }] }];
      return { usage: new Usage(), output, responseId: `r${requests.length}` };
    },
    async *getStreamedResponse() {
      throw new Error("this scripted model does not stream");
    },
  };
}

function tools(guardrail) {
  const inputGuardrails = guardrail === undefined ? [] : [guardrail];
  return [
    tool({ name: "Bash", description: "Run a shell command", parameters: z.object({ command: z.string() }), execute: runBash, inputGuardrails }),
    tool({ name: "Read", description: "Read a file", parameters: z.object({ file_path: z.string() }), execute: runRead, inputGuardrails }),
  ];
}

// One run; returns the tool's output as the model was sent it in its second request.
async function runOnce(guardrail, name, args) {
  const model = scriptedModel(name, args);
  const agent = new Agent({ name: "gated-test", instructions: "Use the tools.", model, tools: tools(guardrail) });
  const result = await run(agent, "go", { maxTurns: 3 });
  assert.equal(result.finalOutput, "done");
  const second = model.requests[1];
  assert.ok(second, "the model was not called again with the tool's result");
  const items = second.input.filter((item) => item.type === "function_call_result");
  assert.equal(items.length, 1, JSON.stringify(second.input));
  const { output } = items[0];
  return { text: typeof output === "string" ? output : output.text, result };
}

describe("OpenAI Agents SDK", () => {
  it("without the guardrail, the scripted delete runs (positive control)", async () => {
    const dir = await canary("oa-control");
    await runOnce(undefined, "Bash", { command: `rm -rf ${dir}` });
    assert.equal(alive(dir), false);
  });

  it("blocks a recursive delete; the canary survives and the model reads gated's reason as the tool's output", async () => {
    const dir = await canary("oa-delete");
    const { text, result } = await runOnce(gatedToolInputGuardrail(liveClient(), { event: eventFields }), "Bash", { command: `rm -rf ${dir}` });
    assert.equal(alive(dir), true);
    assert.ok(text.startsWith(`gated refuses this call: ${DESTRUCTIVE}`), text);
    assert.match(text, /\(decision [0-9a-f-]{36}\)\.$/);
    const [guardrailResult] = result.toolInputGuardrailResults;
    assert.equal(guardrailResult.output.behavior.type, "rejectContent");
    assert.equal(guardrailResult.output.outputInfo.decision.route, "refuse");
  });

  it("runs a harmless read", async () => {
    const { text } = await runOnce(gatedToolInputGuardrail(liveClient(), { event: eventFields }), "Read", { file_path: files.readme });
    assert.equal(text, files.readmeText);
  });

  it("with gated stopped, blocks the delete and the read", async () => {
    const dir = await canary("oa-stopped");
    for (const [name, args] of [["Bash", { command: `rm -rf ${dir}` }], ["Read", { file_path: files.readme }]]) {
      const { text } = await runOnce(gatedToolInputGuardrail(stoppedClient(), { event: eventFields }), name, args);
      assert.ok(text.startsWith(UNREACHABLE), text);
    }
    assert.equal(alive(dir), true);
  });
});
