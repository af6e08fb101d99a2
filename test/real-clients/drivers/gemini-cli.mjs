// Gemini CLI: `gemini -p` in --yolo mode, talking streamGenerateContent
// (SSE) to the scripted model, with ~/.gemini/settings.json choosing API-key
// auth (without it the CLI exits 41 before any request).
import fs from 'node:fs';
import path from 'node:path';
import { baseEnv, firstExample, merge, withURL } from '../lib/env.mjs';

const EXAMPLES = ['gemini-cli/settings.json'];

export default {
  name: 'gemini-cli',
  package: '@google/gemini-cli',
  // Switches on when gated hook gemini-cli's example lands (issue 27 §1).
  hookWired: (ctx) => firstExample(ctx.repo, EXAMPLES) ? true : `gated hook gemini-cli's example (examples/${EXAMPLES.join(' or examples/')}) is not on this branch yet`,
  // A BeforeTool command hook blocks on exit 2; gated's hook exits 2 on
  // every failure it sees.
  failClosed: true,
  shellTool: (command) => ({ name: 'run_shell_command', input: { command, description: 'Run the command' } }),

  command(ctx) {
    const dir = path.join(ctx.home, '.gemini');
    fs.mkdirSync(dir, { recursive: true });
    let settings = { security: { auth: { selectedType: 'gemini-api-key' } } };
    if (ctx.hook) settings = merge(settings, JSON.parse(withURL(fs.readFileSync(firstExample(ctx.repo, EXAMPLES), 'utf8'), ctx.hook.url)));
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
};
