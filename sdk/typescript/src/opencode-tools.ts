// OpenCode's built-in tools in Claude Code's words, for the OpenCode plugin
// (opencode.ts, which may export nothing but the plugin).

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
  const out = rename(tool, input, known.args ?? {});
  if (tool === "list") out.pattern ??= "*";
  if (tool === "multiedit" && Array.isArray(out.edits)) {
    out.edits = out.edits.map((e: unknown) => (typeof e === "object" && e !== null ? rename(tool, e as Record<string, unknown>, EDIT_ARGS) : e));
  }
  return { tool_name: known.name, tool_input: out };
}

// rename gives args with OpenCode's names in Claude Code's. OpenCode passes
// the model's arguments on unchecked for keys it does not read, so a call
// giving both names (filePath, which OpenCode reads, and file_path) with
// different values is refused: gated would judge the one OpenCode ignores.
function rename(tool: string, args: Record<string, unknown>, names: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    const name = (Object.hasOwn(names, key) ? names[key] : undefined) ?? key;
    if (Object.hasOwn(out, name) && JSON.stringify(out[name]) !== JSON.stringify(value)) {
      throw new Error(`the ${tool} call gives ${name} twice with different values`);
    }
    out[name] = value;
  }
  return out;
}
