// TypeScript client of gated's POST /pre-tool-check. It follows the shared
// SDK contract in ../README.md: check() never rejects for a failure of gated
// or of the network but answers a refusal, and guard() runs a tool only when
// gated allows it. No runtime dependencies: global fetch (Node >= 18) only.

/** The four routes of the Agent Action Contract v1, loosest first. */
export type Route = "accept" | "ask" | "defer" | "refuse";

/** The routes gated may answer; anything else is a bad answer. */
export const ROUTES: readonly Route[] = Object.freeze(["accept", "ask", "defer", "refuse"]);

export type ToolCategory = "public_read" | "private_read" | "write" | "unknown";

export type AuthorizationState = "none" | "user_claimed" | "authenticated" | "validated" | "confirmed";

export type RiskDomain =
  | "devops"
  | "finance"
  | "education"
  | "hr"
  | "legal"
  | "pharma"
  | "healthcare"
  | "commerce"
  | "customer_support"
  | "security"
  | "research"
  | "personal_productivity"
  | "public_information"
  | "unknown";

/** One piece of evidence behind an event (see the contract's JSON schema). */
export interface EvidenceRef {
  source_id: string;
  kind:
    | "user_message"
    | "assistant_message"
    | "tool_result"
    | "policy"
    | "auth_event"
    | "approval"
    | "system_state"
    | "audit_record"
    | "other";
  trust_tier: "verified" | "runtime" | "user_claimed" | "unverified" | "unknown";
  redaction_status: "public" | "redacted" | "sensitive" | "unknown";
  freshness: {
    status: "fresh" | "stale" | "unknown";
    checked_at?: string;
    max_age_hours?: number;
    age_hours?: number;
    source?: string;
  };
  provenance: string;
  summary?: string;
  retrieved_at?: string;
  citation_url?: string;
  retrieval_url?: string;
  supports?: string[];
  contradicts?: string[];
}

/** An Agent Action Contract v1 event: the seven required fields and the optional ones. */
export interface ContractEvent {
  tool_name: string;
  tool_category: ToolCategory;
  authorization_state: AuthorizationState;
  /** Full refs, or short string ids such as "draft_id:123" that gated normalises. */
  evidence_refs: Array<EvidenceRef | string>;
  risk_domain: RiskDomain;
  proposed_arguments: Record<string, unknown>;
  recommended_route: Route;
  schema_version?: "aana.agent_tool_precheck.v1";
  request_id?: string;
  agent_id?: string;
  user_intent?: string;
  authorization_subject?: {
    subject_type?:
      | "user"
      | "account"
      | "client"
      | "employee"
      | "student"
      | "patient"
      | "case"
      | "service"
      | "unknown";
    subject_ref?: string;
  };
}

/**
 * What guard() needs besides the call's arguments. tool_category,
 * authorization_state and risk_domain are the caller's to state: the SDK
 * never guesses authority. tool_name defaults to the tool function's name,
 * evidence_refs to [] and recommended_route to "accept".
 */
export type GuardFields = Omit<
  ContractEvent,
  "tool_name" | "evidence_refs" | "recommended_route" | "proposed_arguments"
> &
  Partial<Pick<ContractEvent, "tool_name" | "evidence_refs" | "recommended_route">>;

/** The hard blocker of a refusal the SDK makes up when gated gave no decision. */
export type FailureBlocker = "gated_unreachable" | "gated_timeout" | "gated_bad_answer" | `gated_http_${number}`;

/** Where an approval is in its life. */
export type ApprovalStatus = "pending" | "approved" | "denied" | "expired" | "used";

/** The statuses of an approval; anything else is a bad answer. */
export const APPROVAL_STATUSES: readonly ApprovalStatus[] = Object.freeze(["pending", "approved", "denied", "expired", "used"]);

/**
 * A person's answer to an ask, as gated holds it. An ask or defer answer
 * carries a pending one (`decision.approval`) when gated runs with approvals
 * (a database and tokens); client.approval() reads it again.
 */
export interface Approval {
  id: string;
  status: ApprovalStatus;
  expires_at?: string;
  /** Binds the approval to one call: tool, arguments, requester and agent. */
  digest?: string;
  /** Where a person approves or denies it. */
  url?: string;
  /** What the retried event appends to its evidence_refs (on the approval a decision carries). */
  evidence_ref?: EvidenceRef;
  [field: string]: unknown;
}

/**
 * Why waiting for an approval ended a guarded call (BlockedError.reason):
 * the approval was denied, expired or used, the wait ran out, or a failure
 * while waiting (its blocker).
 */
