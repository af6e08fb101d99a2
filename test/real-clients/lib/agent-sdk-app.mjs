// A Claude Agent SDK application, as its user writes one: the SDK's real
// query() loop, started on the Claude Code binary the harness installs
// (pathToClaudeCodeExecutable), with gated's guard from the built TypeScript
// SDK wired as docs/integrations.md shows. drivers/claude-agent-sdk.mjs
// starts it as the client process:
//
//   node agent-sdk-app.mjs PROMPT
//
// GATED_RC_AGENT_SDK: the SDK's sdk.mjs (in the pinned install);
// GATED_RC_CLAUDE: the Claude Code binary; GATED_RC_GATED_DIST: the built
// TypeScript SDK (sdk/typescript/dist); GATED_RC_GUARD: "hook" (a PreToolUse hook
// callback in a matcher with onFailure: "block", permissions bypassed, so
// only the hook is in the way), "canUseTool" (permission mode "default", so
// every call that needs permission goes through canUseTool), or "none" (no
// guard, permissions bypassed); GATED_URL: the gated the guard asks. The
// model settings (ANTHROPIC_BASE_URL, ...) are in the environment, which the
// SDK hands to Claude Code. Each message of the loop is printed as a JSON line.
const { query } = await import(process.env.GATED_RC_AGENT_SDK);
const { createClient } = await import(`${process.env.GATED_RC_GATED_DIST}/index.js`);
const { claudeAgentCanUseTool, claudeAgentPreToolUse } = await import(`${process.env.GATED_RC_GATED_DIST}/frameworks.js`);

const guard = process.env.GATED_RC_GUARD;
const cwd = process.cwd();
const options = {
  cwd,
  pathToClaudeCodeExecutable: process.env.GATED_RC_CLAUDE,
  env: { ...process.env },
  // No settings from disk: the guard given here is the only one.
  settingSources: [],
  maxTurns: 4,
  stderr: (data) => process.stderr.write(data),
};
if (guard === 'hook') {
  const gated = createClient({ baseUrl: process.env.GATED_URL });
  Object.assign(options, {
    permissionMode: 'bypassPermissions',
    allowDangerouslySkipPermissions: true,
    hooks: { PreToolUse: [{ hooks: [claudeAgentPreToolUse(gated)], onFailure: 'block' }] },
  });
} else if (guard === 'canUseTool') {
  const gated = createClient({ baseUrl: process.env.GATED_URL });
  Object.assign(options, { permissionMode: 'default', canUseTool: claudeAgentCanUseTool(gated, { cwd }) });
} else if (guard === 'none') {
  Object.assign(options, { permissionMode: 'bypassPermissions', allowDangerouslySkipPermissions: true });
} else {
  throw new Error(`GATED_RC_GUARD is ${JSON.stringify(guard)}, not hook, canUseTool or none`);
}

for await (const message of query({ prompt: process.argv[2], options })) {
  console.log(JSON.stringify(message));
}
