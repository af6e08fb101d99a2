// gated's OpenCode plugin (`@gatedhq/gated/opencode`). OpenCode calls every
// function this module exports as a plugin, so it exports one, as default.
//
// Each tool call reaches gated's Claude Code hook endpoint in Claude Code's
// shape: OpenCode's tool names and arguments are mapped to Claude Code's
// (bash {command} to Bash {command}, read {filePath} to Read {file_path},
// ...), so the one catalog that serves Claude Code, Codex and Copilot serves
// OpenCode too, with its argument rules and the workspace (OpenCode's
// directory) a command line is judged against. OpenCode blocks a tool when a
// tool.execute.before hook throws, and shows the error to the model: the
// plugin throws on everything but allow, gated's failures included.
import { createClient, type Client } from "./index.js";
import { failureReason } from "./frameworks.js";

/** The plugin's options, from OpenCode's config (`"plugin": [["@gatedhq/gated/opencode", {...}]]`). */
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

/** A tool call in Claude Code's words, as the catalog names tools and arguments. */
export interface ClaudeCodeCall {
  tool_name: string;
  tool_input: Record<string, unknown>;
}

// OpenCode's built-in tools and their arguments, in Claude Code's words.
// Arguments not listed keep their names.
const TOOLS: Record<string, { name: string; args?: Record<string, string> }> = {
  bash: { name: "Bash" },
  read: { name: "Read", args: { filePath: "file_path" } },
  write: { name: "Write", args: { filePath: "file_path" } },
  edit: { name: "Edit", args: { filePath: "file_path", oldString: "old_string", newString: "new_string", replaceAll: "replace_all" } },
  multiedit: { name: "MultiEdit", args: { filePath: "file_path" } },
  glob: { name: "Glob" },
  grep: { name: "Grep", args: { include: "glob" } },
  // A directory listing reads what a glob of the directory reads.
  list: { name: "Glob" },
  webfetch: { name: "WebFetch" },
  websearch: { name: "WebSearch" },
  todowrite: { name: "TodoWrite" },
  todoread: { name: "TodoWrite" },
  task: { name: "Task", args: { subagentType: "subagent_type" } },
  patch: { name: "apply_patch", args: { patchText: "command" } },
  apply_patch: { name: "apply_patch", args: { patchText: "command" } },
};

const EDIT_ARGS: Record<string, string> = { oldString: "old_string", newString: "new_string", replaceAll: "replace_all" };

/**
 * Maps an OpenCode tool call to Claude Code's tool name and arguments. A
 * tool OpenCode does not build in (an MCP server's, a custom one) keeps its
 * name and arguments, and the catalog decides it by that name.
 */
export function openCodeToClaudeCode(tool: string, args: unknown): ClaudeCodeCall {
  const input = typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : args === undefined || args === null ? {} : { input: args };
  const known = Object.hasOwn(TOOLS, tool) ? TOOLS[tool] : undefined;
  if (known === undefined) return { tool_name: tool, tool_input: { ...input } };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) out[known.args?.[key] ?? key] = value;
  if (tool === "list") out.pattern ??= "*";
  if (tool === "multiedit" && Array.isArray(out.edits)) {
    out.edits = out.edits.map((e: unknown) =>
      typeof e === "object" && e !== null ? Object.fromEntries(Object.entries(e).map(([k, v]) => [EDIT_ARGS[k] ?? k, v])) : e,
    );
  }
  return { tool_name: known.name, tool_input: out };
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
export default async function gatedOpenCodePlugin(input: OpenCodePluginInput, options: OpenCodeGatedOptions = {}): Promise<OpenCodeGatedHooks> {
  let client: Pick<Client, "hook"> | undefined;
  let broken = "";
  try {
    const opts = options ?? {};
    client =
      opts.client ??
      createClient({
        baseUrl: opts.url ?? env("GATED_URL") ?? "http://127.0.0.1:8080",
        token: opts.token ?? env("GATED_TOKEN"),
        ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }),
      });
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
        // bash's workdir moves the command out of the workspace: with no
        // workspace, no path counts as inside it, so nothing is judged a
        // harmless read of the workspace.
        const workdir = call.tool === "bash" ? tool_input.workdir : undefined;
        const cwd = workdir === undefined || workdir === directory ? directory : "";
        const answer = await client.hook("claude-code", {
          hook_event_name: "PreToolUse",
          session_id: call.sessionID,
          cwd,
          tool_name,
          tool_input,
          tool_use_id: call.callID,
        });
        const { permissionDecision, permissionDecisionReason } = answer.hookSpecificOutput;
        if (permissionDecision === "allow") return;
        reason = String(permissionDecisionReason ?? "") || `gated answered ${String(permissionDecision)}`;
      } catch (err) {
        reason = failureReason(err);
      }
      throw new Error(reason);
    },
  };
}
