// Compiled with `tsc -p tsconfig.json` (no emit) against dist/*.d.ts and the
// frameworks' own types at their pinned versions: proves each guard fits
// the slot the framework gives it. Never run.
import type { CanUseTool, HookCallback, HookCallbackMatcher, Options } from "@anthropic-ai/claude-agent-sdk";
import type { StructuredTool } from "@langchain/core/tools";
import type { Plugin } from "@opencode-ai/plugin";
import { tool as openaiTool, type ToolInputGuardrailDefinition } from "@openai/agents";
import { createTool } from "@mastra/core/tools";
import { tool as aiTool, type ToolSet } from "ai";
import { tool as langchainTool } from "@langchain/core/tools";
import { z } from "zod";

import { createClient } from "../../dist/index.js";
import {
  claudeAgentCanUseTool,
  claudeAgentPreToolUse,
  gateAiSdkTools,
  gatedToolInputGuardrail,
  gateLangChainTool,
  gateMastraTool,
  type EventFields,
} from "../../dist/frameworks.js";
import gatedOpenCodePlugin from "../../dist/opencode.js";

const gated = createClient({ baseUrl: "http://127.0.0.1:8080" });
const event: EventFields = (toolName) => ({
  tool_category: toolName === "Read" ? "private_read" : "write",
  authorization_state: "authenticated",
  risk_domain: "devops",
});

// Claude Agent SDK: canUseTool and a PreToolUse hook callback in the SDK's own option types.
const canUseTool: CanUseTool = claudeAgentCanUseTool(gated, { cwd: "/work" });
const preToolUse: HookCallback = claudeAgentPreToolUse(gated);
const matcher: HookCallbackMatcher = { hooks: [preToolUse], onFailure: "block" };
export const claudeOptions: Options = { canUseTool, hooks: { PreToolUse: [matcher] } };

// OpenAI Agents SDK: the guardrail in a function tool's inputGuardrails.
const guardrail: ToolInputGuardrailDefinition = gatedToolInputGuardrail(gated, { event });
export const bash = openaiTool({
  name: "Bash",
  description: "Run a shell command",
  parameters: z.object({ command: z.string() }),
  execute: async ({ command }) => command,
  inputGuardrails: [guardrail],
});

// Vercel AI SDK: a guarded tool set is still the same ToolSet type.
const aiTools = {
  Bash: aiTool({ description: "Run a shell command", inputSchema: z.object({ command: z.string() }), execute: async ({ command }) => command }),
};
export const guardedAiTools: ToolSet = gateAiSdkTools(gated, aiTools, { event });
export const sameType: typeof aiTools = gateAiSdkTools(gated, aiTools, { event });

// LangChain.js: a guarded tool is still a StructuredTool of the same type.
const lcTool = langchainTool(async ({ command }: { command: string }) => command, {
  name: "Bash",
  description: "Run a shell command",
  schema: z.object({ command: z.string() }),
});
export const guardedLc: StructuredTool = gateLangChainTool(gated, lcTool, { event });
export const guardedLcSame: typeof lcTool = gateLangChainTool(gated, lcTool, { event });

// Mastra: a guarded tool is still the same tool type.
const mastraTool = createTool({
  id: "Bash",
  description: "Run a shell command",
  inputSchema: z.object({ command: z.string() }),
  execute: async ({ command }) => command,
});
export const guardedMastra: typeof mastraTool = gateMastraTool(gated, mastraTool, { event });

// OpenCode: the plugin is a Plugin of @opencode-ai/plugin.
export const opencodePlugin: Plugin = gatedOpenCodePlugin;

// What must not compile.
// @ts-expect-error a guard needs the event fields
gateAiSdkTools(gated, aiTools, {});
// @ts-expect-error canUseTool needs a client with hook()
claudeAgentCanUseTool({ guard: gated.guard });
