"""copilot_pre_tool_use: a GitHub Copilot SDK on_pre_tool_use handler.

The Copilot SDK (``github-copilot-sdk``, not a dependency of this package)
runs the tool when a hook handler raises, so this handler never raises: any
failure answers deny with a reason naming it.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, Optional

from ._client import PERMISSION_DECISIONS, GatedError

# Every deny the handler makes up starts with this; gated's own denies
# (a rejected token, a broken schema, ...) come through as gated wrote them.
DENY_PREFIX = "gated could not check this call, so it is blocked: "

CopilotHandler = Callable[..., Dict[str, str]]


def copilot_pre_tool_use(client: Any) -> CopilotHandler:
    """Return a handler for the GitHub Copilot SDK's ``on_pre_tool_use`` hook.

        session = await copilot.create_session(
            on_permission_request=..., hooks={"on_pre_tool_use": copilot_pre_tool_use(client)})

    The handler takes the Copilot SDK's PreToolUseHookInput (sessionId, cwd or
    workingDirectory, toolName, toolArgs) and its invocation dict (whose
    session id is used when the input has none), asks gated's
    /v1/hooks/copilot through ``client.hook`` (the client's token, timeout
    and shadow mode), where gated's catalog gives the tool its category, and
    returns ``{"permissionDecision": "allow" | "ask" | "deny",
    "permissionDecisionReason": ...}``, a PreToolUseHookOutput.

    It never raises: on any failure (gated unreachable or slow, a non-2xx
    status, an unusable answer, a bug) it returns deny with a reason such as
    "gated could not check this call, so it is blocked: gated_timeout: ...".
    It returns synchronously, which the Copilot SDK accepts; the call blocks
    for at most the client's timeout.
    """
    if not callable(getattr(client, "hook", None)):
        raise TypeError("copilot_pre_tool_use() takes a gated.Client.")

    def on_pre_tool_use(input: Dict[str, Any],
                        invocation: Optional[Dict[str, Any]] = None) -> Dict[str, str]:
        try:
            return _ask(client, input, invocation)
        except Exception as e:  # whatever it is, the tool must not run
            return _deny(e)

    on_pre_tool_use.__qualname__ = on_pre_tool_use.__name__ = "gated_copilot_pre_tool_use"
    return on_pre_tool_use


def _ask(client: Any, input: Any, invocation: Any) -> Dict[str, str]:
    if not isinstance(input, dict):
        raise ValueError("the Copilot input could not be read (got %s)" % type(input).__name__)
    session_id = input.get("sessionId")
    if not session_id and isinstance(invocation, dict):
        # The Python SDK passes {"session_id": ...}; the wire form is sessionId.
        session_id = invocation.get("session_id") or invocation.get("sessionId")
    cwd = input.get("cwd")
    if cwd is None:
        cwd = input.get("workingDirectory")
    args = input.get("toolArgs")
    if args is None:
        args = {}
    elif not isinstance(args, dict):
        args = {"input": args}
    body = {"hook_event_name": "PreToolUse", "session_id": session_id, "cwd": cwd,
            "tool_name": input.get("toolName"), "tool_input": args}
    try:
        json.dumps(body, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as e:
        raise GatedError("gated_bad_answer", "the tool arguments cannot be encoded "
                         "as JSON: %s." % (e,)) from None
    out = client.hook("copilot", body)["hookSpecificOutput"]
    decision, reason = out["permissionDecision"], out.get("permissionDecisionReason", "")
    if decision not in PERMISSION_DECISIONS or not isinstance(reason, str):
        raise GatedError("gated_bad_answer", "gated's hook answer has no permissionDecision "
                         "of allow, ask or deny.")
    return {"permissionDecision": decision, "permissionDecisionReason": reason}


def _deny(error: BaseException) -> Dict[str, str]:
    try:
        why = str(error) or type(error).__name__
    except Exception:  # an error that cannot even say what it is
        why = type(error).__name__
    return {"permissionDecision": "deny", "permissionDecisionReason": DENY_PREFIX + why}
