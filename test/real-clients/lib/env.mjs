// What every client's environment starts from: a temporary HOME, the folder
// of gated's binaries first on PATH (the examples call `gated hook …` or
// `gated-hook …` by name; `make gated-bin` puts both in bin/), and nothing
// else of the caller's: no real keys, no real config.
import path from 'node:path';

// A proxy nobody listens on, for everything but loopback: a client that
// tries to reach its real service (telemetry, updates, model lists) fails at
// once, even on a machine with a network, and the scripted turn is all it
// talks to.
const NOWHERE = 'http://127.0.0.1:9';

export function baseEnv(ctx, extra = {}) {
  return {
    HTTP_PROXY: NOWHERE,
    HTTPS_PROXY: NOWHERE,
    ALL_PROXY: NOWHERE,
    http_proxy: NOWHERE,
    https_proxy: NOWHERE,
    all_proxy: NOWHERE,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    PATH: [path.dirname(ctx.gatedBin), path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
    HOME: ctx.home,
    XDG_CONFIG_HOME: path.join(ctx.home, '.config'),
    XDG_CACHE_HOME: path.join(ctx.home, '.cache'),
    XDG_DATA_HOME: path.join(ctx.home, '.local', 'share'),
    XDG_STATE_HOME: path.join(ctx.home, '.local', 'state'),
    TMPDIR: process.env.TMPDIR || '/tmp',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
    CI: '1',
    ...extra,
  };
}

// claudeEnv is the environment of the Claude Code binary, run as `claude -p`
// or under the Agent SDK: baseEnv and extra, the scripted model, and none
// of its own traffic.
export function claudeEnv(ctx, extra = {}) {
  return baseEnv(ctx, {
    ...extra,
    ANTHROPIC_BASE_URL: ctx.modelURL,
    ANTHROPIC_API_KEY: 'sk-ant-scripted',
    // Claude Code refuses bypassPermissions as root unless told it runs in
    // a sandbox, which this throwaway home is.
    IS_SANDBOX: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
  });
}

// exampleWithURL reads an example config and points its gated URL at url.
export function withURL(text, url) {
  return text.replaceAll('http://127.0.0.1:8080', url);
}

// merge deep-merges overlay into base (objects key by key, anything else
// replaced), as a user merges an example snippet into their settings.
export function merge(base, overlay) {
  const isObj = (v) => v && typeof v === 'object' && !Array.isArray(v);
  const out = { ...base };
  for (const [k, v] of Object.entries(overlay)) out[k] = isObj(v) && isObj(out[k]) ? merge(out[k], v) : v;
  return out;
}
