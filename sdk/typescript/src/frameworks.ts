// Guards for agent frameworks: the Vercel AI SDK, LangChain.js, Mastra, the
// OpenAI Agents SDK and the Claude Agent SDK. None of them is imported: each
// guard duck-types the few fields it touches, so the package keeps no runtime
// dependency and works with whatever version the application pins. The
// frameworks' own types check these shapes in test/frameworks.
import { BlockedError, type Client, type Decision, type GuardFields } from "./index.js";

/**
 * The event fields gated needs besides the tool's name and arguments
 * (tool_category, authorization_state, risk_domain, evidence_refs ...):
 * the same for every call, or given per call. The SDK never guesses
 * authority, so the application states them.
 */
export type EventFields = GuardFields | ((toolName: string, args: Record<string, unknown>) => GuardFields);

/** Options of the framework guards built on check() (all but the Claude Agent SDK's). */
export interface FrameworkGuardOptions {
  event: EventFields;
  /** As guard()'s: wait this long for a person to approve an ask in gated, then check again. Off by default. */
  waitForApprovalMs?: number;
}

/** What a guard concluded about one call. */
export interface Verdict {
  /** True only when gated accepted the call (or answered in shadow mode): the tool may run. */
  run: boolean;
  /** Why the tool may not run, for the model: gated's route, findings and decision id, or the failure. */
  reason: string;
  /** gated's decision, or the SDK's refusal; undefined when the call failed before a check. */
  decision: Decision | undefined;
}

/** Thrown in place of a tool's result (Vercel AI SDK, LangChain.js, Mastra): its message is the reason the model reads. */
export class ToolBlockedError extends Error {
  readonly decision: Decision | undefined;

  constructor(verdict: Verdict) {
    super(verdict.reason);
    this.name = "ToolBlockedError";
    this.decision = verdict.decision;
  }
}

const FAILED = "gated could not check this call, so it is blocked: ";

// A person reads the reason: it quotes at most this many findings, as gated's hook answers do.
const MAX_REASONS = 3;

const STRICTNESS = ["refuse", "defer", "ask", "accept"];

/**
 * The sentence a model reads when gated did not let a call run, in the words
 * of gated's hook answers: the route, the messages of the blocking findings
 * (strictest first, at most three), the approval a person can grant, and the
 * decision id; or, for a refusal the SDK made up, the failure that caused it.
 */
export function blockedReason(decision: Decision, waitEnded?: string): string {
  if (decision.decision_id === undefined && typeof decision.error === "string") {
    return `${FAILED}${decision.hard_blockers.join(", ") || "gated_bad_answer"}: ${decision.error}`;
  }
  const lead =
    decision.route === "ask"
      ? "gated needs a person to approve this call"
      : decision.route === "defer"
        ? "gated defers this call to a person"
        : decision.route === "refuse"
          ? "gated refuses this call"
          : "gated did not let this call run";
  let reason = lead;
  const why = findingMessages(decision);
  if (why !== "") reason += `: ${why}`;
  const approval = decision.approval;
  if (approval !== undefined && typeof approval.url === "string" && approval.url !== "") {
    reason += `; a person can approve it at ${approval.url}, and the same call then runs once`;
  }
  if (waitEnded !== undefined) reason += `; waiting for that approval ended: ${waitEnded}`;
  if (typeof decision.decision_id === "string" && decision.decision_id !== "") reason += ` (decision ${decision.decision_id})`;
  return `${reason}.`;
}

// The blocking findings' messages, strictest first; the blockers' codes when
// the answer carries no findings.
function findingMessages(decision: Decision): string {
  const findings = Array.isArray(decision.findings) ? (decision.findings as unknown[]) : [];
  const blocking = findings.filter(
    (f): f is { route: string; message: string } =>
      typeof f === "object" && f !== null && (f as { blocking?: unknown }).blocking === true && typeof (f as { message?: unknown }).message === "string",
  );
  if (blocking.length === 0) return decision.hard_blockers.join(", ");
  blocking.sort((a, b) => rank(a.route) - rank(b.route));
  let s = blocking
    .slice(0, MAX_REASONS)
    .map((f) => clean(f.message))
    .join("; ");
  if (blocking.length > MAX_REASONS) s += `; and ${blocking.length - MAX_REASONS} more`;
  return s;
}

