// LangChain.js (`@langchain/core`): a scripted chat model (the package's own
// FakeStreamingChatModel, tools bound) asks for a tool call, and the call
// runs through the real StructuredTool.invoke() of the guarded tool.
// @langchain/core has no agent loop of its own: the loop below is the one
// its docs show, and a tool's error becomes a ToolMessage with status
// "error", as LangGraph's ToolNode and langchain's createAgent make it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { AIMessageChunk, ToolMessage } from "@langchain/core/messages";
import { StructuredTool, tool } from "@langchain/core/tools";
import { FakeStreamingChatModel } from "@langchain/core/utils/testing";
import { z } from "zod";

import { gateLangChainTool, ToolBlockedError } from "../../dist/frameworks.js";
import { alive, canary, DESTRUCTIVE, eventFields, files, liveClient, runBash, runRead, stoppedClient, UNREACHABLE } from "./common.mjs";

const bash = tool(runBash, { name: "Bash", description: "Run a shell command", schema: z.object({ command: z.string() }) });
const read = tool(runRead, { name: "Read", description: "Read a file", schema: z.object({ file_path: z.string() }) });

// One turn: the scripted model asks for the call, the tool runs it; returns the ToolMessage the model would read next.
async function turn(tools, name, args) {
  const model = new FakeStreamingChatModel({ chunks: [new AIMessageChunk({ content: "", tool_calls: [{ name, args, id: "call-1", type: "tool_call" }] })] });
  const ai = await model.bindTools(tools).invoke("go");
  assert.equal(ai.tool_calls.length, 1);
  const call = ai.tool_calls[0];
  const chosen = tools.find((t) => t.name === call.name);
  try {
    return await chosen.invoke(call);
  } catch (err) {
    return new ToolMessage({ content: `Error: ${err.message}`, tool_call_id: call.id, status: "error", artifact: err });
  }
}

const guarded = (client) => [bash, read].map((t) => gateLangChainTool(client, t, { event: eventFields }));

describe("LangChain.js", () => {
  it("without the guard, the scripted delete runs (positive control)", async () => {
    const dir = await canary("lc-control");
    const message = await turn([bash, read], "Bash", { command: `rm -rf ${dir}` });
    assert.equal(message.status, "success");
    assert.equal(alive(dir), false);
  });

  it("the guarded tool is still the framework's tool", () => {
    const [g] = guarded(liveClient());
    assert.ok(g instanceof StructuredTool);
    assert.equal(g.name, "Bash");
    assert.equal(g.description, "Run a shell command");
    assert.notEqual(bash._call, g._call, "the original tool was changed");
  });

  it("blocks a recursive delete; the canary survives and the tool's error carries gated's reason", async () => {
    const dir = await canary("lc-delete");
    const message = await turn(guarded(liveClient()), "Bash", { command: `rm -rf ${dir}` });
    assert.equal(alive(dir), true);
    assert.equal(message.status, "error");
    assert.ok(message.artifact instanceof ToolBlockedError);
    assert.equal(message.artifact.decision.route, "refuse");
    assert.ok(message.content.includes(`gated refuses this call: ${DESTRUCTIVE}`), message.content);
    assert.match(message.content, /\(decision [0-9a-f-]{36}\)\.$/);
  });

  it("runs a harmless read", async () => {
    const message = await turn(guarded(liveClient()), "Read", { file_path: files.readme });
    assert.equal(message.status, "success");
    assert.equal(message.content, files.readmeText);
  });

  it("with gated stopped, blocks the delete and the read", async () => {
    const dir = await canary("lc-stopped");
    for (const [name, args] of [["Bash", { command: `rm -rf ${dir}` }], ["Read", { file_path: files.readme }]]) {
      const message = await turn(guarded(stoppedClient()), name, args);
      assert.equal(message.status, "error");
      assert.ok(message.content.startsWith(`Error: ${UNREACHABLE}`), message.content);
    }
    assert.equal(alive(dir), true);
  });
});
