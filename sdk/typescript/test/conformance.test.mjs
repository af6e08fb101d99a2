// The shared conformance vectors (sdk/testdata/vectors.json), every one run
// through both check() and guard() against a real gated or a real fault.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { BlockedError, createClient } from "../dist/index.js";
import { injectFault, loadVectors, startGated } from "./harness.mjs";

const vectors = await loadVectors();

// One gated for the whole file, started before any vector runs.
let gated;

// Calls a guarded tool the way a runtime would and reports what happened.
async function runGuarded(client, event) {
  const { proposed_arguments: args, ...fields } = event;
  let ran = false;
  const tool = client.guard(
    async (a) => {
      ran = true;
      return { echoed: a };
    },
    fields,
  );
  try {
    const result = await tool(args);
    return { ran, result };
  } catch (error) {
    return { ran, error };
  }
}

function assertBlocked(outcome, route, hardBlockers) {
  assert.equal(outcome.ran, false, "the tool ran although gated did not allow it");
  assert.ok(outcome.error instanceof BlockedError, `expected a BlockedError, got ${outcome.error}`);
  assert.equal(outcome.error.decision.route, route);
  assert.equal(outcome.error.decision.execute, false);
  assert.deepEqual(outcome.error.decision.hard_blockers, hardBlockers);
  assert.match(outcome.error.message, new RegExp(`route ${route}`));
}

const fault = (v) => injectFault(v, vectors, gated.baseUrl);

// Any valid event: a failure must block whatever gated would have said.
const acceptedEvent = vectors.checks[0].event;

describe("conformance", () => {
  before(async () => {
    gated = await startGated(vectors.serve_args);
  });
  after(async () => {
    await gated?.stop();
  });

  describe("checks", () => {
    for (const v of vectors.checks) {
      const clientFor = (onDecision) =>
        createClient({ baseUrl: gated.baseUrl, token: vectors.tokens.valid, shadow: v.shadow === true, onDecision });

      it(`check: ${v.name}`, async () => {
        const seen = [];
        const d = await clientFor((decision) => seen.push(decision)).check(v.event);
        assert.deepEqual(seen, [], "check() does not call onDecision");
        assert.equal(d.route, v.want.route);
        assert.equal(d.execute, v.want.execute);
        assert.deepEqual(d.hard_blockers, v.want.hard_blockers);
        if (v.want.shadow !== undefined) assert.equal(d.shadow, v.want.shadow);
      });

      it(`guard: ${v.name}`, async () => {
        const seen = [];
        const outcome = await runGuarded(clientFor((d) => seen.push(d)), v.event);
        assert.equal(seen.length, 1, "onDecision is called once per call");
        assert.equal(seen[0].route, v.want.route);
        assert.deepEqual(seen[0].hard_blockers, v.want.hard_blockers);
        if (v.want.tool_runs) {
          assert.equal(outcome.ran, true, `the tool did not run: ${outcome.error}`);
          assert.deepEqual(outcome.result, { echoed: v.event.proposed_arguments });
        } else {
          assertBlocked(outcome, v.want.route, v.want.hard_blockers);
        }
      });
    }
  });

  describe("failures", () => {
    for (const v of vectors.failures) {
      it(`check: ${v.name}`, async () => {
        const { options, close } = await fault(v);
        try {
          const seen = [];
          const d = await createClient({ ...options, onDecision: (decision) => seen.push(decision) }).check(acceptedEvent);
          assert.deepEqual(seen, [], "check() does not call onDecision");
          assert.equal(d.route, "refuse");
          assert.equal(d.execute, false);
          assert.equal(d.shadow, false);
          assert.deepEqual(d.hard_blockers, [v.want_blocker]);
          assert.equal(typeof d.error, "string");
        } finally {
          await close();
        }
      });

      it(`guard: ${v.name}`, async () => {
        const { options, close } = await fault(v);
        try {
          const seen = [];
          const outcome = await runGuarded(createClient({ ...options, onDecision: (d) => seen.push(d) }), acceptedEvent);
          assertBlocked(outcome, "refuse", [v.want_blocker]);
          assert.deepEqual(seen, [outcome.error.decision]);
        } finally {
          await close();
        }
      });
    }
  });

  describe("shadow", () => {
    it("onDecision sees the would-be route while the tool runs", async () => {
      const seen = [];
      const client = createClient({ baseUrl: gated.baseUrl, token: vectors.tokens.valid, shadow: true, onDecision: (d) => seen.push(d) });
      let ran = false;
      const sendEmail = client.guard(
        async function send_email() {
          ran = true;
        },
        { tool_category: "write", authorization_state: "user_claimed", risk_domain: "customer_support", evidence_refs: ["draft_id:123"] },
      );
      await sendEmail({ to: "customer@example.com" });
      assert.equal(ran, true);
      assert.equal(seen.length, 1);
      assert.equal(seen[0].route, "ask");
      assert.equal(seen[0].shadow, true);
      assert.equal(seen[0].execute, true);
      assert.equal(typeof seen[0].decision_id, "string");
    });

    it("without shadow the same call is blocked", async () => {
      const client = createClient({ baseUrl: gated.baseUrl, token: vectors.tokens.valid });
      const sendEmail = client.guard(async function send_email() {}, {
        tool_category: "write",
        authorization_state: "user_claimed",
        risk_domain: "customer_support",
        evidence_refs: ["draft_id:123"],
      });
      await assert.rejects(sendEmail({ to: "customer@example.com" }), (err) => err instanceof BlockedError && err.decision.route === "ask");
    });
  });
});
