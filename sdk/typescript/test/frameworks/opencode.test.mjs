// gated's OpenCode plugin (`@gatedhq/gated/opencode`): its
// tool.execute.before hook, called as OpenCode calls it (input {tool,
// sessionID, callID}, output {args} with OpenCode's argument names), against
// a real gated serving the Claude Code catalog. OpenCode runs a tool only
// when every tool.execute.before hook resolves; types-check.ts checks the
// plugin against @opencode-ai/plugin's Plugin type. Driving the real
// opencode binary belongs to the real-client suite (test/real-clients).
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";

import plugin from "../../dist/opencode.js";
import { openCodeToClaudeCode } from "../../dist/opencode-tools.js";
import { alive, canary, DESTRUCTIVE, files, gated, UNREACHABLE } from "./common.mjs";
import { execFileSync } from "node:child_process";
import { readFile } from "node:fs/promises";

// OpenCode's bash and read, as they would run once the hooks let them.
const TOOLS = {
  bash: ({ command, workdir }) => execFileSync("/bin/sh", ["-c", command], { encoding: "utf8", cwd: workdir ?? files.workspace }),
  read: ({ filePath }) => readFile(filePath, "utf8"),
};

// As OpenCode does: the hook may throw (blocked, the error goes to the model) or resolve (the tool runs).
async function execute(hooks, tool, args) {
  const output = { args };
  try {
    await hooks["tool.execute.before"]({ tool, sessionID: "ses_01", callID: "call_01" }, output);
  } catch (err) {
    return { blocked: err.message };
  }
  return { output: await TOOLS[tool](output.args) };
}

const live = () => plugin({ directory: files.workspace, worktree: files.workspace }, { url: gated.live.baseUrl });

describe("OpenCode plugin", () => {
  it("exports only the plugin, since OpenCode calls every export", async () => {
    assert.deepEqual(Object.keys(await import("../../dist/opencode.js")), ["default"]);
  });

  it("without the plugin, the scripted delete runs (positive control)", async () => {
    const dir = await canary("oc-control");
    await execute({ "tool.execute.before": async () => {} }, "bash", { command: `rm -rf ${dir}`, description: "delete" });
    assert.equal(alive(dir), false);
  });

  it("blocks a recursive delete outside the workspace by throwing gated's reason; the canary survives", async () => {
    const dir = await canary("oc-delete");
    const { blocked } = await execute(await live(), "bash", { command: `rm -rf ${dir}`, description: "delete" });
    assert.equal(alive(dir), true);
    assert.ok(blocked.startsWith(`gated refuses this call: ${DESTRUCTIVE}`), blocked);
  });

  it("runs a harmless read, and a shell line that only reads in the workspace", async () => {
    const hooks = await live();
    assert.deepEqual(await execute(hooks, "read", { filePath: files.readme }), { output: files.readmeText });
    assert.deepEqual(await execute(hooks, "bash", { command: "cat README.md", description: "read" }), { output: files.readmeText });
  });

  it("judges a bash workdir outside the workspace with no workspace: the read is not taken for harmless", async () => {
    const { blocked } = await execute(await live(), "bash", { command: "cat README.md", workdir: "/etc", description: "read" });
    assert.match(blocked ?? "", /^gated needs a person to approve this call, and OpenCode cannot ask/);
  });

  it("blocks a secret read under OpenCode's argument names", async () => {
    const { blocked } = await execute(await live(), "read", { filePath: join(files.workspace, ".env") });
    assert.match(blocked ?? "", /^gated refuses this call: /);
  });

  it("with gated stopped, blocks the delete and the read", async () => {
    const dir = await canary("oc-stopped");
    const hooks = await plugin({ directory: files.workspace }, { url: gated.stoppedUrl });
    for (const [tool, args] of [["bash", { command: `rm -rf ${dir}` }], ["read", { filePath: files.readme }]]) {
      const { blocked } = await execute(hooks, tool, args);
      assert.ok(blocked?.startsWith(UNREACHABLE), blocked);
    }
    assert.equal(alive(dir), true);
  });

  it("with a bad option, starts and blocks every call with the reason", async () => {
    for (const options of [{ url: "ftp://gated" }, { url: 8080 }, { timeoutMs: -1 }, { client: {} }]) {
      const { blocked } = await execute(await plugin({ directory: files.workspace }, options), "read", { filePath: files.readme });
      assert.ok(blocked?.startsWith("gated could not check this call, so it is blocked: "), `${JSON.stringify(options)}: ${blocked}`);
    }
  });
});

describe("OpenCode tools in Claude Code's words", () => {
  for (const [tool, args, want] of [
    ["bash", { command: "ls", timeout: 5, description: "d" }, { tool_name: "Bash", tool_input: { command: "ls", timeout: 5, description: "d" } }],
    ["read", { filePath: "/w/a", offset: 1, limit: 2 }, { tool_name: "Read", tool_input: { file_path: "/w/a", offset: 1, limit: 2 } }],
    ["write", { filePath: "/w/a", content: "x" }, { tool_name: "Write", tool_input: { file_path: "/w/a", content: "x" } }],
    ["edit", { filePath: "/w/a", oldString: "a", newString: "b", replaceAll: true }, { tool_name: "Edit", tool_input: { file_path: "/w/a", old_string: "a", new_string: "b", replace_all: true } }],
    ["multiedit", { filePath: "/w/a", edits: [{ oldString: "a", newString: "b" }] }, { tool_name: "MultiEdit", tool_input: { file_path: "/w/a", edits: [{ old_string: "a", new_string: "b" }] } }],
    ["glob", { pattern: "*.ts", path: "/w" }, { tool_name: "Glob", tool_input: { pattern: "*.ts", path: "/w" } }],
    ["grep", { pattern: "x", path: "/w", include: "*.env" }, { tool_name: "Grep", tool_input: { pattern: "x", path: "/w", glob: "*.env" } }],
    ["list", { path: "/w" }, { tool_name: "Glob", tool_input: { path: "/w", pattern: "*" } }],
    ["webfetch", { url: "https://example.com", format: "text" }, { tool_name: "WebFetch", tool_input: { url: "https://example.com", format: "text" } }],
    ["apply_patch", { patchText: "*** Begin Patch" }, { tool_name: "apply_patch", tool_input: { command: "*** Begin Patch" } }],
    ["task", { description: "d", prompt: "p", subagentType: "general" }, { tool_name: "Task", tool_input: { description: "d", prompt: "p", subagent_type: "general" } }],
    ["mcp_github_create_issue", { title: "t" }, { tool_name: "mcp_github_create_issue", tool_input: { title: "t" } }],
    ["bash", "ls", { tool_name: "Bash", tool_input: { input: "ls" } }],
    ["toString", undefined, { tool_name: "toString", tool_input: {} }],
  ]) {
    it(`${tool} ${JSON.stringify(args)}`, () => {
      assert.deepEqual(openCodeToClaudeCode(tool, args), want);
    });
  }
});