export type ApprovalWaitReason = "approval_denied" | "approval_expired" | "approval_used" | "approval_timeout" | FailureBlocker;

/** Options of one guard(). */
export interface GuardOptions {
  /**
   * Wait up to this many milliseconds for a person to decide when gated answers
   * ask or defer with an approval: guard long-polls it with the client's token
   * (at most 30 s per request, each request's timeout being its wait plus
   * timeoutMs) and, once it is approved, sends the same event again with the
   * approval's evidence_ref appended; the tool runs only if that answer is
   * accept. Denied, expired or used approvals and the end of the wait throw
   * BlockedError with the asking decision and a reason; a failure while
   * waiting throws BlockedError with the refusal naming it. Off by default.
   */
  waitForApprovalMs?: number;
  /**
   * Report the outcome of a call the tool ran to gated, on the decision it
   * ran on: succeeded when it resolved, failed with the class of what it
   * threw (its constructor's name, never its message) when it threw. The
   * guarded call still resolves or rejects exactly as the tool did; a failed
   * report goes to onOutcomeError. Off by default.
   */
  reportOutcome?: boolean;
  /** Called with a failed outcome report (reportOutcome), before the guarded call settles; left out, the failure is dropped. */
  onOutcomeError?: (error: GatedError) => void;
}

/** The Action API's terminal statuses, an outcome's status. */
export type OutcomeStatus = "succeeded" | "reverted" | "queued" | "rejected" | "failed";

/** What a runtime reports about a call gated let run (docs/audit.md#outcomes). */
export interface OutcomeReport {
  status: OutcomeStatus;
  /** With failed or reverted only: the class of the error the call raised, never its message. */
  error_class?: string;
  /** The call's output: gated keeps only its fingerprint, and whether it met the tool's outputSchema. */
  output?: unknown;
  verification?: { ok: boolean };
  repair?: { attempted: boolean; ok: boolean };
  rollback?: { attempted: boolean; ok: boolean };
}

/** gated's answer, or a refusal synthesized by the SDK (which has `error` and no `decision_id`). */
export interface Decision {
  route: Route;
  execute: boolean;
  /** True when gated decided in shadow mode: the tool may run, the route is what it would have been. */
  shadow: boolean;
  hard_blockers: string[];
  decision_id?: string;
  /** Set on a synthesized refusal: a sentence saying what went wrong. */
  error?: string;
  /** The pending approval of an ask or defer, when gated runs with approvals. */
  approval?: Approval;
  /** gated's answer carries more fields (findings, reasons, audit, ...). */
  [field: string]: unknown;
}

export interface ClientOptions {
  /** gated's base URL, e.g. "http://127.0.0.1:8080". */
  baseUrl: string;
  /**
   * Bearer token. Left out, undefined or "" sends no Authorization header
   * (gated running without --tokens), so `token: process.env.GATED_TOKEN`
   * works either way.
   */
  token?: string | undefined;
  /** Bound of the whole exchange, reading the answer included. Default 2000. */
  timeoutMs?: number;
  /** Ask gated to decide in shadow mode (?shadow_mode=true). Default false. */
  shadow?: boolean;
  /**
   * Called by guard() only, once per guarded call, with the decision it acts
   * on (synthesized refusals included), before the tool runs or BlockedError
   * is thrown; check() does not call it. Called synchronously; if it throws,
   * the call fails with that error and the tool does not run. A guard with
   * waitForApprovalMs calls it with each decision in turn: the asking one
   * (before the wait; approval.url is where the person decides), then the
   * retried one or the refusal of a failed wait.
   */
  onDecision?: (decision: Decision) => void;
}

