// copilotPreToolUse(): the GitHub Copilot SDK's onPreToolUse handler, run
// against a real gated (the "copilot" vectors of sdk/testdata/vectors.json),
// every failure vector injected for real, and errors nobody planned for. The
// handler must never reject: the Copilot SDK runs the tool when it does.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";

import { copilotPreToolUse, createClient, GatedError } from "../dist/index.js";
import { brokenProxy, injectFault, loadVectors, recordingProxy, startGated } from "./harness.mjs";

const vectors = await loadVectors();
const DENY_PREFIX = "gated could not check this call, so it is blocked: ";

let gated;
before(async () => {
  gated = await startGated(vectors.serve_args);
});
after(async () => {
  await gated?.stop();
});

const validClient = (extra = {}) => createClient({ baseUrl: gated.baseUrl, token: vectors.tokens.valid, ...extra });

// A call the catalog allows, for the failures: a failure must deny whatever gated would have said.
const allowed = vectors.copilot.calls.find((c) => c.want.permissionDecision === "allow");

// Runs the handler and checks that it resolved (never rejected) with exactly the two fields.
async function run(handler, input, invocation) {
  const out = await handler(input, invocation);
  assert.deepEqual(Object.keys(out).sort(), ["permissionDecision", "permissionDecisionReason"]);
  assert.equal(typeof out.permissionDecisionReason, "string");
  return out;
}

async function assertDenied(handler, input, invocation, reasonContains) {
  const out = await run(handler, input, invocation);
  assert.equal(out.permissionDecision, "deny", `expected deny, got ${JSON.stringify(out)}`);
  assert.ok(out.permissionDecisionReason.includes(reasonContains), `reason ${JSON.stringify(out.permissionDecisionReason)} lacks ${reasonContains}`);
  return out;
}

describe("copilot vectors", () => {
  for (const v of vectors.copilot.calls) {
    it(v.name, async () => {
      const out = await run(copilotPreToolUse(validClient()), v.input, v.invocation);
      assert.equal(out.permissionDecision, v.want.permissionDecision, out.permissionDecisionReason);
      if (v.want.reason_contains !== undefined) assert.ok(out.permissionDecisionReason.includes(v.want.reason_contains), out.permissionDecisionReason);
    });
  }

  it("the TypeScript SDK's form (workingDirectory, a Date timestamp) decides alike", async () => {
    for (const v of vectors.copilot.calls) {
      const { cwd, timestamp, ...rest } = v.input;
      const out = await run(copilotPreToolUse(validClient()), { ...rest, timestamp: new Date(timestamp), workingDirectory: cwd }, v.invocation);
      assert.equal(out.permissionDecision, v.want.permissionDecision, `${v.name}: ${out.permissionDecisionReason}`);
    }
  });
});

