// A real `gated serve` (the binary `make gated-bin` builds), with the
// example catalog and a JSON-lines audit file the cases read back.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export async function freePort() {
  const srv = net.createServer();
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

// deadURL is a loopback URL nobody listens on: gated stopped.
export async function deadURL() {
  return `http://127.0.0.1:${await freePort()}`;
}

export async function startGated({ bin, catalog, dir }) {
  const port = await freePort();
  const audit = path.join(dir, 'gated-audit.jsonl');
  const log = fs.openSync(path.join(dir, 'gated.log'), 'a');
  const child = spawn(bin, ['serve', '--addr', `127.0.0.1:${port}`, '--catalog', catalog, '--audit-file', audit, '--audit-durability', 'sync'], {
    cwd: dir,
    stdio: ['ignore', log, log],
  });
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise((resolve) => child.on('exit', resolve));
  for (let i = 0; ; i++) {
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.ok) break;
    } catch {
      // Not listening yet.
    }
    if (child.exitCode !== null || i > 300) {
      throw new Error(`gated serve did not become ready; see ${path.join(dir, 'gated.log')}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    // records reads the audit records written since mark.
    records(mark = 0) {
      if (!fs.existsSync(audit)) return [];
      return fs
        .readFileSync(audit, 'utf8')
        .split('\n')
        .filter(Boolean)
        .slice(mark)
        .map((l) => JSON.parse(l));
    },
    mark() {
      return this.records().length;
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