export interface Client {
  /** Asks gated about one event. Resolves with a refusal, never rejects, when gated cannot answer. Does not call onDecision. */
  check(event: ContractEvent): Promise<Decision>;
  /**
   * Wraps a tool so that each call is checked first. The first argument of a
   * call becomes proposed_arguments; any further arguments (a framework's
   * call options, say) are passed to the tool and never sent to gated.
   * Calls onDecision with each call's decision, then throws BlockedError
   * when the tool may not run. With options.waitForApprovalMs it waits for
   * an approval on ask (see GuardOptions); onDecision then sees each
   * decision in turn: the asking one (with approval.url to show the person),
   * then the retried one or the refusal of a failed wait.
   */
  guard<F extends (args: any, ...rest: any[]) => unknown>(
    tool: F,
    eventFields: GuardFields,
    options?: GuardOptions,
  ): (...args: Parameters<F>) => Promise<Awaited<ReturnType<F>>>;
  /**
   * Reads an approval with the client's token (the requester may read its
   * own). With waitMs gated holds the answer while the approval is pending,
   * up to waitMs (at most 60000, gated's limit: a longer wait is taken as
   * 60000); the request's timeout is waitMs plus timeoutMs. Fails closed like hook(): it rejects with a
   * GatedError naming the blocker (gated_http_404 for an approval gated does
   * not know, gated_bad_answer for an answer that is not this approval with
   * a known status).
   */
  approval(id: string, options?: { waitMs?: number }): Promise<Approval>;
  /**
   * Forwards a coding agent's PreToolUse hook input, as the runtime sent it,
   * to gated's /v1/hooks/{runtime} (e.g. "copilot", "claude-code"), where
   * gated's catalog gives the tool its category and gated decides. Fails
   * closed: on any failure, or an answer whose permissionDecision is not
   * allow, ask or deny, it rejects with a GatedError naming the blocker, and
   * the caller must block the tool. copilotPreToolUse() is built on it.
   */
  hook(runtime: string, input: Record<string, unknown>): Promise<HookAnswer>;
  /**
   * Reports the outcome of a decision with the client's token (gated takes
   * one per decision, from the token that asked) and resolves with what gated
   * stored. A 404 decision_unknown is tried again for about 1.5 s, while an
   * async record may not be stored yet. Rejects with a GatedError on any
   * failure; its code is gated's (outcome_exists, decision_not_yours, ...).
   */
  recordOutcome(decisionId: string, outcome: OutcomeReport): Promise<Record<string, unknown>>;
}

/** A coding agent's permission decision, as gated's hook endpoints answer it. */
export type PermissionDecision = "allow" | "ask" | "deny";

/** gated's answer to a coding agent's PreToolUse hook (/v1/hooks/{runtime}). */
export interface HookAnswer {
  hookSpecificOutput: {
    hookEventName: string;
    permissionDecision: PermissionDecision;
    permissionDecisionReason: string;
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

/**
 * The failure of an exchange with gated that gave no usable answer, as
 * hook() rejects with it. Its message is "<blocker>: <sentence>".
 */
export class GatedError extends Error {
  readonly blocker: FailureBlocker;
  /** gated's error code on a non-2xx answer that has one (decision_unknown, outcome_exists, ...). */
  readonly code: string | undefined;

  constructor(blocker: FailureBlocker, sentence: string, code?: string) {
    super(`${blocker}: ${sentence}`);
    this.name = "GatedError";
    this.blocker = blocker;
    this.code = code;
  }
}

/** Thrown by a guarded tool that gated did not let run. */
export class BlockedError extends Error {
  /** The last decision the call got: gated's answer, or the SDK's refusal. */
  readonly decision: Decision;
  /** Set when the call waited for an approval and the wait ended it; undefined otherwise. */
  readonly reason: ApprovalWaitReason | undefined;

  constructor(decision: Decision, reason?: ApprovalWaitReason) {
    const blockers = decision.hard_blockers.length > 0 ? decision.hard_blockers.join(", ") : "none";
    let message = `gated did not let the tool run: route ${decision.route}, hard blockers: ${blockers}`;
    if (reason !== undefined) message += `; waiting for approval ended: ${reason}`;
    message += ".";
    if (typeof decision.error === "string") message += ` ${decision.error}`;
    super(message);
    this.name = "BlockedError";
    this.decision = decision;
    this.reason = reason;
  }
}

// A hostile or broken answer must not exhaust memory; real decisions are a
// few KiB.
const MAX_ANSWER_BYTES = 4 << 20;

// The longest one long-poll of a guarded call's wait asks gated to hold an
// answer (gated caps a request at 60 s).
const APPROVAL_POLL_MS = 30_000;

// The longest gated holds one GET of an approval; it refuses a longer wait.
const MAX_APPROVAL_WAIT_MS = 60_000;

// The least time between two polls: a pending answer that comes back sooner
// (a gated or proxy that does not hold it) is followed by a pause, so that it
// is not asked again in a tight loop.
const APPROVAL_POLL_MIN_MS = 1_000;

// setTimeout fires at once for delays beyond 2^31-1 ms.
const MAX_TIMER_MS = 2147483647;

// The pauses before each new try of an outcome report gated answered 404
// decision_unknown: with the default async audit durability a decision's
// record is stored within about 100 ms of its answer, so a fast tool's report
// can arrive first.
const OUTCOME_RETRY_MS = [100, 200, 400, 800];

// The longest error_class gated takes.
const MAX_ERROR_CLASS = 128;

export function createClient(options: ClientOptions): Client {
  const opts = validate(options);
  const base = opts.baseUrl.replace(/\/+$/, "");
  const query = opts.shadow ? "?shadow_mode=true" : "";
  const url = base + "/pre-tool-check" + query;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json",
  };
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  const getHeaders: Record<string, string> = { ...headers };
  delete getHeaders["content-type"];

  async function check(event: ContractEvent): Promise<Decision> {
    if (typeof event !== "object" || event === null || Array.isArray(event)) {
      throw new TypeError("check() needs an event object.");
    }
    let body: string;
    try {
      body = JSON.stringify(event);
    } catch (err) {
      throw new TypeError(`The event cannot be encoded as JSON: ${(err as Error).message}`);
    }
    let text: string;
    try {
      text = await exchange(url, headers, body, opts.timeoutMs);
    } catch (err) {
      if (err instanceof Failure) return refusal(err.blocker, err.sentence);
      throw err;
    }
    try {
      return toDecision(text);
    } catch (err) {
      return refusal("gated_bad_answer", `gated's answer is not a decision: ${(err as Error).message}.`);
    }
  }

  async function hook(runtime: string, input: Record<string, unknown>): Promise<HookAnswer> {
    if (typeof runtime !== "string" || runtime === "") throw new TypeError("hook() needs a runtime name, e.g. \"copilot\".");
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      throw new TypeError("hook() needs the hook input as an object.");
    }
    let body: string;
    try {
      body = JSON.stringify(input);
    } catch (err) {
      throw new TypeError(`The hook input cannot be encoded as JSON: ${(err as Error).message}`);
    }
    let text: string;
    try {
      text = await exchange(`${base}/v1/hooks/${encodeURIComponent(runtime)}${query}`, headers, body, opts.timeoutMs);
    } catch (err) {
      if (err instanceof Failure) throw new GatedError(err.blocker, err.sentence);
      throw err;
    }
    try {
      return toHookAnswer(text);
    } catch (err) {
      throw new GatedError("gated_bad_answer", `gated's hook answer is unusable: ${(err as Error).message}.`);
    }
  }

