// What the conformance vectors do not pin down: the request the client
// sends, guard()'s event defaults and its onDecision callback, option
// validation and hostile answers. Decisions come from a real gated; a
// recording proxy in front of it shows the request on the wire. Canned bytes
// (brokenProxy) are only for answers gated never gives.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { BlockedError, GatedError, createClient } from "../dist/index.js";
import { brokenProxy, loadVectors, recordingProxy, startGated } from "./harness.mjs";

const vectors = await loadVectors();
const token = vectors.tokens.valid;
const DECISION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// One gated for the whole file.
let gated;
before(async () => {
  gated = await startGated(vectors.serve_args);
});
after(async () => {
  await gated?.stop();
});

function answer(status, body, extraHeaders = "") {
  const payload = typeof body === "string" ? body : JSON.stringify(body);
  return (
    `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n` +
    `${extraHeaders}Connection: close\r\n\r\n${payload}`
  );
}

// gated accepts it (vector "public read is accepted").
const event = {
  tool_name: "search_docs",
  tool_category: "public_read",
  authorization_state: "none",
  evidence_refs: [],
  risk_domain: "research",
  proposed_arguments: { query: "q" },
  recommended_route: "accept",
};
const PUBLIC_READ = { tool_category: "public_read", authorization_state: "none", risk_domain: "research" };
// gated asks for confirmation (vector "claimed write asks").
const CLAIMED_WRITE = {
  tool_category: "write",
  authorization_state: "user_claimed",
  risk_domain: "customer_support",
  evidence_refs: ["draft_id:123"],
};
const ASK_BLOCKERS = [
  "high_risk_write_missing_explicit_confirmation",
  "write_missing_explicit_confirmation",
  "write_missing_validation_or_confirmation",
];

// Runs fn against a recording proxy in front of the real gated, then closes it.
async function withProxy(fn) {
  const proxy = await recordingProxy(gated.baseUrl);
  try {
    return await fn(proxy);
  } finally {
    await proxy.close();
  }
}

// Runs fn against a broken proxy answering raw bytes gated never sends, then closes it.
async function withBrokenProxy(raw, fn) {
  const server = await brokenProxy(raw);
  try {
    return await fn(server);
  } finally {
    await server.close();
  }
}

function headerOf(head, name) {
  return new RegExp(`\r\n${name}: ([^\r]*)`, "i").exec(head)?.[1];
}

