"""Client.check asks gated about one tool call; Client.guard wraps a tool.

The client fails closed: every failure of gated or of the network becomes a
refusal whose only hard blocker names the failure (see ../../README.md).
It never logs anything, least of all the tool's arguments.
"""

from __future__ import annotations

import asyncio
import functools
import http.client
import inspect
import json
import math
import re
import socket
import ssl
import time
from typing import Any, Callable, Dict, Generator, Optional, Tuple
from urllib.parse import quote, urlsplit

from . import __version__

ROUTES = ("accept", "ask", "defer", "refuse")

# The statuses of an approval; a guarded call that waited and was blocked
# by one has the reason "approval_<status>" (or "approval_timeout").
APPROVAL_STATUSES = ("pending", "approved", "denied", "expired", "used")

# The longest one long-poll of a guarded call's wait asks gated to hold an
# answer (gated caps a call at 60 s).
APPROVAL_POLL_SECONDS = 30.0

# The longest gated holds one GET of an approval; it refuses a longer wait.
_MAX_APPROVAL_WAIT_SECONDS = 60.0

# The least time between two polls: a pending answer that comes back sooner
# (a gated or proxy that does not hold it) is followed by a pause, so that
# it is not asked again in a tight loop.
_APPROVAL_POLL_MIN_SECONDS = 1.0

# The pauses before each new try of an outcome report gated answered 404
# decision_unknown: with the default async audit durability a decision's
# record is stored within about 100 ms of its answer, so a fast tool's
# report can arrive first.
_OUTCOME_RETRY_SECONDS = (0.1, 0.2, 0.4, 0.8)

# The longest error_class gated takes.
_MAX_ERROR_CLASS = 128

# The most of an answer the client reads: a real decision is a few KiB, and
# a hostile or broken answer must not be able to exhaust memory.
MAX_ANSWER_BYTES = 4 << 20

_CONTROL = re.compile(r"[\x00-\x20\x7f]")
# What a token must not hold: anything but visible ASCII.
_NOT_TOKEN = re.compile(r"[^\x21-\x7e]")

Decision = Dict[str, Any]


class Blocked(Exception):
    """Raised by a guarded tool that gated did not let run.

    ``decision`` is the last decision the call got: gated's answer, or the
    client's synthesized refusal. ``reason`` is set when the call waited for
    an approval (wait_for_approval) and the wait ended it: approval_denied,
    approval_expired, approval_used, approval_timeout, or the blocker of a
    failure while waiting (e.g. gated_unreachable); it is None otherwise.
    """

    def __init__(self, decision: Decision, tool: Optional[str] = None,
                 reason: Optional[str] = None):
        self.decision = decision
        self.tool = tool
        self.reason = reason
        blockers = decision.get("hard_blockers") or []
        if not isinstance(blockers, list):
            blockers = [blockers]
        message = "gated did not let %s run: route %s" % (
            tool or "the tool", decision.get("route"))
        if blockers:
            message += "; hard blockers: " + ", ".join(str(b) for b in blockers)
        if reason:
            message += "; waiting for approval ended: " + reason
        message += "."
        if decision.get("error"):
            message += " " + str(decision["error"])
        super().__init__(message)


class GatedError(Exception):
    """An exchange with gated that gave no usable answer.

    Raised by Client.hook(); check() turns the same failures into a refusal.
    ``blocker`` names the failure (gated_unreachable, gated_timeout,
    gated_http_<status>, gated_bad_answer) and ``sentence`` says what went
    wrong; the message is "<blocker>: <sentence>". ``code`` is gated's own
    error code on a non-2xx answer that has one (decision_unknown,
    outcome_exists, ...), else None.
    """

    def __init__(self, blocker: str, sentence: str, code: Optional[str] = None):
        super().__init__("%s: %s" % (blocker, sentence))
        self.blocker = blocker
        self.sentence = sentence
        self.code = code