  // One read of an approval; rejects with a Failure when there is no usable answer.
  async function readApproval(id: string, waitMs: number): Promise<Approval> {
    let target = `${base}/v1/approvals/${encodeURIComponent(id)}`;
    let timeoutMs = opts.timeoutMs;
    if (waitMs > 0) {
      waitMs = Math.min(waitMs, MAX_APPROVAL_WAIT_MS);
      // status=pending: hold the answer only while the approval is pending,
      // so one decided before the request answers at once.
      target += `?status=pending&wait=${Math.ceil(waitMs)}ms`;
      timeoutMs = Math.min(timeoutMs + Math.ceil(waitMs), MAX_TIMER_MS);
    }
    const text = await exchange(target, getHeaders, undefined, timeoutMs);
    try {
      return toApproval(text, id);
    } catch (err) {
      throw new Failure("gated_bad_answer", `gated's answer is not the approval: ${(err as Error).message}.`);
    }
  }

  async function approval(id: string, options: { waitMs?: number } = {}): Promise<Approval> {
    if (typeof id !== "string" || id === "") throw new TypeError("approval() needs the approval's id, a non-empty string.");
    const waitMs = options?.waitMs ?? 0;
    if (typeof waitMs !== "number" || !(waitMs >= 0)) throw new RangeError("waitMs must be a number of milliseconds, 0 or more.");
    try {
      return await readApproval(id, waitMs);
    } catch (err) {
      if (err instanceof Failure) throw new GatedError(err.blocker, err.sentence);
      throw err;
    }
  }

  async function recordOutcome(decisionId: string, outcome: OutcomeReport): Promise<Record<string, unknown>> {
    if (typeof decisionId !== "string" || decisionId === "") {
      throw new GatedError("gated_bad_answer", "an outcome needs the decision's id.");
    }
    const body = JSON.stringify(outcome);
    const target = `${base}/v1/decisions/${encodeURIComponent(decisionId)}/outcome`;
    for (let attempt = 0; ; attempt++) {
      let text: string;
      try {
        text = await exchange(target, headers, body, opts.timeoutMs);
      } catch (err) {
        if (!(err instanceof Failure)) throw err;
        if (err.code !== "decision_unknown" || attempt === OUTCOME_RETRY_MS.length) {
          throw new GatedError(err.blocker, err.sentence, err.code);
        }
        await new Promise((resolve) => setTimeout(resolve, OUTCOME_RETRY_MS[attempt]));
        continue;
      }
      try {
        const answer: unknown = JSON.parse(text);
        if (typeof answer === "object" && answer !== null && !Array.isArray(answer)) return answer as Record<string, unknown>;
      } catch {
        // reported below
      }
      throw new GatedError("gated_bad_answer", "gated's answer is not the stored outcome.");
    }
  }

