// gated mcp-proxy between the official MCP TypeScript client and an
// upstream written with the official TypeScript server SDK
// (mcp-upstream.mjs): the client starts the proxy over stdio as an MCP host
// would, and the proxy starts the upstream over stdio.
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const upstream = fileURLToPath(new URL("./mcp-upstream.mjs", import.meta.url));

// The catalog names the upstream's tools as coding agents do,
// mcp__<server>__<tool>: echo and crash read, drop_table never executes,
// and lookup is left out.
const actionsYaml = `actions:
  - name: mcp__upstream__echo
    description: Echo a message back.
    command: ["echo", "{{message}}"]
    inputSchema: { type: object, required: [message], properties: { message: { type: string } } }
    annotations: { readOnlyHint: true }
  - name: mcp__upstream__crash
    description: Exit the server.
    command: ["crash"]
    inputSchema: { type: object }
    annotations: { readOnlyHint: true }
`;

let dir;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "gated-mcp-proxy-"));
  await mkdir(join(dir, "catalog", "plugins", "drop"), { recursive: true });
  await writeFile(join(dir, "catalog", "ACTIONS.yaml"), actionsYaml);
  await writeFile(join(dir, "catalog", "plugins", "drop", "action.json"), JSON.stringify({ name: "mcp__upstream__drop_table", riskTier: "R4" }));
});
after(async () => dir && rm(dir, { recursive: true, force: true }));

/** Starts gated mcp-proxy as an MCP host would, with the upstream over stdio. */
async function connect(name, upstreamArgs = ["--upstream-cmd", process.execPath, "--", upstream], elicit) {
  const bin = process.env.GATED_BIN;
  assert.ok(bin, "GATED_BIN is not set: these tests run a real gated (make sdk-typescript).");
  const transport = new StdioClientTransport({
    command: bin,
    args: ["mcp-proxy", "--catalog", join(dir, "catalog"), "--audit-file", join(dir, `${name}.jsonl`),
      "--spool-dir", join(dir, `${name}-spool`), ...upstreamArgs],
    stderr: "pipe",
  });
  const logs = [];
  transport.stderr.on("data", (chunk) => logs.push(chunk.toString()));
  const client = new Client({ name: "gated-mcp-proxy-test", version: "1.0.0" }, elicit ? { capabilities: { elicitation: {} } } : {});
  if (elicit) client.setRequestHandler(ElicitRequestSchema, elicit);
  await client.connect(transport);
  return { client, logs: () => logs.join("") };
}

test("the proxy forwards the upstream's tools and checks every call", async () => {
  const { client, logs } = await connect("checks");
  try {
    assert.equal(client.getServerVersion()?.name, "gated-mcp-proxy");
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ["echo", "drop_table", "crash", "lookup", "archive"]);
    assert.equal(tools[1].annotations.destructiveHint, true);

    const echo = await client.callTool({ name: "echo", arguments: { message: "hi" } });
    assert.notEqual(echo.isError, true);
    assert.deepEqual(echo.content, [{ type: "text", text: "echo: hi" }]);

    const drop = await client.callTool({ name: "drop_table", arguments: { table: "customers" } });
    assert.equal(drop.isError, true);
    assert.match(drop.content[0].text, /^gated refuses this call: .*Blockers: /);
    assert.doesNotMatch(drop.content[0].text, /customers/);
    assert.equal(drop._meta["gated/decision"].route, "refuse");

    const lookup = await client.callTool({ name: "lookup", arguments: { key: "k" } });
    assert.equal(lookup.isError, true);
    assert.match(lookup.content[0].text, /tool_not_in_catalog/);

    assert.match(logs(), /upstream call: echo/);
    assert.doesNotMatch(logs(), /upstream call: (drop_table|lookup)/);
    assert.doesNotMatch(logs(), /customers/, "an argument reached the logs");
  } finally {
    await client.close();
  }
});

test("--trust-annotations naming the upstream lets an uncatalogued read-only tool run", async () => {
  const { client } = await connect("trust", ["--trust-annotations", "upstream", "--upstream-cmd", process.execPath, "--", upstream]);
  try {
    const lookup = await client.callTool({ name: "lookup", arguments: { key: "k" } });
    assert.notEqual(lookup.isError, true, lookup.content[0].text);
    assert.deepEqual(lookup.content, [{ type: "text", text: "lookup: done" }]);
    // The catalog still decides the tools it describes.
    const drop = await client.callTool({ name: "drop_table", arguments: {} });
    assert.equal(drop.isError, true);
  } finally {
    await client.close();
  }
});

