// Gemini CLI: `gemini -p` in --yolo mode, talking streamGenerateContent
// (SSE) to the scripted model, with ~/.gemini/settings.json choosing API-key
// auth (without it the CLI exits 41 before any request).
import fs from 'node:fs';
import path from 'node:path';
import assert from 'node:assert/strict';
import { baseEnv, merge, withURL } from '../lib/env.mjs';
import { COMMANDS } from '../lib/cases.mjs';

export default {
  name: 'gemini-cli',
  package: '@google/gemini-cli',
  hookWired: true,
  // A BeforeTool command hook blocks on exit 2; gated's hook exits 2 on
  // every failure it sees.
  failClosed: true,
  shellTool: (command) => ({ name: 'run_shell_command', input: { command, description: 'Run the command' } }),

  command(ctx) {
    const dir = path.join(ctx.home, '.gemini');
    fs.mkdirSync(dir, { recursive: true });
    let settings = { security: { auth: { selectedType: 'gemini-api-key' } } };
    if (ctx.hook) settings = merge(settings, JSON.parse(withURL(fs.readFileSync(path.join(ctx.repo, 'examples', 'gemini-cli', 'settings.json'), 'utf8'), ctx.hook.url)));
    fs.writeFileSync(path.join(dir, 'settings.json'), JSON.stringify(settings, null, 2));
    return {
      cmd: path.join(ctx.clientDir, 'node_modules', '.bin', 'gemini'),
      args: ['-p', ctx.prompt, '--yolo', '-o', 'json', '-m', 'gemini-2.5-pro'],
      env: baseEnv(ctx, {
        GOOGLE_GEMINI_BASE_URL: ctx.modelURL,
        GEMINI_API_KEY: 'scripted',
        GEMINI_CLI_TRUST_WORKSPACE: 'true',
      }),
    };
  },

  // A hook that cannot start: Gemini CLI blocks on a hook command that does not exist (exit 127).
  async extraCases(t, env, { hookCase, workspace, runClient, canaryAlive, asked }) {
    await hookCase('with neither gated nor gated-hook on PATH, the delete is still blocked', async () => {
      const ctx = { ...workspace('gemini-cli', 'no-binary'), ...env, gatedBin: '/nonexistent/gated' };
      const { model } = await runClient(this, ctx, { hook: { url: env.gated.url }, command: COMMANDS.delete, log: env.log });
      asked(model);
      assert.ok(canaryAlive(ctx), 'with gated-hook missing Gemini CLI ran the delete: update examples/gemini-cli/README.md');
    });
  },
};