  function guard<F extends (args: any, ...rest: any[]) => unknown>(
    tool: F,
    eventFields: GuardFields,
    guardOptions: GuardOptions = {},
  ): (...args: Parameters<F>) => Promise<Awaited<ReturnType<F>>> {
    if (typeof tool !== "function") throw new TypeError("guard() needs a tool function.");
    if (typeof eventFields !== "object" || eventFields === null || Array.isArray(eventFields)) {
      throw new TypeError("guard() needs an object of event fields (tool_category, authorization_state, risk_domain).");
    }
    if (typeof guardOptions !== "object" || guardOptions === null) throw new TypeError("guard()'s options must be an object.");
    const waitMs = guardOptions.waitForApprovalMs;
    if (waitMs !== undefined && (typeof waitMs !== "number" || !(waitMs > 0) || !Number.isFinite(waitMs))) {
      throw new RangeError("waitForApprovalMs must be a number of milliseconds above 0, or left out.");
    }
    const { reportOutcome = false, onOutcomeError } = guardOptions;
    if (typeof reportOutcome !== "boolean") throw new TypeError("reportOutcome must be true or false.");
    if (onOutcomeError !== undefined && typeof onOutcomeError !== "function") throw new TypeError("onOutcomeError must be a function.");
    const fields = { ...eventFields }; // later changes to the caller's object do not leak in
    const toolName = fields.tool_name ?? tool.name;
    if (typeof toolName !== "string" || toolName === "") {
      throw new TypeError("guard() needs a tool name: pass a named function or set eventFields.tool_name.");
    }
    const call = async (args: Parameters<F>): Promise<Awaited<ReturnType<F>>> =>
      (await (tool as (...a: unknown[]) => unknown)(...args)) as Awaited<ReturnType<F>>;
    // Reports an outcome; a failure goes to onOutcomeError, never to the caller.
    const report = async (decision: Decision, outcome: OutcomeReport): Promise<void> => {
      try {
        await recordOutcome(decision.decision_id ?? "", outcome);
      } catch (err) {
        if (!(err instanceof GatedError)) throw err;
        onOutcomeError?.(err);
      }
    };
    // Runs the tool on decision, reporting its outcome when asked to.
    const run = async (args: Parameters<F>, decision: Decision): Promise<Awaited<ReturnType<F>>> => {
      if (!reportOutcome) return call(args);
      let result: Awaited<ReturnType<F>>;
      try {
        result = await call(args);
      } catch (err) {
        await report(decision, { status: "failed", error_class: errorClass(err) });
        throw err;
      }
      await report(decision, { status: "succeeded" });
      return result;
    };
    return async (...args: Parameters<F>): Promise<Awaited<ReturnType<F>>> => {
      const event = {
        ...fields,
        tool_name: toolName,
        evidence_refs: fields.evidence_refs ?? [],
        recommended_route: fields.recommended_route ?? "accept",
        proposed_arguments: asArguments(args[0]),
      } as ContractEvent;
      const decision = await check(event);
      opts.onDecision?.(decision);
      if (decision.execute === true && (decision.route === "accept" || decision.shadow === true)) return run(args, decision);
      const asked = waitMs === undefined ? undefined : awaited(decision);
      if (asked === undefined) throw new BlockedError(decision);

      const deadline = performance.now() + waitMs!;
      for (;;) {
        const left = deadline - performance.now();
        if (left <= 0) throw new BlockedError(decision, "approval_timeout");
        const polled = performance.now();
        let current: Approval;
        try {
          current = await readApproval(asked.id, Math.min(left, APPROVAL_POLL_MS));
        } catch (err) {
          if (!(err instanceof Failure)) throw err;
          const refused = refusal(err.blocker, err.sentence);
          opts.onDecision?.(refused);
          throw new BlockedError(refused, err.blocker);
        }
        if (current.status === "approved") break;
        if (current.status !== "pending") throw new BlockedError(decision, `approval_${current.status}`);
        const rest = Math.min(polled + APPROVAL_POLL_MIN_MS, deadline) - performance.now();
        if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
      }
      // gated refuses an event whose evidence_refs is not an array, so this is a guard only.
      if (!Array.isArray(event.evidence_refs)) throw new BlockedError(decision);
      const retried = await check({ ...event, evidence_refs: [...event.evidence_refs, asked.evidence_ref] });
      opts.onDecision?.(retried);
      // Only accept: a retry never runs the tool on anything else.
      if (retried.route === "accept" && retried.execute === true) return run(args, retried);
      throw new BlockedError(retried);
    };
  }