test("an ask goes to the person through the client's elicitation", async () => {
  const asked = [];
  const { client, logs } = await connect("elicit", ["--trust-annotations", "upstream", "--upstream-cmd", process.execPath, "--", upstream],
    async (req) => {
      asked.push(req.params.message);
      return { action: "accept", content: { approve: req.params.message.includes("mcp__upstream__archive") && asked.length === 1 } };
    });
  try {
    // archive has no annotations: it writes, and a write asks.
    const approved = await client.callTool({ name: "archive", arguments: { id: "r-1" } });
    assert.notEqual(approved.isError, true, approved.content[0].text);
    assert.deepEqual(approved.content, [{ type: "text", text: "archive: done" }]);
    assert.match(asked[0], /gated asks you to approve this call/);
    const refused = await client.callTool({ name: "archive", arguments: { id: "r-2" } });
    assert.equal(refused.isError, true);
    assert.equal(asked.length, 2);
    assert.equal(logs().match(/upstream call: archive/g).length, 1);
  } finally {
    await client.close();
  }
});

test("a call fails closed with a tool error when the upstream process dies", async () => {
  const { client } = await connect("dies");
  try {
    const crash = await client.callTool({ name: "crash", arguments: {} });
    assert.equal(crash.isError, true);
    assert.match(crash.content[0].text, /the upstream MCP server failed it/);
    // And so does every call after it, at once.
    const echo = await client.callTool({ name: "echo", arguments: { message: "hi" } });
    assert.equal(echo.isError, true);
    assert.match(echo.content[0].text, /the upstream MCP server failed it/);
  } finally {
    await client.close();
  }
});

/** Starts proc and resolves with the first line of stream that pick maps to a value. */
function firstLine(proc, stream, pick) {
  return new Promise((resolve, reject) => {
    proc.on("exit", (code) => reject(new Error(`${proc.spawnfile} exited (${code}) before it was ready`)));
    createInterface({ input: stream }).on("line", (line) => {
      try {
        const v = pick(JSON.parse(line));
        if (v) resolve(v);
      } catch {
        // not a JSON line
      }
    });
  });
}

test("over streamable HTTP on both sides, and an upstream URL that stops answering fails closed", async () => {
  const bin = process.env.GATED_BIN;
  assert.ok(bin, "GATED_BIN is not set: these tests run a real gated (make sdk-typescript).");
  const up = spawn(process.execPath, [upstream, "--http"], { stdio: ["ignore", "pipe", "ignore"] });
  const upURL = await firstLine(up, up.stdout, (l) => l.url);
  const proxy = spawn(bin, ["mcp-proxy", "--upstream-url", upURL, "--http-addr", "127.0.0.1:0", "--log-level", "info",
    "--catalog", join(dir, "catalog"), "--audit-file", join(dir, "http.jsonl"), "--spool-dir", join(dir, "http-spool")],
  { stdio: ["ignore", "ignore", "pipe"] });
  const client = new Client({ name: "gated-mcp-proxy-test", version: "1.0.0" });
  try {
    const addr = await firstLine(proxy, proxy.stderr, (l) => l.msg === "gated listening" && l.addr);
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://${addr}/mcp`)));
    const echo = await client.callTool({ name: "echo", arguments: { message: "over http" } });
    assert.deepEqual(echo.content, [{ type: "text", text: "echo: over http" }]);
    const drop = await client.callTool({ name: "drop_table", arguments: { table: "t" } });
    assert.equal(drop.isError, true);
    assert.match(drop.content[0].text, /^gated refuses this call/);

    up.kill();
    await once(up, "exit");
    const after = await client.callTool({ name: "echo", arguments: { message: "again" } });
    assert.equal(after.isError, true);
    assert.match(after.content[0].text, /the upstream MCP server failed it/);
  } finally {
    await client.close();
    up.kill();
    if (proxy.exitCode === null && proxy.signalCode === null) {
      const exited = once(proxy, "exit");
      proxy.kill();
      await exited;
    }
  }
});
