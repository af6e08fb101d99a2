// OpenCode: `opencode run --auto`, talking OpenAI Chat Completions to the
// scripted model through a provider on @ai-sdk/openai-compatible, every
// permission allowed, its config and data in the temporary home (XDG).
import fs from 'node:fs';
import path from 'node:path';
import { baseEnv, merge, withURL } from '../lib/env.mjs';

export default {
  name: 'opencode',
  package: 'opencode-linux-x64',
  hookWired: true,
  // The plugin throws on every failure, gated's unreachability included,
  // and OpenCode blocks a tool whose tool.execute.before hook throws.
  failClosed: true,
  shellTool: (command) => ({ name: 'bash', input: { command, description: 'Run the command' } }),

  command(ctx) {
    const dir = path.join(ctx.home, '.config', 'opencode');
    fs.mkdirSync(dir, { recursive: true });
    let config = {
      $schema: 'https://opencode.ai/config.json',
      provider: {
        scripted: {
          npm: '@ai-sdk/openai-compatible',
          name: 'scripted',
          options: { baseURL: `${ctx.modelURL}/v1`, apiKey: 'scripted' },
          models: { model: { name: 'model', tool_call: true } },
        },
      },
      model: 'scripted/model',
      permission: { edit: 'allow', bash: 'allow', webfetch: 'allow', external_directory: 'allow' },
      autoupdate: false,
      share: 'disabled',
    };
    if (ctx.hook) {
      // As its README tells a user: the example names the plugin by a
      // file:// path under /path/to/gated, to be replaced by the checkout.
      // OpenCode runs ungated if that file is missing, so say so here.
      const plugin = path.join(ctx.repo, 'sdk', 'typescript', 'dist', 'opencode.js');
      if (!fs.existsSync(plugin)) throw new Error(`no ${plugin}: build the plugin (cd sdk/typescript && npm ci && npm run build; make test-real-clients does)`);
      const example = withURL(fs.readFileSync(path.join(ctx.repo, 'examples', 'opencode', 'opencode.json'), 'utf8'), ctx.hook.url).replaceAll('/path/to/gated', ctx.repo);
      config = merge(config, JSON.parse(example));
    }
    fs.writeFileSync(path.join(dir, 'opencode.json'), JSON.stringify(config, null, 2));
    return {
      cmd: path.join(ctx.clientDir, 'node_modules', 'opencode-linux-x64', 'bin', 'opencode'),
      args: ['run', '--auto', '--format', 'json', ctx.prompt],
      // Without these it waits on models.dev, an update check, and an npm
      // install of @opencode-ai/plugin into the config folder; the scripted
      // server answers npm's requests with a 404 at once.
      env: baseEnv(ctx, {
        OPENCODE_DISABLE_AUTOUPDATE: 'true',
        OPENCODE_DISABLE_LSP_DOWNLOAD: 'true',
        OPENCODE_DISABLE_MODELS_FETCH: 'true',
        npm_config_registry: `${ctx.modelURL}/npm/`,
      }),
    };
  },
};