describe("request", () => {
  it("posts the event as JSON with the bearer token", () =>
    withProxy(async (proxy) => {
      const d = await createClient({ baseUrl: proxy.baseUrl + "//", token }).check(event);
      assert.equal(d.route, "accept");
      assert.match(d.decision_id, DECISION_ID);
      const [req] = proxy.requests;
      assert.equal(proxy.requests.length, 1);
      assert.match(req.head, /^POST \/pre-tool-check HTTP\/1\.1\r\n/);
      assert.equal(headerOf(req.head, "authorization"), `Bearer ${token}`);
      assert.equal(headerOf(req.head, "content-type"), "application/json");
      assert.equal(headerOf(req.head, "accept"), "application/json");
      assert.deepEqual(JSON.parse(req.body), event);
      assert.match(proxy.answers[0], /^HTTP\/1\.1 200 OK\r\n/);
      assert.notEqual(headerOf(proxy.answers[0], "x-request-id"), undefined, "the answer is gated's");
    }));

  it("asks for shadow mode in the query", () =>
    withProxy(async (proxy) => {
      const client = createClient({ baseUrl: proxy.baseUrl, token, shadow: true });
      const d = await client.check({ ...event, ...CLAIMED_WRITE, tool_name: "send_email" });
      assert.deepEqual([d.route, d.execute, d.shadow], ["ask", true, true]);
      const [req] = proxy.requests;
      assert.match(req.head, /^POST \/pre-tool-check\?shadow_mode=true HTTP\/1\.1\r\n/);
    }));

  it("sends no token when there is none", () =>
    withProxy(async (proxy) => {
      // gated runs with --tokens, so it turns the call away.
      const d = await createClient({ baseUrl: proxy.baseUrl, shadow: true }).check(event);
      assert.deepEqual(d.hard_blockers, ["gated_http_401"]);
      const [req] = proxy.requests;
      assert.match(req.head, /^POST \/pre-tool-check\?shadow_mode=true HTTP\/1\.1\r\n/);
      assert.equal(headerOf(req.head, "authorization"), undefined);
    }));

  for (const [label, options] of [
    ["an empty token", { token: "" }],
    ["an undefined token", { token: undefined }],
  ]) {
    it(`sends no token for ${label}, as the Go client does`, () =>
      withProxy(async (proxy) => {
        // gated runs with --tokens, so it turns the call away.
        const d = await createClient({ baseUrl: proxy.baseUrl, ...options }).check(event);
        assert.deepEqual(d.hard_blockers, ["gated_http_401"]);
        assert.equal(proxy.requests.length, 1);
        const [req] = proxy.requests;
        assert.match(req.head, /^POST \/pre-tool-check HTTP\/1\.1\r\n/);
        assert.equal(headerOf(req.head, "authorization"), undefined);
        assert.doesNotMatch(req.head, /\r\nauthorization:/i);
      }));
  }

  it("keeps a base path", () =>
    withProxy(async (proxy) => {
      const d = await createClient({ baseUrl: proxy.baseUrl + "/gated/", token }).check(event);
      assert.match(proxy.requests[0].head, /^POST \/gated\/pre-tool-check HTTP/);
      // The proxy forwards the path unchanged and gated serves no /gated/ prefix.
      assert.deepEqual(d.hard_blockers, ["gated_http_404"]);
    }));
});

