// Installs a pinned client with `npm ci` into a cache keyed by its lockfile,
// once: the clients are large (Claude Code's native binary is ~370 MB), and
// a lockfile that has not changed needs no second install.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const cacheRoot =
  process.env.GATED_REAL_CLIENTS_CACHE || path.join(os.homedir(), '.cache', 'gated-real-clients');

// The files of a pin: an .npmrc (npm ci reads it from the folder) is
// optional, and changes the install as much as the lockfile does.
const PIN = ['package.json', 'package-lock.json', '.npmrc'];

// install returns the folder holding node_modules for the client whose
// package.json and package-lock.json (and .npmrc, if any) sit in dir.
export function install(dir) {
  const pin = PIN.filter((f) => fs.existsSync(path.join(dir, f)));
  const h = createHash('sha256');
  for (const f of pin) h.update(fs.readFileSync(path.join(dir, f)));
  const hash = h.digest('hex').slice(0, 16);
  const target = path.join(cacheRoot, `${path.basename(dir)}-${hash}`);
  if (fs.existsSync(path.join(target, '.installed'))) return target;
  fs.mkdirSync(cacheRoot, { recursive: true });
  // Installed beside the target and renamed into place, so an interrupted
  // install never looks finished.
  const tmp = fs.mkdtempSync(`${target}.tmp-`);
  try {
    for (const f of pin) fs.copyFileSync(path.join(dir, f), path.join(tmp, f));
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: tmp,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    fs.writeFileSync(path.join(tmp, '.installed'), new Date().toISOString() + '\n');
    fs.rmSync(target, { recursive: true, force: true });
    fs.renameSync(tmp, target);
    // Older pins of this client are dead weight of hundreds of MB each.
    const name = path.basename(dir);
    for (const old of fs.readdirSync(cacheRoot)) {
      if (old.startsWith(`${name}-`) && /^[0-9a-f]{16}$/.test(old.slice(name.length + 1)) && old !== path.basename(target)) {
        fs.rmSync(path.join(cacheRoot, old), { recursive: true, force: true });
      }
    }
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
  return target;
}
