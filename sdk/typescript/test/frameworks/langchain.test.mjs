// LangChain.js: langchain's createAgent (its ToolNode on LangGraph) runs a
// scripted model (`fakeModel` of @langchain/core/testing) that asks for a
// tool call, and invokes the guarded @langchain/core tool; the ToolMessage in
// the agent's messages is what the model reads next.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { StructuredTool, tool } from "@langchain/core/tools";
import { createAgent } from "langchain";
import { z } from "zod";

import { gateLangChainTool } from "../../dist/frameworks.js";
import { alive, canary, DESTRUCTIVE, eventFields, files, liveClient, runBash, runRead, stoppedClient, UNREACHABLE } from "./common.mjs";

const bash = tool(runBash, { name: "Bash", description: "Run a shell command", schema: z.object({ command: z.string() }) });
const read = tool(runRead, { name: "Read", description: "Read a file", schema: z.object({ file_path: z.string() }) });

// One agent run: the model asks for the call, then says "done"; returns the ToolMessage of the call.
async function turn(tools, name, args) {
  const model = fakeModel().respondWithTools([{ name, args, id: "call-1" }]).respond(new AIMessage("done"));
  const agent = createAgent({ model, tools });
  const result = await agent.invoke({ messages: [{ role: "user", content: "go" }] });
  const toolMessages = result.messages.filter((m) => ToolMessage.isInstance(m));
  assert.equal(toolMessages.length, 1, JSON.stringify(result.messages));
  assert.equal(result.messages.at(-1).content, "done");
  return toolMessages[0];
}

const guarded = (client) => [bash, read].map((t) => gateLangChainTool(client, t, { event: eventFields }));

describe("LangChain.js", () => {
  it("without the guard, the scripted delete runs (positive control)", async () => {
    const dir = await canary("lc-control");
    const message = await turn([bash, read], "Bash", { command: `rm -rf ${dir}` });
    assert.notEqual(message.status, "error");
    assert.equal(alive(dir), false);
  });

  it("the guarded tool is still the framework's tool, and the original is untouched", () => {
    const [g] = guarded(liveClient());
    assert.ok(g instanceof StructuredTool);
    assert.equal(g.name, "Bash");
    assert.equal(g.description, "Run a shell command");
    assert.notEqual(bash._call, g._call);
  });

  it("blocks a recursive delete; the canary survives and the model reads gated's reason in an error ToolMessage", async () => {
    const dir = await canary("lc-delete");
    const message = await turn(guarded(liveClient()), "Bash", { command: `rm -rf ${dir}` });
    assert.equal(alive(dir), true);
    assert.equal(message.status, "error");
    assert.ok(message.content.includes(`gated refuses this call: ${DESTRUCTIVE}`), message.content);
    assert.match(message.content, /\(decision [0-9a-f-]{36}\)\./);
  });

  it("runs a harmless read", async () => {
    const message = await turn(guarded(liveClient()), "Read", { file_path: files.readme });
    assert.notEqual(message.status, "error");
    assert.equal(message.content, files.readmeText);
  });

  it("with gated stopped, blocks the delete and the read", async () => {
    const dir = await canary("lc-stopped");
    for (const [name, args] of [["Bash", { command: `rm -rf ${dir}` }], ["Read", { file_path: files.readme }]]) {
      const message = await turn(guarded(stoppedClient()), name, args);
      assert.equal(message.status, "error");
      assert.ok(message.content.includes(UNREACHABLE), message.content);
    }
    assert.equal(alive(dir), true);
  });
});