  return { check, guard, hook, approval, recordOutcome };
}

// The class of what a tool threw: its constructor's name, or the type of a
// thrown primitive; never its message.
function errorClass(thrown: unknown): string {
  if (thrown === null) return "null";
  if (typeof thrown !== "object") return typeof thrown;
  const name = (thrown as { constructor?: { name?: unknown } }).constructor?.name;
  return (typeof name === "string" && name !== "" ? name : "Object").slice(0, MAX_ERROR_CLASS);
}

// proposed_arguments must be a JSON object; a tool called with anything else
// (a string, an array, nothing) is described as {input: value}.
function asArguments(value: unknown): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  return { input: value };
}

interface ValidOptions {
  baseUrl: string;
  token: string | undefined;
  timeoutMs: number;
  shadow: boolean;
  onDecision: ((decision: Decision) => void) | undefined;
}

function validate(options: ClientOptions): ValidOptions {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("createClient() needs an options object with a baseUrl.");
  }
  const { baseUrl, token, timeoutMs = 2000, shadow = false, onDecision } = options;
  if (typeof baseUrl !== "string" || baseUrl === "") {
    throw new TypeError('baseUrl must be gated\'s http(s) URL, e.g. "http://127.0.0.1:8080".');
  }
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch {
    throw new TypeError(`baseUrl is not a URL: ${JSON.stringify(baseUrl)}.`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new TypeError(`baseUrl must use http or https, not ${parsed.protocol.replace(/:$/, "")}.`);
  }
  // fetch refuses URLs with credentials, and the token belongs in `token`.
  if (parsed.username !== "" || parsed.password !== "") {
    throw new TypeError("baseUrl must not hold credentials; pass the token as `token`.");
  }
  if (parsed.search !== "" || parsed.hash !== "") {
    throw new TypeError("baseUrl must not have a query or a fragment.");
  }
  // "" means no token, as in the Go client: GATED_TOKEN= (or unset) talks to
  // a gated running without --tokens.
  if (token !== undefined && (typeof token !== "string" || !/^[\x21-\x7e]*$/.test(token))) {
    throw new TypeError('token must be a string of visible ASCII characters; leave it out (or pass "") to send none.');
  }
  // setTimeout fires at once for delays beyond 2^31-1 ms.
  if (typeof timeoutMs !== "number" || !(timeoutMs > 0) || timeoutMs > 2147483647) {
    throw new RangeError("timeoutMs must be a number of milliseconds above 0 (at most 2147483647).");
  }
  if (typeof shadow !== "boolean") throw new TypeError("shadow must be true or false.");
  if (onDecision !== undefined && typeof onDecision !== "function") {
    throw new TypeError("onDecision must be a function.");
  }
  return { baseUrl, token: token === "" ? undefined : token, timeoutMs, shadow, onDecision };
}

// The approval a guarded call may wait for: on an ask or defer answer, one
// with an id and an evidence_ref to retry with.
function awaited(decision: Decision): (Approval & { evidence_ref: EvidenceRef }) | undefined {
  const a = decision.approval as unknown;
  if (decision.route !== "ask" && decision.route !== "defer") return undefined;
  if (typeof a !== "object" || a === null || Array.isArray(a)) return undefined;
  const { id, evidence_ref: ref } = a as Record<string, unknown>;
  if (typeof id !== "string" || id === "" || typeof ref !== "object" || ref === null || Array.isArray(ref)) return undefined;
  return a as Approval & { evidence_ref: EvidenceRef };
}

function toApproval(text: string, id: string): Approval {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new Error("it is not JSON");
  }
  if (typeof answer !== "object" || answer === null || Array.isArray(answer)) throw new Error("it is not a JSON object");
  const a = answer as Record<string, unknown>;
  if (a.id !== id) throw new Error("it names another approval");
  if (typeof a.status !== "string" || !(APPROVAL_STATUSES as readonly string[]).includes(a.status)) {
    throw new Error("its status is missing or not one of pending, approved, denied, expired, used");
  }
  return a as Approval;
}

function refusal(blocker: FailureBlocker, error: string): Decision {
  return { route: "refuse", execute: false, shadow: false, hard_blockers: [blocker], error };
}

class BadAnswer extends Error {}

