// gated's /mcp driven by the official MCP TypeScript SDK client, as an MCP
// host would use it: connect over streamable HTTP with a bearer token, list
// the tool, call it, read the decision from structuredContent.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { loadVectors, startGated } from "./harness.mjs";

let gated;
let vectors;

before(async () => {
  vectors = await loadVectors();
  gated = await startGated(vectors.serve_args);
});
after(async () => gated?.stop());

async function connect(token) {
  const client = new Client({ name: "gated-mcp-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${gated.baseUrl}/mcp`), {
    requestInit: { headers: token ? { authorization: `Bearer ${token}` } : {} },
  });
  await client.connect(transport);
  return client;
}

test("the official MCP client lists aana_pre_tool_check and calls it", async () => {
  const client = await connect(vectors.tokens.valid);
  try {
    assert.equal(client.getServerVersion()?.name, "gated");
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ["aana_pre_tool_check"]);
    assert.equal(tools[0].inputSchema.type, "object");
    assert.equal(tools[0].inputSchema.required.length, 7);

    for (const vector of vectors.checks.filter((c) => !c.shadow)) {
      const result = await client.callTool({ name: "aana_pre_tool_check", arguments: vector.event });
      assert.notEqual(result.isError, true, vector.name);
      const d = result.structuredContent;
      assert.equal(d.route, vector.want.route, vector.name);
      assert.equal(d.execute, vector.want.execute, vector.name);
      assert.deepEqual(d.hard_blockers, vector.want.hard_blockers, vector.name);
      assert.match(d.decision_id, /^[0-9a-f-]{36}$/, vector.name);
      assert.match(result.content[0].text, new RegExp(`route: ${vector.want.route}\\b`), vector.name);
    }
  } finally {
    await client.close();
  }
});

test("without a valid token the MCP client cannot connect", async () => {
  await assert.rejects(connect("not-a-configured-token"), /401|nauthorized/);
});
