// GitHub Copilot CLI: `copilot -p` with every tool allowed, offline, talking
// Anthropic Messages to the scripted model as a custom provider
// (COPILOT_PROVIDER_*), with its command hooks under `hooks` in
// $COPILOT_HOME/settings.json (the schema of .github/hooks/*.json).
import fs from 'node:fs';
import path from 'node:path';
import assert from 'node:assert/strict';
import { baseEnv, merge, withURL } from '../lib/env.mjs';
import { COMMANDS } from '../lib/cases.mjs';
import { cacheRoot } from '../lib/install.mjs';

export default {
  name: 'copilot-cli',
  package: '@github/copilot',
  hookWired: true,
  // Its documentation says hook failures never block, but 1.0.102 denies on
  // any non-zero exit (and a missing command); only a timeout or unreadable
  // output with exit 0 lets the tool run (README.md). gated's command exits
  // 2 on every failure it sees, so a stopped gated must block.
  failClosed: true,
  shellTool: (command) => ({ name: 'bash', input: { command, description: 'Run the command' } }),

  command(ctx) {
    const home = path.join(ctx.home, '.copilot');
    fs.mkdirSync(home, { recursive: true });
    let settings = {};
    if (ctx.hook) settings = merge(settings, JSON.parse(withURL(fs.readFileSync(path.join(ctx.repo, 'examples', 'copilot-cli', 'settings.json'), 'utf8'), ctx.hook.url)));
    fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify(settings, null, 2));
    return {
      cmd: path.join(ctx.clientDir, 'node_modules', '.bin', 'copilot'),
      args: ['-p', ctx.prompt, '--allow-all-tools', '--no-ask-user', '--output-format', 'json'],
      env: baseEnv(ctx, {
        COPILOT_HOME: home,
        COPILOT_OFFLINE: 'true',
        COPILOT_PROVIDER_TYPE: 'anthropic',
        COPILOT_PROVIDER_BASE_URL: ctx.modelURL,
        COPILOT_PROVIDER_API_KEY: 'scripted',
        COPILOT_MODEL: 'claude-sonnet-4.5',
        // Copilot unpacks ~235 MB into the cache folder on first start: one
        // shared folder, not one per case's home.
        XDG_CACHE_HOME: path.join(cacheRoot, 'copilot-xdg-cache'),
      }),
    };
  },

  // A hook that cannot start: the example's `command -v` guard prints a deny.
  async extraCases(t, env, { hookCase, workspace, runClient, canaryAlive, asked }) {
    await hookCase('with neither gated nor gated-hook on PATH, the delete is still blocked', async () => {
      const ctx = { ...workspace('copilot-cli', 'no-binary'), ...env, gatedBin: '/nonexistent/gated' };
      const { model } = await runClient(this, ctx, { hook: { url: env.gated.url }, command: COMMANDS.delete, log: env.log });
      asked(model);
      assert.ok(canaryAlive(ctx), 'with gated-hook missing the command -v guard of the example did not block the delete');
    });
  },
};
