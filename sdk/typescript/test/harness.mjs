// Test harness: a real `gated serve` from $GATED_BIN, a recording proxy to
// watch the wire in front of it, and the faults of sdk/testdata/vectors.json
// injected for real with node:net.
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const testdataDir = fileURLToPath(new URL("../../testdata/", import.meta.url));

export async function loadVectors() {
  return JSON.parse(await readFile(join(testdataDir, "vectors.json"), "utf8"));
}

const LISTEN_WAIT_MS = 30_000;

/**
 * Starts `$GATED_BIN serve` on 127.0.0.1:0 with an audit file and spool of
 * its own, in sdk/testdata so that serve_args' relative paths resolve, and
 * waits for the "gated listening" line on stderr.
 */
export async function startGated(serveArgs) {
  const bin = process.env.GATED_BIN;
  if (!bin) {
    throw new Error(
      "GATED_BIN is not set: these tests run a real gated. Build it with " +
        "`go build -o bin/gated ./cmd/gated` at the repository root and run " +
        "`GATED_BIN=/path/to/bin/gated npm test` (or `make sdk-typescript`).",
    );
  }
  const dir = await mkdtemp(join(tmpdir(), "gated-sdk-ts-"));
  const args = ["serve", "--addr", "127.0.0.1:0", "--audit-file", join(dir, "audit.jsonl"), "--spool-dir", join(dir, "spool"), ...serveArgs];
  const proc = spawn(bin, args, { cwd: testdataDir, stdio: ["ignore", "ignore", "pipe"] });
  const stderr = [];
  const exited = once(proc, "exit");

  const addr = await new Promise((resolve, reject) => {
    const fail = (why) => {
      clearTimeout(timer);
      reject(new Error(`${why}\n$ ${bin} ${args.join(" ")}\nstderr:\n${stderr.join("\n") || "(nothing)"}`));
    };
    const timer = setTimeout(() => fail(`gated did not log "gated listening" within ${LISTEN_WAIT_MS / 1000} s.`), LISTEN_WAIT_MS);
    proc.on("error", (err) => fail(`gated could not be started: ${err.message}.`));
    proc.on("exit", (code, signal) => fail(`gated exited (code ${code}, signal ${signal}) before listening.`));
    // Keep reading stderr for gated's whole life so that a full pipe never blocks its logging.
    createInterface({ input: proc.stderr }).on("line", (line) => {
      if (stderr.length < 200) stderr.push(line);
      let entry;
      try {
        entry = JSON.parse(line);
      } catch {
        return;
      }
      if (entry.msg === "gated listening" && typeof entry.addr === "string") {
        clearTimeout(timer);
        resolve(entry.addr);
      }
    });
  }).catch(async (err) => {
    proc.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
    throw err;
  });

  return {
    baseUrl: `http://${addr}`,
    /** What gated logged on stderr so far (its first 200 lines). */
    logs: () => stderr.join("\n"),
    /** SIGKILL gated: its connections drop at once, as in a crash. */
    async kill() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill("SIGKILL");
        await exited;
      }
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill("SIGTERM");
        const killer = setTimeout(() => proc.kill("SIGKILL"), 5_000);
        await exited;
        clearTimeout(killer);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

// A server on 127.0.0.1:0 whose sockets can all be torn down at close.
async function listen(onSocket) {
  const sockets = new Set();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {}); // the client may cancel or reset
    onSocket(socket);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** "refused": a port nobody listens on (bind to port 0, note the port, close). */
export async function refusedBaseUrl() {
  const { baseUrl, close } = await listen(() => {});
  await close();
  return baseUrl;
}

/** "silent": accepts connections and never answers. */
export function silentServer() {
  return listen(() => {});
}

// Splits the bytes a client sent on one connection into {head, body}
// strings, one per request (bodies are framed by Content-Length).
function parseRequests(bytes) {
  const requests = [];
  let rest = bytes;
  for (;;) {
    const headEnd = rest.indexOf("\r\n\r\n");
    if (headEnd < 0) return requests;
    const head = rest.subarray(0, headEnd).toString("latin1");
    const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
    requests.push({ head, body: rest.subarray(headEnd + 4, headEnd + 4 + length).toString("utf8") });
    rest = rest.subarray(headEnd + 4 + length);
  }
}

/**
 * A recording proxy in front of the real gated at targetBaseUrl: it relays
 * every byte unchanged both ways and keeps a copy, so that tests see the
 * request on the wire while gated itself gives the answer. .requests holds
 * what the clients sent as {head, body} strings, .answers the head of each
 * connection's answer.
 */
export async function recordingProxy(targetBaseUrl) {
  const target = new URL(targetBaseUrl);
  const connections = [];
  const upstreams = new Set();
  const server = await listen((socket) => {
    const record = { sent: [], answered: [] };
    connections.push(record);
    const upstream = net.connect(Number(target.port), target.hostname);
    upstreams.add(upstream);
    upstream.on("error", () => socket.destroy());
    upstream.on("close", () => {
      upstreams.delete(upstream);
      socket.destroy();
    });
    upstream.on("data", (chunk) => {
      record.answered.push(chunk);
      socket.write(chunk);
    });
    upstream.on("end", () => socket.end());
    socket.on("data", (chunk) => {
      record.sent.push(chunk);
      upstream.write(chunk);
    });
    socket.on("end", () => upstream.end());
    socket.on("close", () => upstream.destroy());
  });
  return {
    ...server,
    get requests() {
      return connections.flatMap((c) => parseRequests(Buffer.concat(c.sent)));
    },
    get answers() {
      return connections.map((c) => {
        const bytes = Buffer.concat(c.answered);
        const headEnd = bytes.indexOf("\r\n\r\n");
        return bytes.subarray(0, headEnd < 0 ? bytes.length : headEnd).toString("latin1");
      });
    },
    async close() {
      for (const upstream of upstreams) upstream.destroy();
      await server.close();
    },
  };
}

// Simulates a faulty intermediary (broken proxy, captive portal), not gated: only for answers gated never gives.
/**
 * Reads the request (head and Content-Length body), then writes the raw
 * bytes and closes. raw may be a string or a function that writes to the
 * socket itself. The requests read are kept in .requests as {head, body}
 * strings.
 */
export async function brokenProxy(raw) {
  const requests = [];
  const server = await listen((socket) => {
    let received = Buffer.alloc(0);
    let answered = false;
    socket.on("data", (chunk) => {
      if (answered) return;
      received = Buffer.concat([received, chunk]);
      const headEnd = received.indexOf("\r\n\r\n");
      if (headEnd < 0) return;
      const head = received.subarray(0, headEnd).toString("latin1");
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (received.length - headEnd - 4 < length) return;
      answered = true;
      requests.push({ head, body: received.subarray(headEnd + 4, headEnd + 4 + length).toString("utf8") });
      if (typeof raw === "function") raw(socket);
      else socket.end(raw);
    });
  });
  return { ...server, requests };
}

/**
 * Sets up a failures vector's fault for real and returns the createClient
 * options that meet it (the valid token unless the vector names another,
 * its shadow flag and timeout) and a close() for the fault's listener.
 */
export async function injectFault(v, vectors, gatedBaseUrl) {
  const options = { token: vectors.tokens.valid, shadow: v.shadow === true };
  if (v.timeout_ms !== undefined) options.timeoutMs = v.timeout_ms;
  switch (v.fault) {
    case "refused":
      return { options: { ...options, baseUrl: await refusedBaseUrl() }, close: async () => {} };
    case "silent": {
      const server = await silentServer();
      return { options: { ...options, baseUrl: server.baseUrl }, close: server.close };
    }
    case "token":
      return { options: { ...options, baseUrl: gatedBaseUrl, token: vectors.tokens[v.token] }, close: async () => {} };
    case "respond": {
      const server = await brokenProxy(v.respond);
      return { options: { ...options, baseUrl: server.baseUrl }, close: server.close };
    }
    default:
      throw new Error(`Vector ${JSON.stringify(v.name)} names a fault this harness does not know: ${v.fault}.`);
  }
}

/**
 * The PostgreSQL database the approvals vectors' gated uses (gated migrates
 * it): $GATED_TEST_DATABASE_URL as it is, else the vectors' default, a
 * database of the SDK tests' own, created when missing so that gated's
 * tables never land in a database someone else uses.
 */
export function databaseUrl(vectors) {
  if (process.env.GATED_TEST_DATABASE_URL) return process.env.GATED_TEST_DATABASE_URL;
  const url = new URL(vectors.approvals.default_database_url);
  const name = url.pathname.replace(/^\//, "");
  const out = spawnSync("createdb", ["-h", url.hostname, "-p", url.port || "5432", "-U", url.username, name], { encoding: "utf8" });
  if (out.status !== 0 && !String(out.stderr).includes("already exists")) {
    throw new Error(`createdb ${name} failed: ${out.error?.message ?? String(out.stderr).trim()}`);
  }
  return vectors.approvals.default_database_url;
}

/** A gated with approvals: serve_args, the approvals section's, a database. */
export function startApprovalsGated(vectors) {
  return startGated([...vectors.serve_args, ...vectors.approvals.serve_args, "--database-url", databaseUrl(vectors)]);
}

/**
 * One plain HTTP call to gated as the approver of the approvals vectors;
 * resolves with { status, answer } (the decoded JSON answer, or undefined).
 */
export function approverCall(vectors, baseUrl, method, path, body) {
  return callAs(vectors, vectors.approvals.approver_token, baseUrl, method, path, body);
}

/**
 * One plain HTTP call to gated with the vectors' token tokenName; resolves
 * with { status, answer } (the decoded JSON answer, or undefined).
 */
export async function callAs(vectors, tokenName, baseUrl, method, path, body) {
  const headers = { authorization: `Bearer ${vectors.tokens[tokenName]}`, accept: "application/json" };
  const init = { method, headers, redirect: "manual" };
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(baseUrl + path, init);
  const text = await res.text();
  let answer;
  try {
    answer = JSON.parse(text);
  } catch {
    answer = undefined;
  }
  return { status: res.status, answer };
}

/** Whether approval id is in the approver's pending list (every page). */
export async function pendingHas(vectors, baseUrl, id) {
  let cursor = "";
  for (;;) {
    let path = "/v1/approvals?status=pending&limit=50";
    if (cursor !== "") path += `&cursor=${encodeURIComponent(cursor)}`;
    const { status, answer } = await approverCall(vectors, baseUrl, "GET", path);
    if (status !== 200) throw new Error(`GET ${path} answered HTTP ${status}: ${JSON.stringify(answer)}`);
    const found = (answer.approvals ?? []).find((a) => a.id === id);
    if (found !== undefined) return found.status === "pending";
    if (!answer.next_cursor || answer.next_cursor === cursor) return false;
    cursor = answer.next_cursor;
  }
}
