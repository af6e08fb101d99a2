// Codex: `codex exec` with approvals and sandbox bypassed, talking OpenAI
// Responses to the scripted model through a custom provider, with
// examples/codex/config.toml's hook appended to $CODEX_HOME/config.toml.
//
// Codex skips an untrusted hook in silence. This harness trusts it with
// --dangerously-bypass-hook-trust, the non-interactive route the example's
// README gives; the extra case shows the silence itself.
import fs from 'node:fs';
import path from 'node:path';
import { baseEnv, withURL } from '../lib/env.mjs';
import { COMMANDS } from '../lib/cases.mjs';
import assert from 'node:assert/strict';

export default {
  name: 'codex',
  package: '@openai/codex',
  hookWired: true,
  // The command hook exits 2 on every failure it can see, which Codex
  // treats as a block; a hook that cannot start is a failed hook and the
  // tool runs (examples/codex/README.md).
  failClosed: true,
  // Codex's shell tool is exec_command {cmd}; its hook reports it as Bash.
  shellTool: (command) => ({ name: 'exec_command', input: { cmd: command } }),

  command(ctx) {
    const codexHome = path.join(ctx.home, '.codex');
    fs.mkdirSync(codexHome, { recursive: true });
    let config = [
      'model = "gpt-5.5"',
      'model_provider = "scripted"',
      '',
      '[model_providers.scripted]',
      'name = "scripted"',
      `base_url = "${ctx.modelURL}/v1"`,
      'wire_api = "responses"',
      'env_key = "SCRIPTED_API_KEY"',
      '',
    ].join('\n');
    if (ctx.hook) config += '\n' + withURL(fs.readFileSync(path.join(ctx.repo, 'examples', 'codex', 'config.toml'), 'utf8'), ctx.hook.url);
    fs.writeFileSync(path.join(codexHome, 'config.toml'), config);
    const trust = ctx.hook && ctx.hook.untrusted ? [] : ['--dangerously-bypass-hook-trust'];
    return {
      cmd: path.join(ctx.clientDir, 'node_modules', '.bin', 'codex'),
      // --no-daemon, or Codex leaves a shared server running in CODEX_HOME.
      args: ['--no-daemon', 'exec', '--dangerously-bypass-approvals-and-sandbox', ...trust, '--skip-git-repo-check', '--ephemeral', '--json', ctx.prompt],
      env: baseEnv(ctx, { CODEX_HOME: codexHome, SCRIPTED_API_KEY: 'sk-scripted' }),
    };
  },

  // Pins the fact examples/codex/README.md warns of: without trust, Codex
  // skips gated's hook in silence, runs the delete and gated sees nothing.
  // If a Codex release starts refusing instead, this fails: update the docs.
  async extraCases(t, env, { hookCase, workspace, runClient, records, canaryAlive, asked }) {
    await hookCase('an untrusted hook is skipped in silence (the documented trap)', async () => {
      const ctx = { ...workspace('codex', 'untrusted'), ...env };
      const mark = env.gated.mark();
      const { model } = await runClient(this, ctx, { hook: { url: env.gated.url, untrusted: true }, command: COMMANDS.delete, log: env.log });
      asked(model);
      assert.equal(canaryAlive(ctx), false, 'an untrusted hook blocked the delete: Codex changed, update examples/codex/README.md');
      assert.equal(records(mark).length, 0, 'gated was asked by an untrusted hook: Codex changed, update examples/codex/README.md');
    });
    // Codex has no fail-closed setting: a hook that cannot start is a failed
    // hook and the tool runs (examples/codex/README.md). Pinned likewise.
    await hookCase('a hook that cannot start (gated not on PATH) lets the delete run (the documented gap)', async () => {
      const ctx = { ...workspace('codex', 'no-binary'), ...env, gatedBin: '/nonexistent/gated' };
      const { model } = await runClient(this, ctx, { hook: { url: env.gated.url }, command: COMMANDS.delete, log: env.log });
      asked(model);
      assert.equal(canaryAlive(ctx), false, 'a hook that cannot start blocked the delete: Codex changed, update examples/codex/README.md');
    });
  },
};
