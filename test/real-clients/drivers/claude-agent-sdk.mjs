// The Claude Agent SDK: its real query() loop (lib/agent-sdk-app.mjs), on
// the Claude Code binary clients/claude-code installs, talking Anthropic
// Messages to the scripted model, with gated's guard from the built
// TypeScript SDK as a PreToolUse hook callback (onFailure: "block", every
// permission bypassed), and in extra cases as canUseTool.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { claudeEnv } from '../lib/env.mjs';
import { install } from '../lib/install.mjs';
import { COMMANDS } from '../lib/cases.mjs';
import { deadURL } from '../lib/gated.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

export default {
  name: 'claude-agent-sdk',
  package: '@anthropic-ai/claude-agent-sdk',
  hookWired: true,
  // The guard denies on every failure (gated unreachable included), and
  // onFailure: "block" covers a callback that throws.
  failClosed: true,
  shellTool: (command) => ({ name: 'Bash', input: { command, description: 'Run the command' } }),

  command(ctx) {
    const dist = path.join(ctx.repo, 'sdk', 'typescript', 'dist');
    if (!fs.existsSync(path.join(dist, 'frameworks.js'))) throw new Error(`no ${dist}/frameworks.js: build the TypeScript SDK (cd sdk/typescript && npm ci && npm run build; make test-real-clients does)`);
    // The binary of the Claude Code pin (its install is cached): the SDK's
    // release 0.3.328 is built for Claude Code 2.1.328.
    const claude = path.join(install(path.join(here, '..', 'clients', 'claude-code')), 'node_modules', '.bin', 'claude');
    return {
      cmd: process.execPath,
      args: [path.join(here, '..', 'lib', 'agent-sdk-app.mjs'), ctx.prompt],
      env: claudeEnv(ctx, {
        GATED_RC_AGENT_SDK: path.join(ctx.clientDir, 'node_modules', '@anthropic-ai', 'claude-agent-sdk', 'sdk.mjs'),
        GATED_RC_CLAUDE: claude,
        GATED_RC_GATED_DIST: dist,
        GATED_RC_GUARD: ctx.hook ? ctx.hook.guard || 'hook' : 'none',
        ...(ctx.hook ? { GATED_URL: ctx.hook.url } : {}),
      }),
    };
  },

  // canUseTool, the SDK's other place for a guard: it is asked only in a
  // permission mode that asks, so these run in "default".
  async extraCases(t, env, { hookCase, workspace, runClient, canaryAlive, asked, deleteBlocked }) {
    await hookCase('canUseTool: a recursive delete of the canary is blocked, and gated recorded why', () =>
      deleteBlocked('cut-delete', { url: env.gated.url, guard: 'canUseTool' }, 'canUseTool'));
    await hookCase('canUseTool: with gated stopped, the delete is still blocked', async () => {
      const ctx = { ...workspace('claude-agent-sdk', 'cut-gated-down'), ...env };
      const { model } = await runClient(this, ctx, { hook: { url: await deadURL(), guard: 'canUseTool' }, command: COMMANDS.delete, log: env.log });
      asked(model);
      assert.ok(canaryAlive(ctx), 'with gated stopped canUseTool let the delete run');
    });
  },
};