function rank(route: string): number {
  const i = STRICTNESS.indexOf(route);
  return i < 0 ? 0 : i;
}

function clean(message: string): string {
  return message.replace(/[\x00-\x1f\x7f]+/g, " ").trim().replace(/\.$/, "");
}

/** The reason for a call that failed before gated could decide it (a bug, arguments that are not JSON). */
export function failureReason(err: unknown): string {
  let why: string;
  try {
    why = err instanceof Error ? err.message || err.name : String(err);
  } catch {
    why = "an unreadable error";
  }
  return FAILED + why;
}

/**
 * Asks gated about one call of a framework's tool, through client.guard()
 * (check() and, with waitForApprovalMs, the wait for an approval), and never
 * rejects: every failure is a verdict that does not run the tool.
 */
export async function decide(
  client: Pick<Client, "guard">,
  toolName: string,
  args: unknown,
  options: FrameworkGuardOptions,
): Promise<Verdict> {
  try {
    const proposed = asObject(args);
    const fields = typeof options.event === "function" ? options.event(toolName, proposed) : options.event;
    if (typeof fields !== "object" || fields === null) throw new TypeError("the guard's event fields are not an object");
    const guardOptions = options.waitForApprovalMs === undefined ? {} : { waitForApprovalMs: options.waitForApprovalMs };
    // The no-op stands in for the tool, which the framework runs itself
    // once this resolves.
    const permit = client.guard(async (_args: Record<string, unknown>) => {}, { ...fields, tool_name: fields.tool_name ?? toolName }, guardOptions);
    await permit(proposed);
    return { run: true, reason: "", decision: undefined };
  } catch (err) {
    if (err instanceof BlockedError) return { run: false, reason: blockedReason(err.decision, err.reason), decision: err.decision };
    return { run: false, reason: failureReason(err), decision: undefined };
  }
}

function asObject(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  return { input: value };
}

function checkClient(client: unknown, method: "guard" | "hook", who: string): void {
  if (typeof client !== "object" || client === null || typeof (client as Record<string, unknown>)[method] !== "function") {
    throw new TypeError(`${who} needs a client made by createClient().`);
  }
}

function checkOptions(options: unknown, who: string): void {
  const event = (options as { event?: unknown } | null)?.event;
  if (typeof event !== "function" && (typeof event !== "object" || event === null)) {
    throw new TypeError(`${who} needs options.event: the event fields (tool_category, authorization_state, risk_domain), or a function of the tool's name and arguments that returns them.`);
  }
}

// ---------------------------------------------------------------------------
// Vercel AI SDK (`ai`)

/** What the guard reads of an AI SDK tool: its execute, when it has one. */
export interface AiSdkTool {
  execute?: (input: any, options: any) => unknown;
  [field: string]: unknown;
}

/**
 * Returns a copy of an AI SDK tool set in which each tool's execute runs
 * only when gated accepts the call; otherwise it throws a ToolBlockedError,
 * which the AI SDK reports to the model as the tool's error (a tool-error
 * part), with gated's reason. The tool's name in the set is its tool_name.
 * Tools without execute (run by the client) are left as they are.
 *
 *     await generateText({ model, tools: gateAiSdkTools(gated, { bash, read }, { event }), prompt });
 */
export function gateAiSdkTools<T extends Record<string, AiSdkTool>>(client: Pick<Client, "guard">, tools: T, options: FrameworkGuardOptions): T {
  checkClient(client, "guard", "gateAiSdkTools()");
  checkOptions(options, "gateAiSdkTools()");
  const out: Record<string, AiSdkTool> = {};
  for (const [name, tool] of Object.entries(tools)) {
    const execute = tool.execute;
    if (typeof execute !== "function") {
      out[name] = tool;
      continue;
    }
    out[name] = {
      ...tool,
      execute: async (input: unknown, callOptions: unknown) => {
        const verdict = await decide(client, name, input, options);
        if (!verdict.run) throw new ToolBlockedError(verdict);
        return execute.call(tool, input, callOptions);
      },
    };
  }
  return out as T;
}

