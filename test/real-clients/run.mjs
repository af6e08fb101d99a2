// The real-client proof (issue 27 §3): each runtime's real client, pinned by
// a lockfile under clients/ and installed once into a cache keyed by it,
// drives a scripted turn against a loopback model server, with gated's hook
// the only thing between the model's tool call and the shell.
//
//   GATED_BIN=bin/gated node --test test/real-clients/run.mjs
//
// GATED_REAL_CLIENTS=claude-code,codex picks runtimes (default: every driver).
import { test, after } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { install } from './lib/install.mjs';
import { startGated } from './lib/gated.mjs';
import { defineCases } from './lib/cases.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const started = Date.now();
const gatedBin = path.resolve(process.env.GATED_BIN || path.join(repo, 'bin', 'gated'));
const catalog = path.join(repo, 'examples', 'claude-code', 'catalog');
const only = (process.env.GATED_REAL_CLIENTS || '').split(',').filter(Boolean);
const log = (msg) => console.log(`# ${msg}`);

const driverFiles = fs.readdirSync(path.join(here, 'drivers')).filter((f) => f.endsWith('.mjs')).sort();
const drivers = [];
for (const f of driverFiles) drivers.push((await import(path.join(here, 'drivers', f))).default);

after(() => log(`real-client suite took ${((Date.now() - started) / 1000).toFixed(1)} s`));

for (const driver of drivers) {
  const skip = only.length > 0 && !only.includes(driver.name) && 'not in GATED_REAL_CLIENTS';
  test(`${driver.name} (${driver.package})`, { skip }, async (t) => {
    if (driver.unavailable) {
      t.skip(`contract-tested only: ${driver.unavailable}`);
      return;
    }
    // The examples call gated by name, `gated hook …` or `gated-hook …`:
    // both must be on the clients' PATH (lib/env.mjs), so both must exist.
    for (const bin of [gatedBin, path.join(path.dirname(gatedBin), 'gated-hook')]) {
      if (!fs.existsSync(bin)) throw new Error(`no ${path.basename(bin)} binary at ${bin}: run make gated-bin`);
    }
    const t0 = Date.now();
    const pinned = path.join(here, 'clients', driver.name);
    for (const f of ['package.json', 'package-lock.json']) {
      if (!fs.existsSync(path.join(pinned, f))) throw new Error(`${driver.name} has no ${f} in ${pinned}: pin its client`);
    }
    let dir;
    try {
      dir = install(pinned);
    } catch (err) {
      t.skip(`${driver.package} cannot be installed here: ${err.message}`);
      return;
    }
    log(`${driver.name}: client ready in ${((Date.now() - t0) / 1000).toFixed(1)} s (${dir})`);
    const unusable = driver.unusable?.(dir);
    if (unusable) {
      t.skip(`${driver.package} cannot be driven here: ${unusable}`);
      return;
    }
    const gatedDir = fs.mkdtempSync(path.join(os.tmpdir(), `gated-rc-${driver.name}-gated-`));
    const gated = await startGated({ bin: gatedBin, catalog, dir: gatedDir });
    try {
      await defineCases(t, driver, { gated, clientDir: dir, gatedBin, repo, log });
    } finally {
      await gated.stop();
    }
  });
}