describe("copilot failures", () => {
  for (const v of vectors.failures) {
    it(`${v.name} denies`, async () => {
      const { options, close } = await injectFault(v, vectors, gated.baseUrl);
      try {
        await assertDenied(copilotPreToolUse(createClient(options)), allowed.input, allowed.invocation, v.copilot_reason);
      } finally {
        await close();
      }
    });
  }

  it("a failure of the exchange names its blocker after the fixed sentence", async () => {
    const failure = vectors.failures.find((v) => v.fault === "refused");
    const { options, close } = await injectFault(failure, vectors, gated.baseUrl);
    try {
      const out = await assertDenied(copilotPreToolUse(createClient(options)), allowed.input, allowed.invocation, "gated_unreachable");
      assert.ok(out.permissionDecisionReason.startsWith(`${DENY_PREFIX}gated_unreachable: `), out.permissionDecisionReason);
    } finally {
      await close();
    }
  });

  for (const [label, body] of [
    ["an unknown permissionDecision", '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"maybe"}}'],
    ["no hookSpecificOutput", '{"route":"accept","execute":true}'],
    ["a reason that is not a string", '{"hookSpecificOutput":{"permissionDecision":"allow","permissionDecisionReason":7}}'],
    ["JSON that is not an object", '["allow"]'],
  ]) {
    it(`an answer with ${label} denies as gated_bad_answer`, async () => {
      const server = await brokenProxy(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      try {
        const out = await assertDenied(copilotPreToolUse(createClient({ baseUrl: server.baseUrl })), allowed.input, allowed.invocation, "gated_bad_answer");
        assert.ok(out.permissionDecisionReason.startsWith(DENY_PREFIX));
      } finally {
        await server.close();
      }
    });
  }
});

describe("copilot request", () => {
  it("posts the Copilot call to /v1/hooks/copilot with the token and shadow mode", async () => {
    const proxy = await recordingProxy(gated.baseUrl);
    try {
      const client = createClient({ baseUrl: proxy.baseUrl, token: vectors.tokens.valid, shadow: true });
      await run(copilotPreToolUse(client), { sessionId: "", workingDirectory: "/w", cwd: "/ignored", timestamp: new Date(), toolName: "Read", toolArgs: { file_path: "a" } }, { sessionId: "inv-1" });
      const [request] = proxy.requests;
      assert.match(request.head, /^POST \/v1\/hooks\/copilot\?shadow_mode=true HTTP\/1\.1\r\n/);
      assert.match(request.head, new RegExp(`\r\nauthorization: Bearer ${vectors.tokens.valid}(\r\n|$)`, "i"));
      assert.deepEqual(JSON.parse(request.body), {
        hook_event_name: "PreToolUse",
        session_id: "inv-1",
        cwd: "/w",
        tool_name: "Read",
        tool_input: { file_path: "a" },
      });
    } finally {
      await proxy.close();
    }
  });

  for (const [label, toolArgs, want] of [
    ["no arguments", undefined, {}],
    ["null", null, {}],
    ["a string", "ls -l", { input: "ls -l" }],
    ["an array", [1, 2], { input: [1, 2] }],
    ["a number", 0, { input: 0 }],
  ]) {
    it(`sends toolArgs of ${label} as tool_input ${JSON.stringify(want)}`, async () => {
      const calls = [];
      const handler = copilotPreToolUse({
        async hook(runtime, input) {
          calls.push([runtime, input]);
          return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask", permissionDecisionReason: "why" } };
        },
      });
      const out = await run(handler, { sessionId: "s", cwd: "/c", toolName: "t", toolArgs }, { sessionId: "other" });
      assert.deepEqual(out, { permissionDecision: "ask", permissionDecisionReason: "why" });
      assert.deepEqual(calls, [["copilot", { hook_event_name: "PreToolUse", session_id: "s", cwd: "/c", tool_name: "t", tool_input: want }]]);
    });
  }

  it("hook() rejects with a GatedError naming the blocker", async () => {
    const client = createClient({ baseUrl: gated.baseUrl, token: vectors.tokens.valid });
    const answer = await client.hook("copilot", { hook_event_name: "PreToolUse", session_id: "s", cwd: "/", tool_name: "Read", tool_input: { file_path: "x" } });
    assert.equal(answer.hookSpecificOutput.permissionDecision, "allow");
    const server = await brokenProxy("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    try {
      await assert.rejects(createClient({ baseUrl: server.baseUrl }).hook("copilot", {}), (err) => err instanceof GatedError && err.blocker === "gated_http_503" && err.message.startsWith("gated_http_503: "));
    } finally {
      await server.close();
    }
  });
});

describe("copilot never rejects", () => {
  const input = { sessionId: "s", cwd: "/", toolName: "Read", toolArgs: { file_path: "x" } };
  for (const [label, client] of [
    ["hook throws synchronously", { hook: () => { throw new Error("boom"); } }],
    ["hook rejects with a non-Error", { hook: async () => { throw 42; } }],
    ["hook resolves with nothing", { hook: async () => undefined }],
    ["hook resolves with an unknown decision", { hook: async () => ({ hookSpecificOutput: { permissionDecision: "yes" } }) }],
    ["hook throws something unprintable", { hook: async () => { throw { toString() { throw new Error("no"); } }; } }],
  ]) {
    it(`denies when ${label}`, async () => {
      const out = await assertDenied(copilotPreToolUse(client), input, { sessionId: "s" }, DENY_PREFIX);
      assert.ok(out.permissionDecisionReason.startsWith(DENY_PREFIX));
    });
  }

  it("denies when the transport fails in a way nobody planned for", async () => {
    const realFetch = globalThis.fetch;
    globalThis.fetch = async () => ({
      get status() {
        throw new RangeError("the response fell apart");
      },
    });
    try {
      await assertDenied(copilotPreToolUse(validClient()), input, { sessionId: "s" }, "the response fell apart");
    } finally {
      globalThis.fetch = realFetch;
    }
  });

  it("denies arguments that cannot be encoded as JSON", async () => {
    await assertDenied(copilotPreToolUse(validClient()), { ...input, toolArgs: { n: 1n } }, { sessionId: "s" }, "gated_bad_answer");
  });

  for (const [label, bad] of [
    ["no input", undefined],
    ["a null input", null],
    ["a string input", "Read"],
  ]) {
    it(`denies ${label}`, async () => {
      await assertDenied(copilotPreToolUse(validClient()), bad, undefined, DENY_PREFIX);
    });
  }

  it("refuses, at once, to be built without a client", () => {
    assert.throws(() => copilotPreToolUse(), TypeError);
    assert.throws(() => copilotPreToolUse({ baseUrl: "http://127.0.0.1" }), TypeError);
  });
});

describe("copilot packaging", () => {
  it("the Copilot SDK is a dev dependency only, and dist/ does not import it", async () => {
    const pkg = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8"));
    assert.equal(pkg.dependencies, undefined);
    assert.equal(pkg.peerDependencies, undefined);
    assert.equal(typeof pkg.devDependencies["@github/copilot-sdk"], "string");
    for (const file of ["index.js", "index.d.ts"]) {
      const text = await readFile(new URL(`../dist/${file}`, import.meta.url), "utf8");
      // No module specifier at all: no import ... from "...", import("..."), require("...").
      assert.doesNotMatch(text, /\bfrom\s+["']|\bimport\s*\(\s*["']|\brequire\s*\(|^\s*import\s+["']/m, `dist/${file} imports a module`);
    }
  });
});