describe("guard", () => {
  it("builds the event from the tool's name, its arguments and the defaults", () =>
    withProxy(async (proxy) => {
      const client = createClient({ baseUrl: proxy.baseUrl, token });
      const searchDocs = client.guard(async function search_docs({ query }) {
        return `found ${query}`;
      }, { tool_category: "public_read", authorization_state: "none", risk_domain: "research" });
      assert.equal(await searchDocs({ query: "contracts" }), "found contracts");
      assert.deepEqual(JSON.parse(proxy.requests[0].body), {
        evidence_refs: [],
        recommended_route: "accept",
        tool_category: "public_read",
        authorization_state: "none",
        risk_domain: "research",
        tool_name: "search_docs",
        proposed_arguments: { query: "contracts" },
      });
    }));

  it("lets eventFields name the tool and set evidence and the recommended route", () =>
    withProxy(async (proxy) => {
      const client = createClient({ baseUrl: proxy.baseUrl, token });
      let ran = false;
      const tool = client.guard(async () => {
        ran = true;
      }, {
        tool_name: "lookup",
        tool_category: "private_read",
        authorization_state: "authenticated",
        risk_domain: "finance",
        evidence_refs: ["session:1"],
        recommended_route: "ask",
        agent_id: "agent-7",
      });
      // gated takes the strictest route, so the recommended ask holds.
      await assert.rejects(tool({ id: 1 }), (err) => err instanceof BlockedError && err.decision.route === "ask");
      assert.equal(ran, false);
      const sent = JSON.parse(proxy.requests[0].body);
      assert.equal(sent.tool_name, "lookup");
      assert.deepEqual(sent.evidence_refs, ["session:1"]);
      assert.equal(sent.recommended_route, "ask");
      assert.equal(sent.agent_id, "agent-7");
    }));

  for (const [label, value, want] of [
    ["a string", "hello", { input: "hello" }],
    ["an array", [1, 2], { input: [1, 2] }],
    ["null", null, { input: null }],
    ["nothing", undefined, {}],
  ]) {
    it(`describes a call with ${label} as proposed_arguments ${JSON.stringify(want)}`, () =>
      withProxy(async (proxy) => {
        const client = createClient({ baseUrl: proxy.baseUrl, token });
        const tool = client.guard(function echo(x) {
          return x;
        }, PUBLIC_READ);
        assert.deepEqual(await tool(value), value);
        assert.deepEqual(JSON.parse(proxy.requests[0].body).proposed_arguments, want);
      }));
  }

  it("passes further arguments to the tool without sending them", () =>
    withProxy(async (proxy) => {
      const client = createClient({ baseUrl: proxy.baseUrl, token });
      const tool = client.guard(function lookup(args, options) {
        return options.toolCallId;
      }, PUBLIC_READ);
      assert.equal(await tool({ q: 1 }, { toolCallId: "call-9" }), "call-9");
      assert.doesNotMatch(proxy.requests[0].body, /call-9/);
    }));

  it("reports the decision before it blocks, and does not run the tool", async () => {
    const order = [];
    const seen = [];
    const client = createClient({
      baseUrl: gated.baseUrl,
      token,
      onDecision: (d) => {
        seen.push(d);
        order.push(`decision:${d.route}`);
      },
    });
    const tool = client.guard(function send_email() {
      order.push("ran");
    }, CLAIMED_WRITE);
    await assert.rejects(tool({ to: "x@example.com" }), (err) => {
      assert.ok(err instanceof BlockedError);
      assert.equal(err.name, "BlockedError");
      assert.equal(
        err.message,
        "gated did not let the tool run: route ask, hard blockers: high_risk_write_missing_explicit_confirmation, " +
          "write_missing_explicit_confirmation, write_missing_validation_or_confirmation.",
      );
      assert.match(err.decision.decision_id, DECISION_ID);
      assert.deepEqual(err.decision.hard_blockers, ASK_BLOCKERS);
      assert.equal(seen[0], err.decision);
      return true;
    });
    assert.deepEqual(order, ["decision:ask"]);
  });

  it("reports the decision before it runs the tool", async () => {
    const order = [];
    const client = createClient({ baseUrl: gated.baseUrl, token, onDecision: (d) => order.push(`decision:${d.route}`) });
    const tool = client.guard(function search_docs() {
      order.push("ran");
    }, PUBLIC_READ);
    await tool({});
    assert.deepEqual(order, ["decision:accept", "ran"]);
  });

  it("calls onDecision once per guarded call, and never from check()", async () => {
    const seen = [];
    const client = createClient({ baseUrl: gated.baseUrl, token, onDecision: (d) => seen.push(d) });
    const accepted = await client.check(event);
    const asked = await client.check({ ...event, ...CLAIMED_WRITE, tool_name: "send_email" });
    assert.deepEqual([accepted.route, asked.route], ["accept", "ask"]);
    assert.deepEqual(seen, []);
    const searchDocs = client.guard(async function search_docs() {}, PUBLIC_READ);
    const sendEmail = client.guard(async function send_email() {}, CLAIMED_WRITE);
    await searchDocs({ query: "a" });
    await searchDocs({ query: "b" });
    await assert.rejects(sendEmail({ to: "x@example.com" }), BlockedError);
    assert.deepEqual(
      seen.map((d) => d.route),
      ["accept", "accept", "ask"],
    );
    assert.equal(new Set(seen.map((d) => d.decision_id)).size, 3);
  });

  it("an onDecision that throws fails the call and the tool does not run", async () => {
    const client = createClient({
      baseUrl: gated.baseUrl,
      token,
      onDecision: () => {
        throw new Error("logger down");
      },
    });
    let ran = false;
    const tool = client.guard(function search_docs() {
      ran = true;
    }, PUBLIC_READ);
    await assert.rejects(tool({}), /logger down/);
    assert.equal(ran, false);
  });

  it("does not run the tool on execute without accept or shadow", () =>
    withBrokenProxy(answer("200 OK", { route: "ask", execute: true, shadow: false, hard_blockers: [] }), async (server) => {
      let ran = false;
      const tool = createClient({ baseUrl: server.baseUrl }).guard(function t() {
        ran = true;
      }, PUBLIC_READ);
      await assert.rejects(tool({}), BlockedError);
      assert.equal(ran, false);
    }));

  it("refuses to guard without a tool name or a function", () => {
    const client = createClient({ baseUrl: "http://127.0.0.1:1" });
    const fields = { tool_category: "public_read", authorization_state: "none", risk_domain: "research" };
    assert.throws(() => client.guard(() => {}, fields), /needs a tool name/);
    assert.throws(() => client.guard("search", fields), /needs a tool function/);
    assert.throws(() => client.guard(function t() {}), /needs an object of event fields/);
  });
});

