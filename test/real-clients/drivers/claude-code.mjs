// Claude Code: `claude -p` in bypassPermissions mode, talking Anthropic
// Messages to the scripted model, with examples/claude-code's hook merged
// into ~/.claude/settings.json (command hook; the HTTP hook in extra cases).
import fs from 'node:fs';
import path from 'node:path';
import { claudeEnv, withURL } from '../lib/env.mjs';
import { COMMANDS } from '../lib/cases.mjs';

const example = (repo, name) => fs.readFileSync(path.join(repo, 'examples', 'claude-code', name), 'utf8');

export default {
  name: 'claude-code',
  package: '@anthropic-ai/claude-code',
  hookWired: true,
  // The command hook exits 2 on every failure, and the example sets
  // onFailure: "block" for a hook that cannot start or times out.
  failClosed: true,
  shellTool: (command) => ({ name: 'Bash', input: { command, description: 'Run the command' } }),

  command(ctx) {
    const dir = path.join(ctx.home, '.claude');
    fs.mkdirSync(dir, { recursive: true });
    const settings = ctx.hook ? JSON.parse(withURL(example(ctx.repo, ctx.hook.example || 'settings.command.json'), ctx.hook.url)) : {};
    fs.writeFileSync(path.join(dir, 'settings.json'), JSON.stringify(settings, null, 2));
    return {
      cmd: path.join(ctx.clientDir, 'node_modules', '.bin', 'claude'),
      args: ['-p', ctx.prompt, '--output-format', 'json', '--permission-mode', 'bypassPermissions', '--max-turns', '4'],
      env: claudeEnv(ctx),
    };
  },

  // The HTTP hook (settings.http.json): the same delete, and gated stopped.
  async extraCases(t, env, { hookCase, workspace, runClient, canaryAlive, asked, deleteBlocked }) {
    const assert = (await import('node:assert/strict')).default;
    const { deadURL } = await import('../lib/gated.mjs');
    await hookCase('HTTP hook: a recursive delete of the canary is blocked, and gated recorded why', () =>
      deleteBlocked('http-delete', { url: env.gated.url, example: 'settings.http.json' }, 'the HTTP hook'));
    await hookCase('HTTP hook: with gated stopped, the delete is still blocked (onFailure: block)', async () => {
      const ctx = { ...workspace('claude-code', 'http-gated-down'), ...env };
      const { model } = await runClient(this, ctx, { hook: { url: await deadURL(), example: 'settings.http.json' }, command: COMMANDS.delete, log: env.log });
      asked(model);
      assert.ok(canaryAlive(ctx), 'with gated stopped the HTTP hook let the delete run');
    });
    // onFailure: "block" also covers a hook command that cannot start.
    await hookCase('command hook: with gated not on PATH, the delete is still blocked (onFailure: block)', async () => {
      const ctx = { ...workspace('claude-code', 'no-binary'), ...env, gatedBin: '/nonexistent/gated' };
      const { model } = await runClient(this, ctx, { hook: { url: env.gated.url }, command: COMMANDS.delete, log: env.log });
      asked(model);
      assert.ok(canaryAlive(ctx), 'with gated missing the command hook let the delete run');
    });
  },
};