// ---------------------------------------------------------------------------
// LangChain.js (`@langchain/core` tools)

/**
 * What the guard needs of a LangChain tool (StructuredTool,
 * DynamicStructuredTool, tool()): a name and invoke(). It also replaces the
 * tool's _call, which TypeScript cannot name here because LangChain
 * declares it protected; a tool without one is refused at run time.
 */
export interface LangChainTool {
  name: string;
  invoke(input: any, config?: any): Promise<unknown>;
}

type LangChainCall = (arg: unknown, runManager?: unknown, parentConfig?: unknown) => Promise<unknown>;

/**
 * Returns the tool guarded: an object that inherits everything from it (so
 * it is still an instance of its class and invokes as it does) but whose
 * _call, which StructuredTool.invoke() runs after parsing the arguments,
 * runs the tool only when gated accepts the call. Otherwise it throws a
 * ToolBlockedError with gated's reason: LangGraph's ToolNode and
 * langchain's createAgent hand a tool's error to the model as a ToolMessage
 * with status "error". The tool's name is its tool_name.
 *
 *     const shell = gateLangChainTool(gated, bashTool, { event });
 */
export function gateLangChainTool<T extends LangChainTool>(client: Pick<Client, "guard">, tool: T, options: FrameworkGuardOptions): T {
  checkClient(client, "guard", "gateLangChainTool()");
  checkOptions(options, "gateLangChainTool()");
  const original = (tool as unknown as { _call?: unknown } | null)?._call;
  if (typeof tool !== "object" || tool === null || typeof original !== "function" || typeof tool.name !== "string") {
    throw new TypeError("gateLangChainTool() needs a LangChain tool (a StructuredTool with a name).");
  }
  const guarded = Object.create(tool) as T & { _call: LangChainCall };
  guarded._call = async function (this: T, arg: unknown, runManager?: unknown, parentConfig?: unknown) {
    const verdict = await decide(client, tool.name, arg, options);
    if (!verdict.run) throw new ToolBlockedError(verdict);
    return original.call(this, arg, runManager, parentConfig);
  };
  return guarded;
}

// ---------------------------------------------------------------------------
// Mastra (`@mastra/core` tools)

/** What the guard reads of a Mastra tool (createTool()). */
export interface MastraTool {
  id: string;
  execute?: (inputData: any, context?: any) => Promise<unknown>;
}

/**
 * Returns the tool guarded: an object that inherits everything from it but
 * whose execute runs the tool only when gated accepts the call, and
 * otherwise throws a ToolBlockedError with gated's reason, which Mastra's
 * agent reports to the model as the tool's error. The tool's id is its
 * tool_name.
 *
 *     new Agent({ ..., tools: { bash: gateMastraTool(gated, bash, { event }) } });
 */
export function gateMastraTool<T extends MastraTool>(client: Pick<Client, "guard">, tool: T, options: FrameworkGuardOptions): T {
  checkClient(client, "guard", "gateMastraTool()");
  checkOptions(options, "gateMastraTool()");
  if (typeof tool !== "object" || tool === null || typeof tool.id !== "string" || typeof tool.execute !== "function") {
    throw new TypeError("gateMastraTool() needs a Mastra tool with an id and an execute.");
  }
  const guarded = Object.create(tool) as T;
  const execute = tool.execute;
  guarded.execute = async function (this: T, inputData: unknown, context?: unknown) {
    const verdict = await decide(client, tool.id, inputData, options);
    if (!verdict.run) throw new ToolBlockedError(verdict);
    return execute.call(this, inputData, context);
  };
  return guarded;
}

// ---------------------------------------------------------------------------
// OpenAI Agents SDK (`@openai/agents`)