class _BadAnswer(Exception):
    """A 2xx answer that holds no decision; its message is a sentence."""


def _refusal(blocker: str, error: str) -> Decision:
    return {"route": "refuse", "execute": False, "shadow": False,
            "hard_blockers": [blocker], "error": error}


class Client:
    """A client of gated's POST /pre-tool-check.

    base_url: gated's http:// or https:// URL (a path prefix is kept).
    token: bearer token, sent as ``Authorization: Bearer <token>``. None or
        "" sends no Authorization header (gated running without --tokens),
        so ``token=os.environ.get("GATED_TOKEN")`` works either way.
    timeout: seconds gated has to answer. It bounds connecting, the wait for
        the answer and the whole body read (name resolution is the system's,
        and headers dripped byte by byte can stretch it, as in most clients).
    shadow: ask gated for shadow mode (``?shadow_mode=true``): gated reports
        the would-be route and lets the tool run; failures still block.
    on_decision: called by guarded tools only, once per call, with the
        decision (a synthesized refusal included), before the tool runs or
        Blocked is raised (for example to log shadow routes). check() does
        not call it. A tool guarded with wait_for_approval calls it with
        each decision in turn: the asking one (before the wait; its
        approval's url is where the person decides), then the retried one or
        the refusal of a failed wait.
    """

    def __init__(self, base_url: str, token: Optional[str] = None,
                 timeout: float = 2.0, shadow: bool = False,
                 on_decision: Optional[Callable[[Decision], Any]] = None):
        if not isinstance(base_url, str) or _CONTROL.search(base_url):
            raise ValueError("base_url must be a URL string without spaces "
                             "or control characters, got %r." % (base_url,))
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("base_url must be an http:// or https:// URL "
                             "with a host, got %r." % (base_url,))
        try:
            port = parts.port
        except ValueError:
            raise ValueError("base_url has an invalid port.") from None
        if parts.username is not None or parts.password is not None:
            # Not echoed: it holds credentials. Credentials go in token=.
            raise ValueError("base_url must not carry credentials; "
                             "pass the token as token= instead.")
        if parts.query or parts.fragment:
            raise ValueError("base_url must not have a query or fragment, "
                             "got %r." % (base_url,))
        if token is not None and (not isinstance(token, str)
                                  or _NOT_TOKEN.search(token)):
            # Not echoed: a token is a secret.
            raise ValueError("token must be None or a string of visible "
                             "ASCII characters (no spaces or control "
                             "characters); None or \"\" sends none.")
        if (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                or not math.isfinite(timeout) or timeout <= 0):
            raise ValueError("timeout must be a positive number of seconds, "
                             "got %r." % (timeout,))
        if not isinstance(shadow, bool):
            raise ValueError("shadow must be True or False, got %r." % (shadow,))
        if on_decision is not None and not callable(on_decision):
            raise ValueError("on_decision must be callable or None.")

        self.base_url = base_url.rstrip("/")
        self.timeout = float(timeout)
        self.shadow = shadow
        self.on_decision = on_decision
        # "" means no token, as in the Go client: GATED_TOKEN= (or unset)
        # talks to a gated running without --tokens.
        self._token = token or None
        self._host = parts.hostname
        self._port = port
        self._prefix = parts.path.rstrip("/")
        self._query = "?shadow_mode=true" if shadow else ""
        self._path = self._prefix + "/pre-tool-check" + self._query
        self._ssl = ssl.create_default_context() if parts.scheme == "https" else None

    def __repr__(self) -> str:  # without the token
        return "gated.Client(%r, shadow=%r, timeout=%r)" % (
            self.base_url, self.shadow, self.timeout)

    # -- check ------------------------------------------------------------

    def check(self, event: Decision) -> Decision:
        """Post the event to gated and return its decision.

        Never raises for a failure of gated or the network: it returns a
        refusal naming the failure instead. An event that is not a dict of
        JSON values is the caller's bug and raises TypeError/ValueError.
        """
        if not isinstance(event, dict):
            raise TypeError("check() takes the event as a dict, got %s."
                            % type(event).__name__)
        body = json.dumps(event, separators=(",", ":"), allow_nan=False).encode("utf-8")
        try:
            return self._ask(self._path, body, _decision)
        except GatedError as e:
            return _refusal(e.blocker, e.sentence)

    # -- hook -------------------------------------------------------------

    def hook(self, runtime: str, input: Dict[str, Any]) -> Dict[str, Any]:
        """Forward a coding agent's PreToolUse hook input to gated.

        The input goes, as the runtime sent it, to gated's
        /v1/hooks/{runtime} (e.g. "copilot", "claude-code"), where gated's
        catalog gives the tool its category, and gated's answer comes back
        as a dict whose ``hookSpecificOutput`` has a ``permissionDecision``
        of allow, ask or deny and a ``permissionDecisionReason``. It fails
        closed: on any failure it raises GatedError naming the blocker, and
        the caller must block the tool. An input that is not a dict of JSON
        values is the caller's bug and raises TypeError/ValueError.
        """
        if not isinstance(runtime, str) or not runtime:
            raise TypeError("hook() takes the runtime's name, e.g. \"copilot\".")
        if not isinstance(input, dict):
            raise TypeError("hook() takes the hook input as a dict, got %s."
                            % type(input).__name__)
        body = json.dumps(input, separators=(",", ":"), allow_nan=False).encode("utf-8")
        path = self._prefix + "/v1/hooks/" + quote(runtime, safe="") + self._query
        return self._ask(path, body, _hook_answer)

    # -- approvals --------------------------------------------------------

    def approval(self, approval_id: str, wait: float = 0) -> Dict[str, Any]:
        """Read an approval with the client's token and return it as a dict.

        The requester may read its own approval: ``id``, ``status``
        (pending, approved, denied, expired or used), ``expires_at`` ...
        With wait > 0 (seconds) gated holds the answer while the approval is
        pending, up to wait (at most 60 s, gated's limit: a longer wait is
        taken as 60); the request's timeout is wait plus the client's
        timeout. It fails closed like
        hook(): on any failure it raises GatedError naming the blocker
        (gated_http_404 for an approval gated does not know,
        gated_bad_answer for an answer that is not this approval with a
        known status).
        """
        if not isinstance(approval_id, str) or not approval_id:
            raise TypeError("approval() takes the approval's id, a non-empty string.")
        if (isinstance(wait, bool) or not isinstance(wait, (int, float))
                or not math.isfinite(wait) or wait < 0):
            raise ValueError("wait must be a number of seconds, 0 or more, got %r." % (wait,))
        path = self._prefix + "/v1/approvals/" + quote(approval_id, safe="")
        timeout = self.timeout
        if wait > 0:
            wait = min(wait, _MAX_APPROVAL_WAIT_SECONDS)
            # status=pending: hold the answer only while the approval is
            # pending, so one decided before the call answers at once.
            path += "?status=pending&wait=%dms" % math.ceil(wait * 1000)
            timeout += wait
        return self._ask(path, None, lambda raw: _approval(raw, approval_id),
                         method="GET", timeout=timeout)

    def _approval_or_failure(self, approval_id: str, wait: float) -> Any:
        """approval(), with the failure returned rather than raised."""
        try:
            return self.approval(approval_id, wait)
        except GatedError as e:
            return e

    # -- outcomes ---------------------------------------------------------

    def record_outcome(self, decision_id: str, status: str,
                       error_class: Optional[str] = None, **fields: Any) -> Dict[str, Any]:
        """Report what happened after a call gated let run, and return the
        outcome gated stored (docs/audit.md#outcomes).

        status is an Action API terminal status (succeeded, reverted,
        queued, rejected, failed); error_class, with failed or reverted
        only, the class of the error the call raised, never its message.
        fields may add ``output`` (gated keeps only its fingerprint, and
        whether it met the tool's outputSchema), ``verification``,
        ``repair`` and ``rollback``. gated takes it once, from the token
        that asked for the decision. A 404 decision_unknown is tried again
        for about 1.5 s, while an async record may not be stored yet. On
        any failure it raises GatedError, whose ``code`` is gated's
        (outcome_exists, decision_not_yours, ...).
        """
        if not isinstance(decision_id, str) or not decision_id:
            raise GatedError("gated_bad_answer", "an outcome needs the decision's id.")
        outcome = dict(fields, status=status)
        if error_class is not None:
            outcome["error_class"] = error_class
        body = json.dumps(outcome, separators=(",", ":"), allow_nan=False).encode("utf-8")
        path = self._prefix + "/v1/decisions/" + quote(decision_id, safe="") + "/outcome"
        for pause in (*_OUTCOME_RETRY_SECONDS, None):
            try:
                return self._ask(path, body, _json_object)
            except GatedError as e:
                if e.code != "decision_unknown" or pause is None:
                    raise
            time.sleep(pause)
        raise AssertionError("unreachable")  # the last try returns or raises

    def _report_outcome(self, decision: Decision, error: Optional[BaseException],
                        on_error: Optional[Callable[[GatedError], Any]]) -> None:
        """Report a guarded call's outcome on the decision it ran on; a
        failure goes to on_error, never to the caller of the tool."""
        fields: Dict[str, Any] = {"status": "succeeded"}
        if error is not None:
            fields = {"status": "failed",
                      "error_class": type(error).__qualname__[:_MAX_ERROR_CLASS]}
        try:
            self.record_outcome(decision.get("decision_id"), **fields)
        except GatedError as e:
            if on_error is not None:
                on_error(e)

    # -- the exchange -----------------------------------------------------

    def _ask(self, path: str, body: Optional[bytes], parse: Callable[[bytes], Any],
             method: str = "POST", timeout: Optional[float] = None) -> Any:
        """Send body to path (a GET when method says so) and parse a 2xx
        answer; raise GatedError otherwise."""
        timeout = self.timeout if timeout is None else timeout
        try:
            return parse(self._request(method, path, body, timeout))
        except GatedError:
            raise
        # socket.timeout is TimeoutError from 3.10 on, a sibling before.
        except (socket.timeout, TimeoutError):
            raise GatedError("gated_timeout", "gated gave no complete answer "
                             "within %g s." % timeout) from None
        except _BadAnswer as e:
            raise GatedError("gated_bad_answer", str(e)) from None
        except http.client.IncompleteRead:
            raise GatedError("gated_bad_answer", "gated's answer was cut short.") from None
        except OSError as e:  # refused, DNS, reset, TLS; after the timeouts above
            raise GatedError("gated_unreachable", "gated is unreachable at %s: %s."
                             % (self.base_url, str(e) or type(e).__name__)) from None
        except http.client.HTTPException as e:  # a status line or header that is not HTTP
            raise GatedError("gated_bad_answer", "gated's answer is not valid "
                             "HTTP: %s." % (type(e).__name__,)) from None

    def _request(self, method: str, path: str, body: Optional[bytes],
                 timeout: float) -> bytes:
        deadline = time.monotonic() + timeout
        headers = {"Accept": "application/json",
                   "User-Agent": "gated-python/" + __version__, "Connection": "close"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if self._token is not None:
            headers["Authorization"] = "Bearer " + self._token
        # http.client, not urllib: no redirects followed, no proxy from the
        # environment, and the socket is at hand to bound the whole exchange.
        if self._ssl is not None:
            conn = http.client.HTTPSConnection(self._host, self._port,
                                               timeout=timeout, context=self._ssl)
        else:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=timeout)
        resp = None
        try:
            conn.request(method, path, body, headers)
            sock = conn.sock  # getresponse() drops conn.sock when the answer closes
            _budget(sock, deadline)
            resp = conn.getresponse()
            if not 200 <= resp.status < 300:
                detail, code = _error_detail(resp, sock, deadline)
                raise GatedError("gated_http_%d" % resp.status, "gated answered HTTP %d%s."
                                 % (resp.status, detail), code)
            return _read(resp, sock, deadline, MAX_ANSWER_BYTES)
        finally:
            if resp is not None:
                resp.close()
            conn.close()

    # -- guard ------------------------------------------------------------

    def guard(self, fn: Callable[..., Any], wait_for_approval: Optional[float] = None,
              report_outcome: bool = False,
              on_outcome_error: Optional[Callable[[GatedError], Any]] = None,
              **event_fields: Any) -> Callable[..., Any]:
        """Wrap fn so it runs only when gated lets it; otherwise raise Blocked.

        event_fields are the event's fields (tool_category,
        authorization_state, risk_domain, evidence_refs, ...). tool_name
        defaults to fn's name, evidence_refs to [], recommended_route to
        "accept"; proposed_arguments is each call's arguments by name.
        An async def fn gets an async wrapper that does not block the loop.

        wait_for_approval (seconds, off by default): when gated answers ask
        or defer with an approval, wait up to that long for a person to
        decide it (long-polling it with this client's token), and when it is
        approved send the same event once more with the approval's
        evidence_ref appended; the tool runs only if that answer is accept.
        Denied, expired or used approvals and the end of the wait raise
        Blocked with the asking decision and a reason (approval_denied, ...,
        approval_timeout); a failure while waiting raises Blocked with the
        refusal naming it. See ../README.md.

        report_outcome (off by default): after the tool ran, report its
        outcome to gated on the decision it ran on — succeeded when it
        returned, failed with its exception's class name (never the
        message) when it raised an Exception. The call returns or raises
        exactly what the tool did, whatever the report did; a failed report
        is passed to on_outcome_error (None: dropped). See
        ../README.md#reporting-outcomes.
        """
        if not callable(fn):
            raise TypeError("guard() takes a callable tool.")
        if wait_for_approval is not None and (
                isinstance(wait_for_approval, bool)
                or not isinstance(wait_for_approval, (int, float))
                or not math.isfinite(wait_for_approval) or wait_for_approval <= 0):
            raise ValueError("wait_for_approval must be None or a positive number of "
                             "seconds, got %r." % (wait_for_approval,))
        if not isinstance(report_outcome, bool):
            raise ValueError("report_outcome must be True or False, got %r." % (report_outcome,))
        if on_outcome_error is not None and not callable(on_outcome_error):
            raise ValueError("on_outcome_error must be callable or None.")
        if "proposed_arguments" in event_fields:
            raise ValueError("guard() builds proposed_arguments from each call's "
                             "arguments; do not pass it as an event field.")
        tool_name = event_fields.get("tool_name", getattr(fn, "__name__", None))
        if not isinstance(tool_name, str) or not tool_name:
            raise ValueError("guard() cannot name this tool; pass tool_name=.")
        arguments_of = _binder(fn)

        def event_of(args: tuple, kwargs: dict) -> Decision:
            event = {"tool_name": tool_name, "evidence_refs": [],
                     "recommended_route": "accept"}
            event.update(event_fields)
            event["proposed_arguments"] = arguments_of(args, kwargs)
            return event

        def report(decision: Decision) -> None:
            if self.on_decision is not None:
                self.on_decision(decision)

        def exchanges(event: Decision) -> Generator[tuple, Any, None]:
            """The call's exchanges with gated. It yields (function, *args)
            for the caller to run, here or off the event loop, gets each
            result back, and returns the decision the tool may run on;
            otherwise it raises Blocked."""
            decision = yield (self.check, event)
            report(decision)
            if _runs(decision):
                return decision
            approval = _awaited(decision) if wait_for_approval else None
            if approval is None:
                raise Blocked(decision, tool_name)
            deadline = time.monotonic() + wait_for_approval
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Blocked(decision, tool_name, reason="approval_timeout")
                polled = time.monotonic()
                answer = yield (self._approval_or_failure, approval["id"],
                                min(left, APPROVAL_POLL_SECONDS))
                if isinstance(answer, GatedError):
                    refusal = _refusal(answer.blocker, answer.sentence)
                    report(refusal)
                    raise Blocked(refusal, tool_name, reason=answer.blocker)
                if answer["status"] == "approved":
                    break
                if answer["status"] != "pending":
                    raise Blocked(decision, tool_name, reason="approval_" + answer["status"])
                now = time.monotonic()
                rest = min(polled + _APPROVAL_POLL_MIN_SECONDS, deadline) - now
                if rest > 0:
                    yield (time.sleep, rest)
            refs = event.get("evidence_refs")
            if not isinstance(refs, (list, tuple)):
                raise Blocked(decision, tool_name)  # gated refuses such an event anyway
            retried = yield (self.check, dict(event, evidence_refs=[*refs, approval["evidence_ref"]]))
            report(retried)
            # Only accept: a retry never runs the tool on anything else.
            if not (retried.get("route") == "accept" and retried.get("execute") is True):
                raise Blocked(retried, tool_name)
            return retried

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def guarded_async(*args: Any, **kwargs: Any) -> Any:
                steps = exchanges(event_of(args, kwargs))
                try:
                    step = next(steps)
                    while True:
                        if step[0] is time.sleep:
                            step = steps.send(await asyncio.sleep(*step[1:]))
                        else:
                            # Each exchange blocks on a socket: run it off the event loop.
                            step = steps.send(await asyncio.to_thread(*step))
                except StopIteration as done:
                    decision = done.value
                if not report_outcome:
                    return await fn(*args, **kwargs)
                try:
                    result = await fn(*args, **kwargs)
                except Exception as e:
                    await asyncio.to_thread(self._report_outcome, decision, e, on_outcome_error)
                    raise
                await asyncio.to_thread(self._report_outcome, decision, None, on_outcome_error)
                return result
            return guarded_async

        @functools.wraps(fn)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            steps = exchanges(event_of(args, kwargs))
            try:
                step = next(steps)
                while True:
                    step = steps.send(step[0](*step[1:]))
            except StopIteration as done:
                decision = done.value
            if not report_outcome:
                return fn(*args, **kwargs)
            try:
                result = fn(*args, **kwargs)
            except Exception as e:
                self._report_outcome(decision, e, on_outcome_error)
                raise
            self._report_outcome(decision, None, on_outcome_error)
            return result
        return guarded


