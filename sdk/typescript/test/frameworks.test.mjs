// The framework guards' shared parts, without the frameworks (those run in
// test/frameworks, under make test-e2e): the reason a model reads, and the
// packaging that keeps the published package free of runtime dependencies.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, it } from "node:test";

import { blockedReason, decide, failureReason } from "../dist/frameworks.js";

const finding = (route, message, blocking = true) => ({ source: "catalog", code: "c", route, blocking, message });

describe("blockedReason", () => {
  it("quotes the blocking findings strictest first, at most three, with the decision id", () => {
    const reason = blockedReason({
      route: "refuse",
      execute: false,
      shadow: false,
      hard_blockers: ["a", "b", "c", "d", "e"],
      decision_id: "01a2",
      findings: [finding("ask", "a write needs confirmation."), finding("accept", "not blocking", false), finding("refuse", "recursive deletes are not run"), finding("defer", "needs evidence"), finding("ask", "approval always"), finding("ask", "risk level 2")],
    });
    assert.equal(reason, "gated refuses this call: recursive deletes are not run; needs evidence; a write needs confirmation; and 2 more (decision 01a2).");
  });

  it("names the route of an ask and a defer, and the approval a person can grant", () => {
    const ask = blockedReason({ route: "ask", execute: false, shadow: false, hard_blockers: ["x"], decision_id: "d1", findings: [finding("ask", "confirm")], approval: { id: "ap", status: "pending", url: "https://gated/approvals/ap" } });
    assert.equal(ask, "gated needs a person to approve this call: confirm; a person can approve it at https://gated/approvals/ap, and the same call then runs once (decision d1).");
    const defer = blockedReason({ route: "defer", execute: false, shadow: false, hard_blockers: ["tool_not_in_catalog"], decision_id: "d2" }, "approval_timeout");
    assert.equal(defer, "gated defers this call to a person: tool_not_in_catalog; waiting for that approval ended: approval_timeout (decision d2).");
  });

  it("keeps control characters of a finding out of the sentence", () => {
    const reason = blockedReason({ route: "refuse", execute: false, shadow: false, hard_blockers: [], decision_id: "d", findings: [finding("refuse", "line\none\u0007")] });
    assert.equal(reason, "gated refuses this call: line one (decision d).");
  });

  it("says what failed for a refusal the SDK made up", () => {
    const reason = blockedReason({ route: "refuse", execute: false, shadow: false, hard_blockers: ["gated_timeout"], error: "gated did not answer within 5 ms." });
    assert.equal(reason, "gated could not check this call, so it is blocked: gated_timeout: gated did not answer within 5 ms.");
  });

  it("failureReason reads anything thrown", () => {
    assert.equal(failureReason(new TypeError("bad")), "gated could not check this call, so it is blocked: bad");
    assert.equal(failureReason(7), "gated could not check this call, so it is blocked: 7");
    assert.equal(failureReason({ toString() { throw new Error("no"); } }), "gated could not check this call, so it is blocked: an unreadable error");
  });
});

describe("decide", () => {
  const fields = { tool_category: "write", authorization_state: "authenticated", risk_domain: "devops" };
  it("never rejects: a client that throws, event fields that throw, arguments that are not JSON all block", async () => {
    const throwing = { guard: () => { throw new Error("boom"); } };
    for (const [client, options, args] of [
      [throwing, { event: fields }, {}],
      [{ guard: () => async () => {} }, { event: () => { throw new Error("no fields"); } }, {}],
      [{ guard: () => async () => {} }, { event: () => null }, {}],
    ]) {
      const verdict = await decide(client, "Bash", args, options);
      assert.equal(verdict.run, false);
      assert.match(verdict.reason, /^gated could not check this call, so it is blocked: /);
    }
  });

  it("runs only when the guard resolves", async () => {
    const verdict = await decide({ guard: () => async () => {} }, "Bash", { command: "ls" }, { event: fields });
    assert.deepEqual(verdict, { run: true, reason: "", decision: undefined });
  });
});

describe("framework packaging", () => {
  it("the framework modules import nothing but the package's own files", async () => {
    for (const file of ["frameworks.js", "opencode.js", "opencode-tools.js", "frameworks.d.ts", "opencode.d.ts"]) {
      const text = await readFile(new URL(`../dist/${file}`, import.meta.url), "utf8");
      const specifiers = [...text.matchAll(/\bfrom\s+["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']|\brequire\s*\(\s*["']([^"']+)["']|^\s*import\s+["']([^"']+)["']/gm)].map((m) => m.slice(1).find(Boolean));
      for (const s of specifiers) assert.match(s, /^\.\/[a-z-]+\.js$/, `dist/${file} imports ${s}`);
    }
  });

  it("the OpenCode module exports only its plugin, since OpenCode calls every export", async () => {
    assert.deepEqual(Object.keys(await import("../dist/opencode.js")), ["default"]);
  });

  it("package.json exports the framework guards and the OpenCode plugin as subpaths", async () => {
    const pkg = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8"));
    assert.deepEqual(pkg.exports["./frameworks"], { types: "./dist/frameworks.d.ts", default: "./dist/frameworks.js" });
    assert.deepEqual(pkg.exports["./opencode"], { types: "./dist/opencode.d.ts", default: "./dist/opencode.js" });
    assert.equal(pkg.dependencies, undefined);
  });
});

describe("OpenCode example", () => {
  it("examples/opencode/opencode.json names this package's plugin, with gated's URL as its option", async () => {
    const repo = new URL("../../../", import.meta.url);
    const config = JSON.parse(await readFile(new URL("examples/opencode/opencode.json", repo), "utf8"));
    assert.equal(config.plugin.length, 1);
    const [spec, options] = config.plugin[0];
    assert.deepEqual(options, { url: "http://127.0.0.1:8080" });
    assert.ok(spec.startsWith("file:///path/to/gated/"), spec);
    const plugin = await import(spec.replace("file:///path/to/gated/", repo.href));
    assert.deepEqual(Object.keys(plugin), ["default"]);
    assert.equal(typeof plugin.default, "function");
  });
});