/** The part of the OpenAI Agents SDK's ToolInputGuardrailData the guardrail reads. */
export interface OpenAIAgentsToolInput {
  toolCall: { name: string; arguments: string };
}

/** The OpenAI Agents SDK's ToolGuardrailFunctionOutput. */
export interface OpenAIAgentsGuardrailOutput {
  behavior: { type: "allow" } | { type: "rejectContent"; message: string };
  outputInfo?: unknown;
}

/** An OpenAI Agents SDK ToolInputGuardrailDefinition. */
export interface OpenAIAgentsToolInputGuardrail {
  type: "tool_input";
  name: string;
  run: (data: OpenAIAgentsToolInput) => Promise<OpenAIAgentsGuardrailOutput>;
}

/**
 * Returns a tool input guardrail for the OpenAI Agents SDK, to put in a
 * function tool's inputGuardrails. It allows the call only when gated
 * accepts it; otherwise it rejects the content: the tool does not run, and
 * the model gets gated's reason as the tool's output, as the SDK does for
 * any rejecting guardrail (outputInfo holds the decision). Arguments that
 * are not a JSON object are rejected too. The function's name is the
 * tool_name.
 *
 * gated's ask is not mapped to the SDK's approval interruption
 * (needsApproval): an interruption approved in the application would run
 * the tool on a yes gated never saw, bypassing the catalog's rule that a
 * person confirms through gated. An ask is rejected with the reason, which
 * names gated's approval when gated runs with approvals; waitForApprovalMs
 * holds the call until a person decides it there.
 *
 *     tool({ name: "bash", ..., inputGuardrails: [gatedToolInputGuardrail(gated, { event })] });
 */
export function gatedToolInputGuardrail(client: Pick<Client, "guard">, options: FrameworkGuardOptions): OpenAIAgentsToolInputGuardrail {
  checkClient(client, "guard", "gatedToolInputGuardrail()");
  checkOptions(options, "gatedToolInputGuardrail()");
  return {
    type: "tool_input",
    name: "gated",
    async run(data) {
      let verdict: Verdict;
      const call = data?.toolCall;
      let args: unknown;
      try {
        args = JSON.parse(call.arguments === "" ? "{}" : call.arguments);
        if (typeof args !== "object" || args === null || Array.isArray(args)) throw new Error("the tool's arguments are not a JSON object");
        verdict = await decide(client, call.name, args, options);
      } catch (err) {
        verdict = { run: false, reason: failureReason(err), decision: undefined };
      }
      if (verdict.run) return { behavior: { type: "allow" } };
      return { behavior: { type: "rejectContent", message: verdict.reason }, outputInfo: { decision: verdict.decision } };
    },
  };
}

// ---------------------------------------------------------------------------
// Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`)
//
// Its tools are Claude Code's (Bash, Read, Edit ...), so its calls go to
// gated's Claude Code hook endpoint, in the hook's shape: the catalog gives
// each tool its category, the working directory is the workspace a command
// line is judged against, and the decision is the one Claude Code's own hook
// would get. Only allow runs the tool: ask and defer are denied with the
// reason, since a program has no person at the keyboard for Claude Code to
// ask (gated's approvals are where a person says yes).

/** Options of the Claude Agent SDK guards. */
export interface ClaudeAgentOptions {
  /** The session's working directory, the workspace (canUseTool is not told it); default: the process's. */
  cwd?: string;
  /** The session id to name in gated's evidence (canUseTool is not told it). */
  sessionId?: string;
}

/** The Claude Agent SDK's PermissionResult, as canUseTool answers it. */
export type ClaudeAgentPermissionResult =
  | { behavior: "allow"; updatedInput: Record<string, unknown> }
  | { behavior: "deny"; message: string };

/** The PreToolUse answer of a Claude Agent SDK hook callback. */
export interface ClaudeAgentHookOutput {
  hookSpecificOutput?: {
    hookEventName: "PreToolUse";
    permissionDecision: "allow" | "deny";
    permissionDecisionReason: string;
  };
}