def _runs(decision: Decision) -> bool:
    """Whether a tool may run on decision: execute, and accept or shadow."""
    return decision.get("execute") is True and (
        decision.get("route") == "accept" or decision.get("shadow") is True)


def _awaited(decision: Decision) -> Optional[Dict[str, Any]]:
    """The approval a guarded call may wait for: on an ask or defer answer,
    one with an id and an evidence_ref to retry with; else None."""
    approval = decision.get("approval")
    if (decision.get("route") in ("ask", "defer") and isinstance(approval, dict)
            and isinstance(approval.get("id"), str) and approval["id"]
            and isinstance(approval.get("evidence_ref"), dict)):
        return approval
    return None


def _budget(sock: socket.socket, deadline: float) -> None:
    """Give the next socket operation only what is left of the timeout."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise socket.timeout("the deadline passed")
    sock.settimeout(left)


def _read(resp: http.client.HTTPResponse, sock: socket.socket,
          deadline: float, limit: int) -> bytes:
    """Read the body within the deadline and at most limit bytes."""
    chunks, size = [], 0
    # http.client closes the socket once the body is complete: stop there.
    while not resp.isclosed():
        _budget(sock, deadline)
        chunk = resp.read1(65536)  # one recv at most, so the deadline holds
        if not chunk:
            break
        size += len(chunk)
        if size > limit:
            raise _BadAnswer("gated's answer is larger than %d bytes." % limit)
        chunks.append(chunk)
    if resp.length:  # the connection closed before Content-Length was met
        raise http.client.IncompleteRead(b"".join(chunks), resp.length)
    return b"".join(chunks)


def _json_object(raw: bytes) -> Dict[str, Any]:
    try:
        answer = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # not UTF-8, not JSON, nested too deep
        raise _BadAnswer("gated's answer is not JSON.") from None
    if not isinstance(answer, dict):
        raise _BadAnswer("gated's answer is not a JSON object.")
    return answer


def _decision(raw: bytes) -> Decision:
    answer = _json_object(raw)
    if not isinstance(answer.get("route"), str) or answer["route"] not in ROUTES:
        raise _BadAnswer("gated's answer has no route of accept, ask, defer or refuse.")
    if not isinstance(answer.get("execute"), bool):
        raise _BadAnswer("gated's answer has no boolean execute.")
    return answer


def _approval(raw: bytes, approval_id: str) -> Dict[str, Any]:
    try:
        answer = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        raise _BadAnswer("gated's approval answer is not JSON.") from None
    if not isinstance(answer, dict):
        raise _BadAnswer("gated's approval answer is not a JSON object.")
    if answer.get("id") != approval_id:
        raise _BadAnswer("gated's answer is not the approval asked for.")
    if answer.get("status") not in APPROVAL_STATUSES:
        raise _BadAnswer("gated's approval answer has no status of pending, approved, "
                         "denied, expired or used.")
    return answer


PERMISSION_DECISIONS = ("allow", "ask", "deny")


def _hook_answer(raw: bytes) -> Dict[str, Any]:
    try:
        answer = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        raise _BadAnswer("gated's hook answer is not JSON.") from None
    out = answer.get("hookSpecificOutput") if isinstance(answer, dict) else None
    if not isinstance(out, dict):
        raise _BadAnswer("gated's hook answer has no hookSpecificOutput object.")
    if out.get("permissionDecision") not in PERMISSION_DECISIONS:
        raise _BadAnswer("gated's hook answer has no permissionDecision of allow, ask or deny.")
    for field in ("permissionDecisionReason", "hookEventName"):
        if not isinstance(out.setdefault(field, ""), str):
            raise _BadAnswer("gated's hook answer has a %s that is not a string." % field)
    return answer


def _error_detail(resp: http.client.HTTPResponse, sock: socket.socket,
                  deadline: float) -> Tuple[str, Optional[str]]:
    """gated's own error sentence and code from a non-2xx answer, if it has
    them."""
    try:
        answer = json.loads(_read(resp, sock, deadline, 65536).decode("utf-8"))
        error, code = answer.get("error"), answer.get("code")
    except Exception:  # only a nicety: the status alone decides the blocker
        return "", None
    detail = ": " + error[:200].rstrip(".") if isinstance(error, str) and error else ""
    return detail, code if isinstance(code, str) and code else None


def _binder(fn: Callable[..., Any]) -> Callable[[tuple, dict], Dict[str, Any]]:
    """Map a call's arguments to {parameter name: value}."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # some builtins have no signature
        return lambda args, kwargs: dict(kwargs, **({"args": list(args)} if args else {}))

    def arguments_of(args: tuple, kwargs: dict) -> Dict[str, Any]:
        # Raises TypeError for a call the tool itself would reject.
        bound = sig.bind(*args, **kwargs)
        out: Dict[str, Any] = {}
        for name, value in bound.arguments.items():
            kind = sig.parameters[name].kind
            if kind is inspect.Parameter.VAR_KEYWORD:
                out.update(value)  # **kwargs are arguments in their own right
            elif kind is inspect.Parameter.VAR_POSITIONAL:
                out[name] = list(value)
            else:
                out[name] = value
        return out
    return arguments_of
