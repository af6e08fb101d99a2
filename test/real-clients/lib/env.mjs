// What every client's environment starts from: a temporary HOME, gated's
// binary first on PATH (the examples call `gated hook …` by name), and
// nothing else of the caller's: no real keys, no real config.
import path from 'node:path';

export function baseEnv(ctx, extra = {}) {
  return {
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

// exampleWithURL reads an example config and points its gated URL at url.
export function withURL(text, url) {
  return text.replaceAll('http://127.0.0.1:8080', url);
}
