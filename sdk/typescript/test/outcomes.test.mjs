// The outcomes vectors (sdk/testdata/vectors.json, section outcomes):
// guard(tool, fields, { reportOutcome: true }) against a real gated with a
// decision store (PostgreSQL), the outcome read back with the reader token,
// and against one without, where every report fails and the tool's result
// still comes back.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { BlockedError, GatedError, createClient } from "../dist/index.js";
import { callAs, databaseUrl, loadVectors, startGated } from "./harness.mjs";

const vectors = await loadVectors();
const O = vectors.outcomes;

/** The error class the vectors' raising tool throws. */
class ToolError extends Error {}

describe("outcomes vectors", () => {
  let withStore;
  let withoutStore;
  before(async () => {
    withStore = await startGated([...vectors.serve_args, ...O.serve_args, "--database-url", databaseUrl(vectors)]);
    withoutStore = await startGated(vectors.serve_args);
  });
  after(async () => {
    await withStore?.stop();
    await withoutStore?.stop();
  });

  for (const c of O.cases) {
    it(c.name, async () => {
      const want = c.want;
      const gated = c.database === false ? withoutStore : withStore;
      const { proposed_arguments: args, ...fields } = c.event;
      const seen = [];
      const reportErrors = [];
      const ran = [];
      const raised = c.raises === undefined ? undefined : new ToolError(c.raises);
      const client = createClient({
        baseUrl: gated.baseUrl,
        token: vectors.tokens.valid,
        shadow: c.shadow === true,
        onDecision: (d) => seen.push(d),
      });
      const tool = client.guard(
        async (a) => {
          ran.push(a);
          if (raised !== undefined) throw raised;
          return c.returns;
        },
        fields,
        { reportOutcome: true, onOutcomeError: (e) => reportErrors.push(e) },
      );
      const settled = await tool(args).then(
        (result) => ({ result }),
        (error) => ({ error }),
      );

      if (want.blocked) {
        assert.ok(settled.error instanceof BlockedError, `want BlockedError, got ${settled.error ?? settled.result}`);
        assert.deepEqual(ran, []);
      } else if (raised !== undefined) {
        assert.equal(settled.error, raised, "guard did not reject with the tool's own error");
      } else {
        assert.equal(settled.error, undefined);
        assert.equal(settled.result, c.returns);
      }
      assert.equal(reportErrors.length, want.report_error ? 1 : 0, String(reportErrors));
      for (const e of reportErrors) assert.ok(e instanceof GatedError);
      if (gated === withoutStore) return;

      const id = seen.at(-1).decision_id;
      const { status, answer } = await callAs(vectors, O.reader_token, gated.baseUrl, "GET", `/v1/decisions/${encodeURIComponent(id)}`);
      assert.equal(status, 200, JSON.stringify(answer));
      if (want.outcome === null) {
        assert.equal(answer.outcome, undefined);
      } else {
        assert.equal(answer.outcome?.status, want.outcome.status, JSON.stringify(answer));
        assert.equal(answer.outcome.error_class, want.outcome.error_class?.typescript);
      }
      if (raised !== undefined) {
        assert.ok(!JSON.stringify(answer).includes(c.raises), "the tool's message reached the decision");
        assert.ok(!gated.logs().includes(c.raises), "the tool's message reached gated's logs");
      }
    });
  }
});
