// An upstream MCP server written with the official TypeScript SDK, for
// gated mcp-proxy's tests: over stdio by default, or over streamable HTTP
// with --http (it prints {"url": …} on stdout once listening). It has
// a reading tool, a destructive one, one that kills the process, and two no
// catalog describes (one read-only, one without annotations). It writes each call it receives to stderr, so a test
// can tell which calls reached it.
import { createServer } from "node:http";

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const tools = [
  {
    name: "echo",
    description: "Echo a message back.",
    inputSchema: { type: "object", required: ["message"], properties: { message: { type: "string" } } },
    annotations: { readOnlyHint: true },
  },
  {
    name: "drop_table",
    description: "Drop a table.",
    inputSchema: { type: "object", properties: { table: { type: "string" } } },
    annotations: { destructiveHint: true },
  },
  {
    name: "crash",
    description: "Exit the server without answering.",
    inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: true },
  },
  {
    name: "lookup",
    description: "Look something up.",
    inputSchema: { type: "object", properties: { key: { type: "string" } } },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: "archive",
    description: "Archive a record.",
    inputSchema: { type: "object", properties: { id: { type: "string" } } },
  },
];

function newServer() {
  const server = new Server({ name: "upstream", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    process.stderr.write(`upstream call: ${req.params.name}\n`);
    switch (req.params.name) {
      case "echo":
        return { content: [{ type: "text", text: `echo: ${req.params.arguments?.message}` }] };
      case "crash":
        process.exit(1);
    }
    return { content: [{ type: "text", text: `${req.params.name}: done` }] };
  });
  return server;
}

if (process.argv.includes("--http")) {
  // Stateless: a new server and transport per request, as the SDK's
  // stateless example does.
  const http = createServer(async (req, res) => {
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => transport.close());
    await newServer().connect(transport);
    await transport.handleRequest(req, res);
  });
  http.listen(0, "127.0.0.1", () => {
    process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${http.address().port}/mcp` }) + "\n");
  });
} else {
  await newServer().connect(new StdioServerTransport());
}