// An exchange that gave no usable answer: check() turns it into a refusal,
// hook() into a GatedError.
class Failure extends Error {
  constructor(
    readonly blocker: FailureBlocker,
    readonly sentence: string,
    readonly code?: string,
  ) {
    super(`${blocker}: ${sentence}`);
  }
}

// One exchange with gated under one deadline: resolves with a 2xx answer's
// body, and rejects with a Failure for everything else. The order of the
// catch branches matters: an abort by our timer is a timeout wherever it
// strikes.
// A body of undefined makes it a GET.
async function exchange(url: string, headers: Record<string, string>, body: string | undefined, timeoutMs: number): Promise<string> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const timeout = () => new Failure("gated_timeout", `gated did not answer within ${timeoutMs} ms.`);
  try {
    let res: Response;
    try {
      // redirect "manual": a 3xx is not gated's decision, so it is a failure, not a hop.
      const method = body === undefined ? "GET" : "POST";
      res = await fetch(url, { method, headers, ...(body === undefined ? {} : { body }), redirect: "manual", signal: controller.signal });
    } catch (err) {
      if (timedOut) throw timeout();
      throw new Failure("gated_unreachable", `gated is unreachable: ${describe(err)}.`);
    }

    if (res.status < 200 || res.status > 299) {
      // Whatever the body says, a non-2xx is a failure; gated's error sentence,
      // when there is one, makes the refusal easier to act on.
      let detail = "";
      let code: string | undefined;
      try {
        const answer = JSON.parse(await readBounded(res)) as { error?: unknown; code?: unknown } | null;
        const error = answer?.error;
        if (typeof error === "string" && error !== "") detail = `: ${error.replace(/[\x00-\x1f\x7f]+/g, " ").slice(0, 300)}`;
        if (typeof answer?.code === "string" && answer.code !== "") code = answer.code;
      } catch {
        // The status alone decides.
      }
      throw new Failure(`gated_http_${res.status}`, `gated answered HTTP ${res.status}${detail.replace(/\.$/, "")}.`, code);
    }

    try {
      return await readBounded(res);
    } catch (err) {
      if (timedOut) throw timeout();
      const why = err instanceof BadAnswer ? err.message : `it was cut short (${describe(err)})`;
      throw new Failure("gated_bad_answer", `gated's answer is not a decision: ${why}.`);
    }
  } finally {
    clearTimeout(timer);
  }
}

// Reads the body as UTF-8, stopping at MAX_ANSWER_BYTES.
async function readBounded(res: Response): Promise<string> {
  if (res.body === null) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel().catch(() => {});
      throw new BadAnswer(`it is larger than ${MAX_ANSWER_BYTES >> 20} MiB`);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new BadAnswer("it is not UTF-8");
  }
}

function toDecision(text: string): Decision {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new Error("it is not JSON");
  }
  if (typeof answer !== "object" || answer === null || Array.isArray(answer)) {
    throw new Error("it is not a JSON object");
  }
  const a = answer as Record<string, unknown>;
  if (typeof a.route !== "string" || !(ROUTES as readonly string[]).includes(a.route)) {
    throw new Error("its route is missing or not one of accept, ask, defer, refuse");
  }
  if (typeof a.execute !== "boolean") throw new Error("its execute is missing or not a boolean");
  // The contract requires only route and execute; the other fields guard()
  // and callers read get safe defaults so that the Decision type holds.
  return {
    ...a,
    route: a.route as Route,
    execute: a.execute,
    shadow: a.shadow === true,
    hard_blockers: Array.isArray(a.hard_blockers) ? a.hard_blockers.filter((b): b is string => typeof b === "string") : [],
  };
}

const PERMISSION_DECISIONS: readonly string[] = ["allow", "ask", "deny"];

function toHookAnswer(text: string): HookAnswer {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new Error("it is not JSON");
  }
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
  if (!isObject(answer)) throw new Error("it is not a JSON object");
  const out = answer.hookSpecificOutput;
  if (!isObject(out)) throw new Error("it has no hookSpecificOutput object");
  const { permissionDecision: decision, permissionDecisionReason: reason = "", hookEventName: event = "" } = out;
  if (typeof decision !== "string" || !PERMISSION_DECISIONS.includes(decision)) {
    throw new Error(`it has no permissionDecision of allow, ask or deny (got ${JSON.stringify(decision) ?? "nothing"})`);
  }
  if (typeof reason !== "string") throw new Error("its permissionDecisionReason is not a string");
  if (typeof event !== "string") throw new Error("its hookEventName is not a string");
  return {
    ...answer,
    hookSpecificOutput: { ...out, hookEventName: event, permissionDecision: decision as PermissionDecision, permissionDecisionReason: reason },
  };
}

