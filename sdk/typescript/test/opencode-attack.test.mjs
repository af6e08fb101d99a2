// Attacks on the OpenCode plugin's mapping of OpenCode's tools onto Claude
// Code's, against a real gated serving the Claude Code catalog. OpenCode
// hands the plugin the model's arguments as sent: its AI SDK tools take a
// JSON schema with no validator, and each tool's zod parse only checks
// them, so a key OpenCode does not read reaches the plugin beside the one
// it does.
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import plugin from "../dist/opencode.js";
import { openCodeToClaudeCode } from "../dist/opencode-tools.js";
import { startGated } from "./harness.mjs";

const catalogDir = new URL("../../../examples/claude-code/catalog", import.meta.url).pathname;
let live, workspace;

before(async () => {
  live = await startGated(["--catalog", catalogDir]);
  workspace = await mkdtemp(join(tmpdir(), "gated-opencode-attack-"));
  await writeFile(join(workspace, "README.md"), "readme");
});

after(async () => {
  await live?.stop();
  if (workspace) await rm(workspace, { recursive: true, force: true });
});

async function blocked(tool, args) {
  const hooks = await plugin({ directory: workspace, worktree: workspace }, { url: live.baseUrl });
  try {
    await hooks["tool.execute.before"]({ tool, sessionID: "ses_01", callID: "call_01" }, { args });
  } catch (err) {
    return err.message;
  }
  return undefined;
}

describe("OpenCode plugin, attacked", () => {
  // OpenCode reads filePath (.env); Claude Code's file_path beside it was
  // what gated was asked about.
  it("refuses a read whose filePath and file_path differ", async () => {
    const reason = await blocked("read", { filePath: join(workspace, ".env"), file_path: join(workspace, "README.md") });
    assert.match(reason ?? "ran", /file_path twice/);
  });

  // OpenCode's grep filters files by include (.env); glob beside it was what gated was asked about.
  it("refuses a grep whose include and glob differ", async () => {
    const reason = await blocked("grep", { pattern: "KEY", include: ".env", glob: "*.md" });
    assert.match(reason ?? "ran", /glob twice/);
  });

  it("refuses an edit inside multiedit whose oldString and old_string differ", () => {
    assert.throws(
      () => openCodeToClaudeCode("multiedit", { filePath: "/w/a", edits: [{ oldString: "a", old_string: "b", newString: "c" }] }),
      /old_string twice/,
    );
  });

  // The controls: the same name twice with one value is one argument, and the harmless read runs.
  it("takes both names with one value as one, and allows the harmless read", async () => {
    const readme = join(workspace, "README.md");
    assert.deepEqual(openCodeToClaudeCode("read", { filePath: readme, file_path: readme }), { tool_name: "Read", tool_input: { file_path: readme } });
    assert.equal(await blocked("read", { filePath: readme }), undefined);
    assert.match((await blocked("read", { filePath: join(workspace, ".env") })) ?? "ran", /secret/);
  });
});
