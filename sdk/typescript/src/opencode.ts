// gated's OpenCode plugin (`@gatedhq/gated/opencode`). OpenCode calls every
// function this module exports as a plugin, so it exports one, as default,
// and the mapping of tools lives in opencode-tools.ts.
//
// Each tool call reaches gated's OpenCode hook endpoint (/v1/hooks/opencode,
// so the audit names OpenCode as the agent) in Claude Code's shape:
// OpenCode's tool names and arguments are mapped to Claude Code's (bash
// {command} to Bash {command}, read {filePath} to Read {file_path}, ...), so
// the one catalog that serves Claude Code, Codex and Copilot serves OpenCode
// too, with its argument rules and the workspace (OpenCode's directory) a
// command line is judged against. OpenCode cannot ask, so gated answers an
// ask or a defer with a deny saying a person must approve. OpenCode blocks a
// tool when a tool.execute.before hook throws, and shows the error to the
// model: the plugin throws on everything but allow, gated's failures
// included.
import { createClient, type Client } from "./index.js";
import { askClaudeCodeHook, failureReason } from "./frameworks.js";
import { openCodeToClaudeCode } from "./opencode-tools.js";

/**
 * The plugin's options, from OpenCode's config (`"plugin": [["@gatedhq/gated/opencode", {...}]]`);
 * the plugin takes them as an untyped object, as OpenCode passes them, and checks each.
 */
export interface OpenCodeGatedOptions {
  /** gated's base URL; default $GATED_URL, else http://127.0.0.1:8080. */
  url?: string;
  /** Bearer token; default $GATED_TOKEN. */
  token?: string;
  /** Bound of each check in milliseconds; default 2000. */
  timeoutMs?: number;
  /** A client to use instead of one made from the options above (tests, custom fetch). */
  client?: Pick<Client, "hook">;
}

/** What the plugin reads of OpenCode's PluginInput. */
export interface OpenCodePluginInput {
  directory?: string;
  worktree?: string;
  [field: string]: unknown;
}

/** The hooks the plugin returns. */
export interface OpenCodeGatedHooks {
  "tool.execute.before": (input: { tool: string; sessionID?: string; callID?: string }, output: { args: any }) => Promise<void>;
}

// OpenCode's config is JSON nobody type-checked: each option is checked here.
function clientFrom(opts: OpenCodeGatedOptions): Pick<Client, "hook"> {
  if (typeof opts !== "object" || opts === null) throw new TypeError("the plugin's options are not an object");
  if (opts.client !== undefined) {
    if (typeof opts.client?.hook !== "function") throw new TypeError("the plugin's client option is not a client made by createClient()");
    return opts.client;
  }
  for (const key of ["url", "token"] as const) {
    if (opts[key] !== undefined && typeof opts[key] !== "string") throw new TypeError(`the plugin's ${key} option is not a string`);
  }
  return createClient({
    baseUrl: opts.url ?? env("GATED_URL") ?? "http://127.0.0.1:8080",
    token: opts.token ?? env("GATED_TOKEN"),
    ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }),
  });
}

/**
 * The workspace a bash call is judged in: OpenCode's directory, or the
 * call's workdir when it lies inside it (a narrower workspace is never a
 * looser one). A workdir elsewhere gives no workspace at all, so no path
 * counts as inside it and nothing is taken for a harmless read.
 */
function workspaceOf(directory: string | undefined, workdir: unknown): string | undefined {
  if (workdir === undefined || workdir === null || workdir === "" || workdir === directory) return directory;
  if (typeof workdir !== "string" || directory === undefined || workdir.split(/[\\/]/).includes("..")) return "";
  if (!workdir.startsWith("/") && !/^[A-Za-z]:|^\\/.test(workdir)) return `${directory.replace(/[\\/]+$/, "")}/${workdir}`;
  return workdir.startsWith(`${directory.replace(/[\\/]+$/, "")}/`) ? workdir : "";
}

function env(name: string): string | undefined {
  const value = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];
  return value === "" ? undefined : value;
}

/**
 * The OpenCode plugin: a tool.execute.before hook that asks gated about
 * each call and throws, blocking it, unless gated allows it. A bad option
 * does not fail the plugin's start (OpenCode would then run without it): it
 * blocks every call with the reason instead.
 */
export default async function gatedOpenCodePlugin(input: OpenCodePluginInput, options: Record<string, unknown> = {}): Promise<OpenCodeGatedHooks> {
  let client: Pick<Client, "hook"> | undefined;
  let broken = "";
  try {
    client = clientFrom((options ?? {}) as OpenCodeGatedOptions);
  } catch (err) {
    broken = failureReason(err);
  }
  const directory = typeof input?.directory === "string" ? input.directory : undefined;

  return {
    "tool.execute.before": async (call, output) => {
      if (client === undefined) throw new Error(broken);
      let reason: string;
      try {
        const { tool_name, tool_input } = openCodeToClaudeCode(call.tool, output?.args);
        const cwd = call.tool === "bash" ? workspaceOf(directory, tool_input.workdir) : directory;
        const answer = await askClaudeCodeHook(
          client,
          { hook_event_name: "PreToolUse", session_id: call.sessionID, cwd, tool_name, tool_input, tool_use_id: call.callID },
          "OpenCode",
          "opencode",
        );
        if (answer.allow) return;
        reason = answer.reason;
      } catch (err) {
        reason = failureReason(err);
      }
      throw new Error(reason);
    },
  };
}