describe("answers", () => {
  it("a redirect is not followed but is a failure", () =>
    withBrokenProxy(answer("302 Found", "", "Location: http://127.0.0.1:1/pre-tool-check\r\n"), async (server) => {
      const d = await createClient({ baseUrl: server.baseUrl }).check(event);
      assert.deepEqual(d.hard_blockers, ["gated_http_302"]);
      assert.equal(server.requests.length, 1);
    }));

  it("a non-2xx refusal carries gated's error in its sentence", async () => {
    const d = await createClient({ baseUrl: gated.baseUrl, token: vectors.tokens.unknown }).check(event);
    assert.deepEqual(d, {
      route: "refuse",
      execute: false,
      shadow: false,
      hard_blockers: ["gated_http_401"],
      error: "gated answered HTTP 401: unauthorized: a valid bearer token is required.",
    });
  });

  for (const [label, body] of [
    ["an array", "[]"],
    ["null", "null"],
    ["an empty body", ""],
    ["a route in the wrong case", '{"route":"ACCEPT","execute":true}'],
    ["bytes that are not UTF-8", Buffer.from([0x7b, 0xff, 0xfe, 0x7d]).toString("latin1")],
  ]) {
    it(`${label} is a bad answer`, () =>
      withBrokenProxy(
        (socket) => {
          const bytes = Buffer.from(body, "latin1");
          socket.end(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${bytes.length}\r\nConnection: close\r\n\r\n`), bytes]));
        },
        async (server) => {
          const d = await createClient({ baseUrl: server.baseUrl }).check(event);
          assert.deepEqual(d.hard_blockers, ["gated_bad_answer"]);
          assert.equal(d.execute, false);
        },
      ));
  }

  // gated always sends shadow and hard_blockers; the contract requires only route and execute.
  it("an answer without shadow or hard_blockers gets safe defaults", () =>
    withBrokenProxy(answer("200 OK", { route: "accept", execute: true }), async (server) => {
      const d = await createClient({ baseUrl: server.baseUrl }).check(event);
      assert.equal(d.shadow, false);
      assert.deepEqual(d.hard_blockers, []);
    }));

  it("an endless answer is cut off, not buffered", () =>
    withBrokenProxy(
      (socket) => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
        const chunk = "x".repeat(64 * 1024);
        const frame = `${chunk.length.toString(16)}\r\n${chunk}\r\n`;
        const start = '{"route":"accept","pad":"';
        socket.write(`${start.length.toString(16)}\r\n${start}\r\n`);
        // Write until the client stops reading and goes away.
        const pump = () => {
          while (!socket.destroyed && socket.write(frame));
          if (!socket.destroyed) socket.once("drain", pump);
        };
        pump();
      },
      async (server) => {
        const d = await createClient({ baseUrl: server.baseUrl, timeoutMs: 60_000 }).check(event);
        assert.deepEqual(d.hard_blockers, ["gated_bad_answer"]);
        assert.match(d.error, /larger than 4 MiB/);
      },
    ));

  it("the timeout covers reading the body", () =>
    withBrokenProxy(
      (socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"route":'),
      async (server) => {
        const d = await createClient({ baseUrl: server.baseUrl, timeoutMs: 200 }).check(event);
        assert.deepEqual(d.hard_blockers, ["gated_timeout"]);
        assert.equal(d.error, "gated did not answer within 200 ms.");
      },
    ));

  it("an unknown host is unreachable", async () => {
    const d = await createClient({ baseUrl: "http://gated.invalid", timeoutMs: 30_000 }).check(event);
    assert.deepEqual(d.hard_blockers, ["gated_unreachable"]);
    assert.match(d.error, /^gated is unreachable: .*(ENOTFOUND|EAI_AGAIN)/);
  });
});

describe("options", () => {
  for (const [label, options, message] of [
    ["no options", undefined, /needs an options object/],
    ["no baseUrl", {}, /baseUrl must be gated's http\(s\) URL/],
    ["a baseUrl that is not a URL", { baseUrl: "127.0.0.1:8080" }, /baseUrl must use http or https|baseUrl is not a URL/],
    ["a relative baseUrl", { baseUrl: "/gated" }, /baseUrl is not a URL/],
    ["an ftp baseUrl", { baseUrl: "ftp://127.0.0.1" }, /baseUrl must use http or https, not ftp\./],
    ["credentials in baseUrl", { baseUrl: "http://u:p@127.0.0.1" }, /must not hold credentials/],
    ["a query in baseUrl", { baseUrl: "http://127.0.0.1/?a=1" }, /must not have a query/],
    ["a zero timeout", { baseUrl: "http://127.0.0.1", timeoutMs: 0 }, /timeoutMs must be a number of milliseconds above 0/],
    ["a negative timeout", { baseUrl: "http://127.0.0.1", timeoutMs: -5 }, /timeoutMs/],
    ["a NaN timeout", { baseUrl: "http://127.0.0.1", timeoutMs: NaN }, /timeoutMs/],
    ["a string timeout", { baseUrl: "http://127.0.0.1", timeoutMs: "2000" }, /timeoutMs/],
    ["a token with a newline", { baseUrl: "http://127.0.0.1", token: "a\nb" }, /token must be a string of visible ASCII/],
    ["a token with a space", { baseUrl: "http://127.0.0.1", token: "a b" }, /token must be/],
    ["a non-ASCII token", { baseUrl: "http://127.0.0.1", token: "t\u00f6ken" }, /token must be/],
    ["a number token", { baseUrl: "http://127.0.0.1", token: 123 }, /token must be/],
    ["a null token", { baseUrl: "http://127.0.0.1", token: null }, /token must be/],
    ["a shadow string", { baseUrl: "http://127.0.0.1", shadow: "yes" }, /shadow must be true or false/],
    ["an onDecision that is not a function", { baseUrl: "http://127.0.0.1", onDecision: "log" }, /onDecision must be a function/],
  ]) {
    it(`rejects ${label}`, () => {
      assert.throws(() => createClient(options), message);
    });
  }

  it("accepts https and defaults", () => {
    const client = createClient({ baseUrl: "https://gated.example.com" });
    assert.equal(typeof client.check, "function");
    assert.equal(typeof client.guard, "function");
  });

  it("check() rejects an event that is not an object", async () => {
    const client = createClient({ baseUrl: "http://127.0.0.1:1" });
    await assert.rejects(client.check("send_email"), /check\(\) needs an event object/);
    await assert.rejects(client.check({ ...event, proposed_arguments: { n: 1n } }), /cannot be encoded as JSON/);
  });
});

// guard's waitForApprovalMs and approval() where no approval is given;
// approvals.test.mjs runs the approvals vectors against a gated with approvals.
describe("approval wait", () => {
  it("rejects a waitForApprovalMs that is not a positive number", () => {
    const client = createClient({ baseUrl: "http://127.0.0.1:9" });
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, "30000", true]) {
      assert.throws(() => client.guard(async function t() {}, PUBLIC_READ, { waitForApprovalMs: bad }), /waitForApprovalMs/);
    }
  });

  it("approval() rejects a missing id or a negative wait as the caller's mistake", async () => {
    const client = createClient({ baseUrl: "http://127.0.0.1:9" });
    await assert.rejects(client.approval(""), TypeError);
    await assert.rejects(client.approval("a1", { waitMs: -1 }), RangeError);
  });

  it("an ask without an approval blocks at once", async () => {
    // This gated has no database, so its asks carry no approval.
    const seen = [];
    let ran = false;
    const client = createClient({ baseUrl: gated.baseUrl, token, onDecision: (d) => seen.push(d) });
    const sendEmail = client.guard(
      async function send_email() {
        ran = true;
      },
      CLAIMED_WRITE,
      { waitForApprovalMs: 30_000 },
    );
    const err = await sendEmail({ to: "customer@example.com" }).catch((e) => e);
    assert.ok(err instanceof BlockedError);
    assert.equal(err.reason, undefined);
    assert.equal(err.decision.approval, undefined);
    assert.deepEqual(
      seen.map((d) => d.route),
      ["ask"],
    );
    assert.equal(ran, false);
  });

  it("approval() GETs the approval with the token, waiting only while it is pending", () =>
    withProxy(async (proxy) => {
      const err = await createClient({ baseUrl: proxy.baseUrl, token })
        .approval("a/1", { waitMs: 1500 })
        .catch((e) => e);
      assert.ok(err instanceof GatedError);
      assert.match(err.blocker, /^gated_http_4\d\d$/);
      const [req] = proxy.requests;
      assert.match(req.head, /^GET \/v1\/approvals\/a%2F1\?status=pending&wait=1500ms HTTP\/1\.1\r\n/);
      assert.equal(headerOf(req.head, "authorization"), `Bearer ${token}`);
      assert.equal(headerOf(req.head, "content-type"), undefined);
      assert.equal(req.body, "");
    }));

  for (const [label, raw, blocker] of [
    ["another approval", answer("200 OK", { id: "a2", status: "approved" }), "gated_bad_answer"],
    ["an unknown status", answer("200 OK", { id: "a1", status: "maybe" }), "gated_bad_answer"],
    ["not JSON", answer("200 OK", "approved"), "gated_bad_answer"],
    ["a 404", answer("404 Not Found", { error: { code: "approval_unknown" } }), "gated_http_404"],
  ]) {
    it(`approval() fails closed on ${label}`, () =>
      withBrokenProxy(raw, async (server) => {
        const err = await createClient({ baseUrl: server.baseUrl })
          .approval("a1")
          .catch((e) => e);
        assert.ok(err instanceof GatedError);
        assert.equal(err.blocker, blocker);
      }));
  }

  it("an unreadable approval blocks the waiting call", () => {
    // An ask whose approval endpoint answers the same ask again: an answer
    // gated never gives, so the wait fails closed.
    const ask = {
      route: "ask",
      execute: false,
      shadow: false,
      hard_blockers: ["x"],
      approval: { id: "a1", status: "pending", url: "/ui/approvals/a1", evidence_ref: { source_id: "gated-approval:a1", kind: "approval" } },
    };
    return withBrokenProxy(answer("200 OK", ask), async (server) => {
      const seen = [];
      let ran = false;
      const tool = createClient({ baseUrl: server.baseUrl, onDecision: (d) => seen.push(d) }).guard(
        async function t() {
          ran = true;
        },
        PUBLIC_READ,
        { waitForApprovalMs: 30_000 },
      );
      const err = await tool({}).catch((e) => e);
      assert.ok(err instanceof BlockedError);
      assert.equal(err.reason, "gated_bad_answer");
      assert.deepEqual(
        server.requests.map((r) => r.head.split(" ")[0]),
        ["POST", "GET"],
      );
      assert.deepEqual(
        seen.map((d) => d.route),
        ["ask", "refuse"],
      );
      assert.equal(err.decision, seen.at(-1));
      assert.deepEqual(err.decision.hard_blockers, ["gated_bad_answer"]);
      assert.equal(ran, false);
    });
  });
});
