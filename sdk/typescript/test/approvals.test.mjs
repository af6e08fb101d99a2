// The approvals vectors (sdk/testdata/vectors.json, section approvals):
// guard(tool, fields, { waitForApprovalMs }) against a real gated with
// approvals (PostgreSQL and tokens), the approver being this test with plain
// HTTP.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";

import { BlockedError, createClient } from "../dist/index.js";
import { approverCall, loadVectors, pendingHas, startApprovalsGated } from "./harness.mjs";

const vectors = await loadVectors();
const A = vectors.approvals;

async function runCase(c, gated) {
  const want = c.want;
  const event = { ...A.event, agent_id: `sdk-typescript-${randomBytes(8).toString("hex")}` };
  const { proposed_arguments: args, ...fields } = event;

  const seen = [];
  let reported;
  const firstReported = new Promise((resolve) => {
    reported = resolve;
  });
  const client = createClient({
    baseUrl: gated.baseUrl,
    token: vectors.tokens[A.requester_token],
    onDecision: (d) => {
      seen.push(d);
      reported();
    },
  });
  const ran = [];
  const sendEmail = client.guard(
    async (a) => {
      ran.push(a);
      return "sent";
    },
    fields,
    { waitForApprovalMs: c.wait_ms },
  );
  const call = sendEmail(args).then(
    (result) => ({ result }),
    (error) => ({ error }),
  );
  const early = await Promise.race([firstReported.then(() => undefined), call]);
  assert.equal(early, undefined, `guard ended without reporting a decision: ${early?.error ?? early?.result}`);

  const first = seen[0];
  assert.equal(first.route, "ask");
  const approval = first.approval;
  assert.equal(typeof approval, "object", "the ask carries no approval");
  assert.equal(approval.status, "pending");
  assert.equal(typeof approval.id, "string");
  assert.equal(typeof approval.url, "string");
  assert.equal(typeof approval.evidence_ref, "object");
  assert.ok(await pendingHas(vectors, gated.baseUrl, approval.id), `approval ${approval.id} is not in the approver's pending list`);

  switch (c.approver) {
    case "approve":
    case "deny": {
      const { status, answer } = await approverCall(vectors, gated.baseUrl, "POST", `/v1/approvals/${encodeURIComponent(approval.id)}/${c.approver}`, {
        reason: c.reason,
      });
      assert.equal(status, 200, JSON.stringify(answer));
      assert.equal(answer.status, { approve: "approved", deny: "denied" }[c.approver]);
      break;
    }
    case "kill_gated":
      await gated.kill();
      break;
    case "nothing":
      break;
    default:
      throw new Error(`unknown approver action ${c.approver}`);
  }

  const outcome = await call;
  assert.deepEqual(
    seen.map((d) => d.route),
    want.decisions,
  );
  let final;
  if (want.tool_runs) {
    assert.equal(outcome.error, undefined, `the tool did not run: ${outcome.error}`);
    assert.equal(outcome.result, "sent");
    assert.deepEqual(ran, [args]);
    final = seen.at(-1);
  } else {
    assert.ok(outcome.error instanceof BlockedError, `want a BlockedError, got ${outcome.error ?? outcome.result}`);
    assert.deepEqual(ran, []);
    assert.equal(outcome.error.reason, want.reason);
    assert.match(outcome.error.message, new RegExp(want.reason));
    assert.equal(outcome.error.decision, seen.at(-1));
    final = outcome.error.decision;
  }
  assert.equal(final.route, want.route);
  assert.equal(final.execute, want.execute);
  if (want.hard_blockers !== undefined) assert.deepEqual(final.hard_blockers, want.hard_blockers);
  if (want.status_after !== undefined) {
    const { status, answer } = await approverCall(vectors, gated.baseUrl, "GET", `/v1/approvals/${encodeURIComponent(approval.id)}`);
    assert.equal(status, 200, JSON.stringify(answer));
    assert.equal(answer.status, want.status_after);
  }
}

describe("approvals", () => {
  // Shared by the cases that do not kill gated.
  let shared;
  before(async () => {
    shared = await startApprovalsGated(vectors);
  });
  after(async () => {
    await shared?.stop();
  });

  for (const c of A.cases) {
    it(c.name, async () => {
      const own = c.approver === "kill_gated";
      const gated = own ? await startApprovalsGated(vectors) : shared;
      try {
        await runCase(c, gated);
      } finally {
        if (own) await gated.stop();
      }
    });
  }
});
