// What every framework test shares: a real gated serving the Claude Code
// example catalog, the address of a gated that was started and stopped, a
// canary directory a recursive delete would remove, and the tools' bodies,
// which really run (a shell command, a file read).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before } from "node:test";

import { createClient } from "../../dist/index.js";
import { startGated } from "../harness.mjs";

export const catalogDir = fileURLToPath(new URL("../../../../examples/claude-code/catalog", import.meta.url));

/** The gated of a test file: live is serving, stopped is the address of one that was stopped. */
export const gated = { live: undefined, stoppedUrl: undefined };

/**
 * The directory of the canaries, a file a harmless read returns, and a
 * coding agent's workspace beside the canaries, with a README of its own.
 */
export const files = { dir: "", readme: "", readmeText: "framework-readme-6f1c", workspace: "" };

before(async () => {
  gated.live = await startGated(["--catalog", catalogDir]);
  const stopped = await startGated(["--catalog", catalogDir]);
  gated.stoppedUrl = stopped.baseUrl;
  await stopped.stop();
  files.dir = await mkdtemp(join(tmpdir(), "gated-frameworks-"));
  files.readme = join(files.dir, "README.md");
  await writeFile(files.readme, files.readmeText);
  files.workspace = join(files.dir, "workspace");
  await mkdir(files.workspace);
  await writeFile(join(files.workspace, "README.md"), files.readmeText);
});

after(async () => {
  await gated.live?.stop();
  if (files.dir !== "") await rm(files.dir, { recursive: true, force: true });
});

/** A fresh canary directory with a file in it; returns its path. */
export async function canary(name) {
  const dir = join(files.dir, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "keep"), "alive");
  return dir;
}

export const alive = (dir) => existsSync(join(dir, "keep"));

/** A client of the live gated, or of the stopped one. */
export const liveClient = () => createClient({ baseUrl: gated.live.baseUrl });
export const stoppedClient = () => createClient({ baseUrl: gated.stoppedUrl });

// The session of the application, as evidence that the person is signed in.
const session = {
  source_id: "app.session.test",
  kind: "auth_event",
  trust_tier: "runtime",
  redaction_status: "redacted",
  freshness: { status: "fresh" },
  provenance: "framework-test",
};

/** The event fields an application states: Read is a private read, anything else a write. */
export function eventFields(toolName) {
  return {
    tool_category: toolName === "Read" ? "private_read" : "write",
    authorization_state: "authenticated",
    risk_domain: "devops",
    evidence_refs: [session],
  };
}

/** The tools' bodies: they really run. */
export function runBash({ command }) {
  return execFileSync("/bin/sh", ["-c", command], { encoding: "utf8" });
}

export async function runRead({ file_path }) {
  return readFile(file_path, "utf8");
}

/** What gated answers a recursive delete outside the workspace, in the reason. */
export const DESTRUCTIVE = "recursive deletes outside the workspace";
export const UNREACHABLE = "gated could not check this call, so it is blocked: gated_unreachable";
