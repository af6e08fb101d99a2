// Compiled with `tsc -p tsconfig.test.json` (no emit) against dist/index.d.ts:
// proves the public types are usable the way the README uses them, and that
// they reject what they should. Never run.
import type { SessionConfig, SessionHooks } from "@github/copilot-sdk";

import {
  BlockedError,
  copilotPreToolUse,
  createClient,
  GatedError,
  ROUTES,
  type Approval,
  type ApprovalStatus,
  type ApprovalWaitReason,
  type Client,
  type CopilotPreToolUseOutput,
  type HookAnswer,
  type PermissionDecision,
  type ClientOptions,
  type ContractEvent,
  type Decision,
  type FailureBlocker,
  type GuardFields,
  type Route,
} from "../dist/index.js";

const options: ClientOptions = {
  baseUrl: "http://127.0.0.1:8080",
  token: "t",
  timeoutMs: 500,
  shadow: false,
  onDecision: (d: Decision) => void d.route,
};
const client: Client = createClient(options);
// The README's `token: process.env.GATED_TOKEN` (string | undefined); the
// option is declared `string | undefined` so exactOptionalPropertyTypes
// consumers can pass it too.
declare const envToken: string | undefined;
void createClient({ baseUrl: "http://127.0.0.1:8080", token: envToken });

const event: ContractEvent = {
  tool_name: "send_email",
  tool_category: "write",
  authorization_state: "user_claimed",
  evidence_refs: ["draft_id:123"],
  risk_domain: "customer_support",
  proposed_arguments: { to: "customer@example.com" },
  recommended_route: "accept",
};

export async function usage(): Promise<void> {
  const decision: Decision = await client.check(event);
  const route: Route = decision.route;
  const ok: boolean = decision.execute && decision.shadow;
  const blockers: string[] = decision.hard_blockers;
  const id: string | undefined = decision.decision_id;
  void [route, ok, blockers, id, ROUTES.includes(route)];

  async function sendEmail(args: { to: string; body: string }): Promise<number> {
    return args.to.length + args.body.length;
  }
  const fields: GuardFields = { tool_category: "write", authorization_state: "confirmed", risk_domain: "customer_support" };
  const guarded = client.guard(sendEmail, fields);
  const n: number = await guarded({ to: "a@example.com", body: "hi" });
  void n;

  // A framework's extra call options pass through to the tool.
  const withOptions = client.guard((args: { q: string }, opts: { signal?: AbortSignalLike }) => args.q + String(opts.signal), {
    tool_name: "search",
    tool_category: "public_read",
    authorization_state: "none",
    risk_domain: "research",
  });
  const s: string = await withOptions({ q: "x" }, {});
  void s;

  try {
    await guarded({ to: "b@example.com", body: "hi" });
  } catch (err) {
    if (err instanceof BlockedError) {
      const blocked: Decision = err.decision;
      const code: FailureBlocker | string | undefined = blocked.hard_blockers[0];
      void code;
    }
  }

  const failure: FailureBlocker = "gated_http_401";
  void failure;

  // Waiting for a person's approval on ask.
  const waiting = client.guard(sendEmail, fields, { waitForApprovalMs: 300_000 });
  try {
    const m: number = await waiting({ to: "a@example.com", body: "hi" });
    void m;
  } catch (err) {
    if (err instanceof BlockedError) {
      const why: ApprovalWaitReason | undefined = err.reason;
      const url: string | undefined = err.decision.approval?.url;
      void [why, url];
    }
  }
  const approval: Approval = await client.approval("0193", { waitMs: 30_000 });
  const status: ApprovalStatus = approval.status;
  void status;
  // @ts-expect-error: not an approval status
  const badStatus: ApprovalStatus = "maybe";
  // @ts-expect-error: the wait is in milliseconds, a number
  client.guard(sendEmail, fields, { waitForApprovalMs: "5m" });
  void badStatus;

  // Reporting outcomes.
  const reporting = client.guard(sendEmail, fields, {
    reportOutcome: true,
    onOutcomeError: (e: GatedError) => void [e.blocker, e.code],
  });
  void reporting;
  const stored: Record<string, unknown> = await client.recordOutcome("0193", { status: "failed", error_class: "TypeError", output: { ok: false } });
  void stored;
  // @ts-expect-error: not an outcome status
  await client.recordOutcome("0193", { status: "done" });

  // @ts-expect-error: not a route
  const wrong: Route = "maybe";
  // @ts-expect-error: a guarded call needs the tool's arguments
  await guarded({ to: "c@example.com" });
  // @ts-expect-error: tool_category is the caller's to state
  client.guard(sendEmail, { authorization_state: "none", risk_domain: "research" });
  // @ts-expect-error: the event needs all seven fields
  await client.check({ tool_name: "x" });
  // @ts-expect-error: baseUrl is required
  createClient({ token: "t" });
  void wrong;
}

// The GitHub Copilot SDK (a dev dependency only, for this check): its package
// index exports SessionHooks but not PreToolUseHandler, so the handler type is
// taken from SessionHooks itself.
type PreToolUseHandler = NonNullable<SessionHooks["onPreToolUse"]>;
type PreToolUseHookInput = Parameters<PreToolUseHandler>[0];

export async function copilotUsage(): Promise<void> {
  const h: PreToolUseHandler = copilotPreToolUse(client);
  const hooks: SessionHooks = { onPreToolUse: h };
  const config: Pick<SessionConfig, "hooks"> = { hooks: { onPreToolUse: copilotPreToolUse(client) } };
  void [hooks, config];

  const input: PreToolUseHookInput = {
    sessionId: "s",
    timestamp: new Date(),
    workingDirectory: "/tmp",
    toolName: "Read",
    toolArgs: { file_path: "README.md" },
  };
  const out: CopilotPreToolUseOutput = await copilotPreToolUse(client)(input, { sessionId: "s" });
  const decision: PermissionDecision = out.permissionDecision;
  const reason: string = out.permissionDecisionReason;
  // The wire form (cwd, a millisecond timestamp) and no invocation are accepted too.
  await copilotPreToolUse(client)({ sessionId: "s", timestamp: 1795521600000, cwd: "/tmp", toolName: "Bash", toolArgs: "ls" });
  void [decision, reason];

  const answer: HookAnswer = await client.hook("copilot", { tool_name: "Read" });
  const d: PermissionDecision = answer.hookSpecificOutput.permissionDecision;
  void d;
  try {
    await client.hook("claude-code", {});
  } catch (err) {
    if (err instanceof GatedError) {
      const blocker: FailureBlocker = err.blocker;
      void blocker;
    }
  }

  // @ts-expect-error: the handler needs the client, not its options
  copilotPreToolUse(options);
  // @ts-expect-error: a Copilot input names its tool
  await copilotPreToolUse(client)({ sessionId: "s" });
}

interface AbortSignalLike {
  aborted: boolean;
}