// undici reports "fetch failed" and keeps the reason in err.cause, e.g.
// "connect ECONNREFUSED 127.0.0.1:9" or "getaddrinfo ENOTFOUND gated.internal".
function describe(err: unknown): string {
  let reason = String(err);
  for (let e: unknown = err, depth = 0; typeof e === "object" && e !== null && depth < 4; depth++) {
    const { message, cause } = e as { message?: unknown; cause?: unknown };
    if (typeof message === "string" && message !== "") reason = message;
    e = cause;
  }
  return reason.replace(/\.$/, "");
}

// ---------------------------------------------------------------------------
// GitHub Copilot SDK

/**
 * What the handler reads of the GitHub Copilot SDK's PreToolUseHookInput
 * (`@github/copilot-sdk`, which this package does not depend on). The
 * TypeScript SDK names the working directory `workingDirectory`; the wire
 * form the Copilot CLI and the Python SDK use names it `cwd`. Both are read.
 */
export interface CopilotPreToolUseInput {
  sessionId?: string;
  workingDirectory?: string;
  cwd?: string;
  toolName: string;
  toolArgs?: unknown;
  /** A Date or milliseconds since the epoch; not sent to gated. */
  timestamp?: unknown;
}

/** The Copilot SDK's hook invocation: the session that runs the hook. */
export interface CopilotInvocation {
  sessionId?: string;
}

/** The handler's answer, a PreToolUseHookOutput of the Copilot SDK. */
export interface CopilotPreToolUseOutput {
  permissionDecision: PermissionDecision;
  permissionDecisionReason: string;
}

/** A handler for the Copilot SDK's `hooks.onPreToolUse`. It never rejects. */
export type CopilotPreToolUseHandler = (
  input: CopilotPreToolUseInput,
  invocation?: CopilotInvocation,
) => Promise<CopilotPreToolUseOutput>;

/**
 * Returns a handler for the GitHub Copilot SDK's `onPreToolUse` hook:
 *
 *     const session = await copilot.createSession({ hooks: { onPreToolUse: copilotPreToolUse(gated) } });
 *
 * Each call goes to gated's /v1/hooks/copilot through client.hook() (the
 * client's token, timeout and shadow mode), where gated's catalog gives the
 * tool its category, and gated's allow, ask or deny is returned with its
 * reason. The handler never throws and never rejects, because the Copilot SDK
 * runs the tool when a handler fails: any failure (gated unreachable or slow,
 * a non-2xx status, an unusable answer, a bug) answers deny with a reason
 * naming it, e.g. "gated could not check this call, so it is blocked:
 * gated_timeout: ...".
 */
export function copilotPreToolUse(client: Pick<Client, "hook">): CopilotPreToolUseHandler {
  if (typeof client !== "object" || client === null || typeof client.hook !== "function") {
    throw new TypeError("copilotPreToolUse() needs a client made by createClient().");
  }
  return async (input, invocation) => {
    try {
      if (typeof input !== "object" || input === null) throw new Error("the Copilot input could not be read");
      const args = input.toolArgs;
      const body = {
        hook_event_name: "PreToolUse",
        session_id: input.sessionId || invocation?.sessionId,
        cwd: input.workingDirectory ?? input.cwd,
        tool_name: input.toolName,
        tool_input: args === undefined || args === null ? {} : typeof args === "object" && !Array.isArray(args) ? args : { input: args },
      };
      try {
        JSON.stringify(body);
      } catch (err) {
        throw new GatedError("gated_bad_answer", `the tool arguments cannot be encoded as JSON: ${(err as Error).message}`);
      }
      const answer = await client.hook("copilot", body);
      const { permissionDecision, permissionDecisionReason } = answer.hookSpecificOutput;
      if (!PERMISSION_DECISIONS.includes(permissionDecision)) {
        throw new GatedError("gated_bad_answer", "gated's hook answer has no permissionDecision of allow, ask or deny");
      }
      return { permissionDecision, permissionDecisionReason: String(permissionDecisionReason ?? "") };
    } catch (err) {
      return copilotDeny(err);
    }
  };
}

function copilotDeny(err: unknown): CopilotPreToolUseOutput {
  let why: string;
  try {
    why = err instanceof Error ? err.message || err.name : String(err);
  } catch {
    why = "an unreadable error";
  }
  return { permissionDecision: "deny", permissionDecisionReason: `gated could not check this call, so it is blocked: ${why}` };
}
