// The Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`): canUseTool and a
// PreToolUse hook callback, called with the inputs the SDK defines
// (types-check.ts checks them against the SDK's own types), against a real
// gated. The SDK's agent loop runs the Claude Code binary (~370 MB): that
// end-to-end proof belongs to the real-client suite (test/real-clients).
// Here, a tool runs exactly when the callback's answer would let the SDK
// run it.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";

import { claudeAgentCanUseTool, claudeAgentPreToolUse } from "../../dist/frameworks.js";
import { alive, canary, DESTRUCTIVE, files, gated, runBash, runRead, stoppedClient, UNREACHABLE } from "./common.mjs";
import { createClient } from "../../dist/index.js";

const TOOLS = { Bash: runBash, Read: runRead };

const live = () => createClient({ baseUrl: gated.live.baseUrl });

// As the SDK does with canUseTool's answer: allow runs the tool with updatedInput, deny runs nothing.
async function viaCanUseTool(canUseTool, toolName, input) {
  const answer = await canUseTool(toolName, input, { signal: new AbortController().signal, suggestions: [], toolUseID: "toolu_01" });
  if (answer.behavior === "allow") return { answer, output: await TOOLS[toolName](answer.updatedInput) };
  return { answer };
}

// As the SDK does with a PreToolUse hook's answer (the session runs in bypassPermissions mode, so only the hook is in the way).
async function viaHook(hook, toolName, input) {
  const hookInput = {
    hook_event_name: "PreToolUse",
    session_id: "0c4a3b6e-5b9e-4d8a-9f1e-2a7c1d3e4f50",
    transcript_path: join(files.workspace, "transcript.jsonl"),
    cwd: files.workspace,
    permission_mode: "bypassPermissions",
    tool_name: toolName,
    tool_input: input,
    tool_use_id: "toolu_01",
  };
  const answer = await hook(hookInput, "toolu_01", { signal: new AbortController().signal });
  if (answer.hookSpecificOutput?.permissionDecision === "deny") return { answer };
  return { answer, output: await TOOLS[toolName](input) };
}

describe("Claude Agent SDK canUseTool", () => {
  it("a callback that allows runs the scripted delete (positive control)", async () => {
    const dir = await canary("cas-control");
    await viaCanUseTool(async (_name, input) => ({ behavior: "allow", updatedInput: input }), "Bash", { command: `rm -rf ${dir}` });
    assert.equal(alive(dir), false);
  });

  it("denies a recursive delete outside the workspace with gated's reason; the canary survives", async () => {
    const dir = await canary("cas-delete");
    const { answer } = await viaCanUseTool(claudeAgentCanUseTool(live(), { cwd: files.workspace }), "Bash", { command: `rm -rf ${dir}` });
    assert.equal(alive(dir), true);
    assert.equal(answer.behavior, "deny");
    assert.ok(answer.message.startsWith(`gated refuses this call: ${DESTRUCTIVE}`), answer.message);
    assert.match(answer.message, /\(decision [0-9a-f-]{36}\)\.$/);
  });

  it("allows a harmless read, and a shell line that only reads in the workspace", async () => {
    const canUseTool = claudeAgentCanUseTool(live(), { cwd: files.dir });
    const read = await viaCanUseTool(canUseTool, "Read", { file_path: files.readme });
    assert.deepEqual(read.answer, { behavior: "allow", updatedInput: { file_path: files.readme } });
    assert.equal(read.output, files.readmeText);
    const cat = await viaCanUseTool(canUseTool, "Bash", { command: `cat ${files.readme}` });
    assert.equal(cat.answer.behavior, "allow", cat.answer.message);
    assert.equal(cat.output, files.readmeText);
  });

  it("denies an ask: a write that needs a person", async () => {
    const { answer } = await viaCanUseTool(claudeAgentCanUseTool(live(), { cwd: files.workspace }), "Write", { file_path: join(files.workspace, "a.txt"), content: "x" });
    assert.equal(answer.behavior, "deny");
    assert.match(answer.message, /^gated asks you to approve this call/);
    assert.ok(answer.message.endsWith(" The Claude Agent SDK cannot put gated's question to a person, so the call is blocked."), answer.message);
  });

  it("with gated stopped, denies the delete and the read", async () => {
    const dir = await canary("cas-stopped");
    const canUseTool = claudeAgentCanUseTool(stoppedClient(), { cwd: files.workspace });
    for (const [name, input] of [["Bash", { command: `rm -rf ${dir}` }], ["Read", { file_path: files.readme }]]) {
      const { answer } = await viaCanUseTool(canUseTool, name, input);
      assert.equal(answer.behavior, "deny");
      assert.ok(answer.message.startsWith(UNREACHABLE), answer.message);
    }
    assert.equal(alive(dir), true);
  });
});

describe("Claude Agent SDK PreToolUse hook", () => {
  it("denies a recursive delete outside the workspace with gated's reason; the canary survives", async () => {
    const dir = await canary("cah-delete");
    const { answer } = await viaHook(claudeAgentPreToolUse(live()), "Bash", { command: `rm -rf ${dir}` });
    assert.equal(alive(dir), true);
    assert.equal(answer.hookSpecificOutput.hookEventName, "PreToolUse");
    assert.equal(answer.hookSpecificOutput.permissionDecision, "deny");
    assert.ok(answer.hookSpecificOutput.permissionDecisionReason.includes(DESTRUCTIVE));
  });

  it("allows a harmless read", async () => {
    const { answer, output } = await viaHook(claudeAgentPreToolUse(live()), "Read", { file_path: files.readme });
    assert.equal(answer.hookSpecificOutput.permissionDecision, "allow");
    assert.equal(output, files.readmeText);
  });

  it("with gated stopped, denies", async () => {
    const dir = await canary("cah-stopped");
    const { answer } = await viaHook(claudeAgentPreToolUse(stoppedClient()), "Bash", { command: `rm -rf ${dir}` });
    assert.equal(alive(dir), true);
    assert.ok(answer.hookSpecificOutput.permissionDecisionReason.startsWith(UNREACHABLE));
  });

  it("answers other events with nothing, and a broken input with deny", async () => {
    const hook = claudeAgentPreToolUse(live());
    assert.deepEqual(await hook({ hook_event_name: "PostToolUse", tool_name: "Bash" }, "t", { signal: new AbortController().signal }), {});
    const broken = await hook(null, "t", { signal: new AbortController().signal });
    assert.equal(broken.hookSpecificOutput.permissionDecision, "deny");
  });
});