/**
 * Asks one of gated's hook endpoints that read Claude Code's PreToolUse
 * shape (claude-code by default; opencode for the OpenCode plugin, so its
 * decisions are recorded as OpenCode's) about one call; only allow runs
 * it. An ask's reason, which speaks to Claude Code's user ("gated asks you
 * to approve"), says that nobody was asked. Never rejects.
 */
export async function askClaudeCodeHook(
  client: Pick<Client, "hook">,
  body: Record<string, unknown>,
  runtime: string,
  endpoint = "claude-code",
): Promise<{ allow: boolean; reason: string }> {
  try {
    JSON.stringify(body);
    const answer = await client.hook(endpoint, body);
    const { permissionDecision, permissionDecisionReason } = answer.hookSpecificOutput;
    let reason = String(permissionDecisionReason ?? "") || `gated answered ${String(permissionDecision)}.`;
    if (permissionDecision === "ask") reason += ` ${runtime} cannot put gated's question to a person, so the call is blocked.`;
    return { allow: permissionDecision === "allow", reason };
  } catch (err) {
    return { allow: false, reason: failureReason(err) };
  }
}

function defaultCwd(): string | undefined {
  const proc = (globalThis as { process?: { cwd?: () => string } }).process;
  return typeof proc?.cwd === "function" ? proc.cwd() : undefined;
}

/**
 * Returns a canUseTool callback for the Claude Agent SDK's query(): gated
 * decides each call as Claude Code's hook (POST /v1/hooks/claude-code); an
 * allow runs the tool with its input unchanged, anything else denies it
 * with gated's reason, which the model reads. Never rejects.
 *
 *     query({ prompt, options: { canUseTool: claudeAgentCanUseTool(gated, { cwd }) } });
 */
export function claudeAgentCanUseTool(
  client: Pick<Client, "hook">,
  options: ClaudeAgentOptions = {},
): (toolName: string, input: Record<string, unknown>, callOptions?: { toolUseID?: string; [field: string]: unknown }) => Promise<ClaudeAgentPermissionResult> {
  checkClient(client, "hook", "claudeAgentCanUseTool()");
  return async (toolName, input, callOptions) => {
    const toolInput = typeof input === "object" && input !== null && !Array.isArray(input) ? input : {};
    const answer = await askClaudeCodeHook(client, {
      hook_event_name: "PreToolUse",
      session_id: options.sessionId,
      cwd: options.cwd ?? defaultCwd(),
      tool_name: toolName,
      tool_input: toolInput,
      tool_use_id: callOptions?.toolUseID,
    }, "The Claude Agent SDK");
    return answer.allow ? { behavior: "allow", updatedInput: toolInput } : { behavior: "deny", message: answer.reason };
  };
}

/**
 * Returns a PreToolUse hook callback for the Claude Agent SDK's
 * options.hooks: it forwards the hook input, which is Claude Code's, to
 * gated's /v1/hooks/claude-code, and answers allow, or deny with gated's
 * reason. It never rejects; put it in a matcher with onFailure: "block" so
 * that a failure of the SDK's own around it blocks too. Other events get
 * an empty answer.
 *
 *     hooks: { PreToolUse: [{ hooks: [claudeAgentPreToolUse(gated)], onFailure: "block" }] }
 */
export function claudeAgentPreToolUse(
  client: Pick<Client, "hook">,
): (input: { hook_event_name: string; [field: string]: unknown }, toolUseID?: string, callOptions?: unknown) => Promise<ClaudeAgentHookOutput> {
  checkClient(client, "hook", "claudeAgentPreToolUse()");
  return async (input, toolUseID) => {
    let body: Record<string, unknown>;
    if (typeof input !== "object" || input === null) {
      body = {};
    } else {
      if (input.hook_event_name !== "PreToolUse") return {};
      body = { ...input, tool_use_id: input.tool_use_id ?? toolUseID };
    }
    const answer = await askClaudeCodeHook(client, body, "The Claude Agent SDK");
    return {
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: answer.allow ? "allow" : "deny",
        permissionDecisionReason: answer.reason,
      },
    };
  };
}
