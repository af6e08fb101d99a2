"""Behaviour beyond the shared vectors: the request the client sends, more
ways an answer can be broken, guard's event and callbacks, async tools and
constructor validation.

Decisions come from a real gated; a recording proxy in front of it shows the
request on the wire. Canned bytes (BrokenProxy) are only for answers gated
never gives."""

import asyncio
import inspect
import json
import unittest

import gated
from . import harness
from .harness import BrokenProxy, RecordingProxy, http_answer

GATED = None

CLAIMED_WRITE = {  # gated asks for confirmation: route ask
    "tool_category": "write", "authorization_state": "user_claimed",
    "evidence_refs": ["draft_id:123"], "risk_domain": "customer_support",
}
PUBLIC_READ = {  # gated accepts
    "tool_category": "public_read", "authorization_state": "none",
    "risk_domain": "research",
}
PUBLIC_READ_EVENT = dict(PUBLIC_READ, tool_name="search_docs", evidence_refs=[],
                         proposed_arguments={"q": "\u00e9"}, recommended_route="accept")
DECISION_ID = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"


def vector_fields(name):
    """The event of the check vector called name, without proposed_arguments."""
    event = dict(next(v for v in harness.VECTORS["checks"] if v["name"] == name)["event"])
    event.pop("proposed_arguments", None)
    return event


def setUpModule():
    global GATED
    GATED = harness.Gated()


def tearDownModule():
    if GATED is not None:
        GATED.stop()


def real_client(url=None, **kw):
    """A client of the real gated (or of a proxy in front of it at url)."""
    return gated.Client(url or GATED.url, token=harness.TOKENS["valid"], **kw)


def answer_head(raw):
    """The status line and headers (lower-case) of a raw HTTP answer."""
    return raw.partition(b"\r\n\r\n")[0].decode("latin-1").lower()


class Constructor(unittest.TestCase):

    def test_rejects_bad_arguments_with_clear_messages(self):
        bad = [
            (("ftp://127.0.0.1",), {}, "http:// or https://"),
            (("127.0.0.1:8080",), {}, "http:// or https://"),
            (("http://",), {}, "with a host"),
            (("http://127.0.0.1:99999",), {}, "invalid port"),
            (("http://127.0.0.1/?x=1",), {}, "query or fragment"),
            (("http://127.0.0.1 :8080",), {}, "without spaces"),
            ((None,), {}, "URL string"),
            (("http://127.0.0.1",), {"timeout": 0}, "timeout must be a positive"),
            (("http://127.0.0.1",), {"timeout": -1}, "timeout must be a positive"),
            (("http://127.0.0.1",), {"timeout": float("nan")}, "timeout must be a positive"),
            (("http://127.0.0.1",), {"timeout": "2"}, "timeout must be a positive"),
            (("http://127.0.0.1",), {"timeout": True}, "timeout must be a positive"),
            (("http://127.0.0.1",), {"shadow": "yes"}, "shadow must be True or False"),
            (("http://127.0.0.1",), {"token": "a\r\nX-Evil: 1"}, "token must be"),
            (("http://127.0.0.1",), {"token": "t\u00f6ken"}, "token must be"),
            (("http://127.0.0.1",), {"token": "t\u20acken"}, "token must be"),
            (("http://127.0.0.1",), {"token": 123}, "token must be"),
            (("http://127.0.0.1",), {"token": b"token"}, "token must be"),
            (("http://127.0.0.1",), {"on_decision": 3}, "on_decision must be callable"),
        ]
        for args, kwargs, message in bad:
            with self.subTest(args=args, kwargs=kwargs):
                with self.assertRaises(ValueError) as caught:
                    gated.Client(*args, **kwargs)
                self.assertIn(message, str(caught.exception))
                self.assertTrue(str(caught.exception).endswith("."))

    def test_secrets_stay_out_of_messages_and_repr(self):
        with self.assertRaises(ValueError) as caught:
            gated.Client("http://user:s3cret@127.0.0.1")
        self.assertNotIn("s3cret", str(caught.exception))
        with self.assertRaises(ValueError) as caught:
            gated.Client("http://127.0.0.1", token="s3cret token")
        self.assertNotIn("s3cret", str(caught.exception))
        client = gated.Client("https://gated.example/base/", token="s3cret")
        self.assertNotIn("s3cret", repr(client))
        self.assertEqual(client.base_url, "https://gated.example/base")


class Request(unittest.TestCase):
    """What goes on the wire, seen by a recording proxy in front of gated."""

    def exchange(self, client_kw, event, base=""):
        with RecordingProxy(GATED.url) as proxy:
            decision = gated.Client(proxy.url + base, **client_kw).check(event)
        self.assertEqual(len(proxy.requests), 1)
        self.assertIn("x-request-id:", answer_head(proxy.answers[0]))  # gated answered
        return decision, proxy.requests[0]

    def test_posts_json_with_token_and_shadow(self):
        event = PUBLIC_READ_EVENT
        token = harness.TOKENS["valid"]
        decision, req = self.exchange({"token": token, "shadow": True}, event)
        self.assertEqual((decision["route"], decision["execute"], decision["shadow"]),
                         ("accept", True, True))
        self.assertEqual(req["method"], "POST")
        self.assertEqual(req["target"], "/pre-tool-check?shadow_mode=true")
        self.assertEqual(req["headers"]["content-type"], "application/json")
        self.assertEqual(req["headers"]["accept"], "application/json")
        self.assertEqual(req["headers"]["authorization"], "Bearer " + token)
        self.assertEqual(json.loads(req["body"].decode("utf-8")), event)

    def test_no_token_no_authorization(self):
        decision, req = self.exchange({}, PUBLIC_READ_EVENT)
        self.assertEqual(req["target"], "/pre-tool-check")
        self.assertNotIn("authorization", req["headers"])
        # gated runs with --tokens, so it turns the call away.
        self.assertEqual(decision["hard_blockers"], ["gated_http_401"])

    def test_empty_token_no_authorization(self):
        # As in the Go client: GATED_TOKEN= (or unset) means no token.
        decision, req = self.exchange({"token": ""}, PUBLIC_READ_EVENT)
        self.assertEqual(req["target"], "/pre-tool-check")
        self.assertNotIn("authorization", req["headers"])
        # gated runs with --tokens, so it turns the call away.
        self.assertEqual(decision["hard_blockers"], ["gated_http_401"])

    def test_base_path_kept(self):
        decision, req = self.exchange({"token": harness.TOKENS["valid"]},
                                      PUBLIC_READ_EVENT, base="/gated/")
        self.assertEqual(req["target"], "/gated/pre-tool-check")
        # The proxy forwards the path unchanged and gated serves no /gated/ prefix.
        self.assertEqual(decision["hard_blockers"], ["gated_http_404"])

    def test_an_event_that_is_not_json_is_the_callers_error(self):
        client = gated.Client(harness.refused_url())
        with self.assertRaises(TypeError):
            client.check(["not", "a", "dict"])
        with self.assertRaises(TypeError):
            client.check({"proposed_arguments": {"when": object()}})


class BrokenAnswers(unittest.TestCase):
    """Failures beyond the vectors; each must block with its blocker."""

    def blocker_of(self, raw, close=True, timeout=2.0):
        with BrokenProxy(raw, close=close) as server:
            decision = gated.Client(server.url, timeout=timeout).check({"tool_name": "x"})
            self.assertLessEqual(len(server.requests), 1)  # no retry, no redirect followed
        self.assertEqual(decision["route"], "refuse")
        self.assertIs(decision["execute"], False)
        self.assertEqual(len(decision["hard_blockers"]), 1)
        return decision["hard_blockers"][0], decision["error"]

    def test_redirect_is_not_followed(self):
        raw = http_answer("307 Temporary Redirect", b"", extra="Location: http://evil.example/\r\n")
        self.assertEqual(self.blocker_of(raw)[0], "gated_http_307")

    def test_gated_error_sentence_is_kept(self):
        limited = harness.Gated("--rate-limit", "1")  # one request a minute per token
        try:
            client = gated.Client(limited.url, token=harness.TOKENS["valid"])
            self.assertEqual(client.check(PUBLIC_READ_EVENT)["route"], "accept")
            decision = client.check(PUBLIC_READ_EVENT)
        finally:
            limited.stop()
        self.assertEqual((decision["hard_blockers"], decision["error"]),
                         (["gated_http_429"], "gated answered HTTP 429: rate limit of 1 "
                                              "requests per minute exceeded."))
        decision = gated.Client(GATED.url, token=harness.TOKENS["unknown"]).check(PUBLIC_READ_EVENT)
        self.assertEqual((decision["hard_blockers"], decision["error"]),
                         (["gated_http_401"], "gated answered HTTP 401: unauthorized: "
                                              "a valid bearer token is required."))

    def test_bad_answers(self):
        cases = {
            "empty 2xx": http_answer("204 No Content", b""),
            "not UTF-8": http_answer("200 OK", b'{"route":"accept","execute":true,"x":"\xff"}'),
            "JSON array": http_answer("200 OK", b'[{"route":"accept","execute":true}]'),
            "nested too deep": http_answer("200 OK", b"[" * 200000),
            "too big": http_answer("200 OK", b" " * gated.MAX_ANSWER_BYTES + b"{}"),
            "not HTTP": b"hello\r\n\r\n",
            "cut short, chunked": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                   b"40\r\n{\"route\":\"accept\","),
            "cut short, valid JSON so far": http_answer("200 OK", b'{"route":"accept","execute":true}')
                                            .replace(b"Content-Length: 33", b"Content-Length: 90"),
        }
        for name, raw in cases.items():
            with self.subTest(name):
                self.assertEqual(self.blocker_of(raw)[0], "gated_bad_answer")

    def test_a_valid_answer_in_chunks_is_accepted(self):
        with RecordingProxy(GATED.url) as proxy:
            self.assertEqual(real_client(proxy.url).check(PUBLIC_READ_EVENT)["route"], "accept")
        # gated streams its decision in chunks.
        self.assertIn("transfer-encoding: chunked", answer_head(proxy.answers[0]))

    def test_hangs_mid_body_times_out(self):
        raw = http_answer("200 OK", b'{"route":"accept","execute":true}')[:-5]
        self.assertEqual(self.blocker_of(raw, close=False, timeout=0.3)[0], "gated_timeout")

    def test_closed_without_answer_is_unreachable(self):
        self.assertEqual(self.blocker_of(b"")[0], "gated_unreachable")

    def test_dns_failure_is_unreachable(self):
        decision = gated.Client("http://gated.invalid").check({})
        self.assertEqual(decision["hard_blockers"], ["gated_unreachable"])


class GuardEvent(unittest.TestCase):
    """The event guard builds, seen by a recording proxy in front of gated."""

    def exchange(self, fn, call, **fields):
        """The event the guarded call sent, and its result (or Blocked)."""
        with RecordingProxy(GATED.url) as proxy:
            guarded = real_client(proxy.url).guard(fn, **fields)
            try:
                result = call(guarded)
            except gated.Blocked as blocked:
                result = blocked
        self.assertEqual(len(proxy.requests), 1)
        return json.loads(proxy.requests[0]["body"]), result

    def sent_event(self, fn, call, **fields):
        event, result = self.exchange(fn, call, **fields)
        self.assertEqual(result, "ran")
        return event

    def test_positional_arguments_are_bound_to_names(self):
        def send(a, b, c=3):
            return "ran"
        event = self.sent_event(send, lambda g: g(1, b=2), **PUBLIC_READ)
        self.assertEqual(event, {"tool_name": "send", "tool_category": "public_read",
                                 "authorization_state": "none", "risk_domain": "research",
                                 "evidence_refs": [], "recommended_route": "accept",
                                 "proposed_arguments": {"a": 1, "b": 2}})

    def test_star_args_and_kwargs(self):
        def tool(x, *rest, **options):
            return "ran"
        event = self.sent_event(tool, lambda g: g(1, 2, 3, mode="fast"), **PUBLIC_READ)
        self.assertEqual(event["proposed_arguments"], {"x": 1, "rest": [2, 3], "mode": "fast"})

    def test_event_fields_override_defaults(self):
        def tool():
            return "ran"
        event, result = self.exchange(tool, lambda g: g(), tool_name="renamed",
                                      evidence_refs=["ref:1"], recommended_route="ask",
                                      **PUBLIC_READ)
        self.assertEqual((event["tool_name"], event["evidence_refs"], event["recommended_route"]),
                         ("renamed", ["ref:1"], "ask"))
        # gated takes the strictest route, so the recommended ask holds.
        self.assertIsInstance(result, gated.Blocked)
        self.assertEqual(result.decision["route"], "ask")

    def test_runs_only_on_execute_and_accept_or_shadow(self):
        table = [  # (vector whose event, shadow) -> (route, execute, shadow), runs
            ("public read is accepted", False, ("accept", True, False), True),
            ("claimed write asks", False, ("ask", False, False), False),
            ("unauthenticated private read defers", False, ("defer", False, False), False),
            ("unknown category refuses", False, ("refuse", False, False), False),
            ("public read is accepted", True, ("accept", True, True), True),
            ("claimed write asks", True, ("ask", True, True), True),
            ("unknown category refuses", True, ("refuse", True, True), True),
        ]
        for name, shadow, want, runs in table:
            with self.subTest(name, shadow=shadow):
                ran, seen = [], []
                guarded = real_client(shadow=shadow, on_decision=seen.append).guard(
                    lambda **kw: ran.append(1), **vector_fields(name))
                if runs:
                    guarded()
                else:
                    self.assertRaises(gated.Blocked, guarded)
                self.assertEqual([(d["route"], d["execute"], d["shadow"]) for d in seen], [want])
                self.assertEqual(ran, [1] if runs else [])

    def test_runs_not_on_answers_gated_never_gives(self):
        table = [  # (route, execute, shadow): none of them runs
            ("accept", False, False), ("accept", False, True),
            ("ask", True, False), ("defer", True, False),
            ("refuse", True, False), ("accept", "true", False),
        ]
        for route, execute, shadow in table:
            with self.subTest(route=route, execute=execute, shadow=shadow):
                body = json.dumps({"route": route, "execute": execute, "shadow": shadow,
                                   "hard_blockers": []}).encode()
                ran = []
                with BrokenProxy(http_answer("200 OK", body)) as server:
                    guarded = gated.Client(server.url).guard(lambda: ran.append(1))
                    self.assertRaises(gated.Blocked, guarded)
                self.assertEqual(ran, [])

    def test_wraps_and_rejects_fixed_arguments(self):
        def send_email(to):
            """Send an email."""
        client = gated.Client(harness.refused_url())
        guarded = client.guard(send_email)
        self.assertEqual((guarded.__name__, guarded.__doc__), ("send_email", "Send an email."))
        self.assertIs(guarded.__wrapped__, send_email)
        with self.assertRaises(ValueError):
            client.guard(send_email, proposed_arguments={"to": "x"})
        with self.assertRaises(TypeError):  # as send_email itself would
            guarded(1, 2)


class GuardWithGated(unittest.TestCase):

    def test_on_decision_is_called_once_per_guarded_call_and_never_by_check(self):
        seen = []
        client = real_client(on_decision=seen.append)
        self.assertEqual(client.check(PUBLIC_READ_EVENT)["route"], "accept")
        self.assertEqual(client.check(dict(vector_fields("claimed write asks"),
                                           proposed_arguments={}))["route"], "ask")
        self.assertEqual(seen, [])
        search = client.guard(lambda query: "found", tool_name="search_docs", **PUBLIC_READ)
        send = client.guard(lambda to: None, **vector_fields("claimed write asks"))
        self.assertEqual(search("a"), "found")
        self.assertEqual(search("b"), "found")
        with self.assertRaises(gated.Blocked) as caught:
            send(to="customer@example.com")
        self.assertEqual([d["route"] for d in seen], ["accept", "accept", "ask"])
        self.assertIs(seen[-1], caught.exception.decision)
        self.assertEqual(len({d["decision_id"] for d in seen}), 3)
        for d in seen:
            self.assertRegex(d["decision_id"], DECISION_ID)

    def test_shadow_reports_the_would_be_route_and_runs(self):
        seen, ran = [], []
        client = real_client(shadow=True, on_decision=seen.append)
        send_email = client.guard(lambda to: ran.append(to) or "sent",
                                  tool_name="send_email", **CLAIMED_WRITE)
        self.assertEqual(send_email("customer@example.com"), "sent")
        self.assertEqual(ran, ["customer@example.com"])
        self.assertEqual([(d["route"], d["execute"], d["shadow"]) for d in seen],
                         [("ask", True, True)])

    def test_blocked_names_route_and_blockers_but_not_arguments(self):
        seen = []
        send_email = real_client(on_decision=seen.append).guard(
            lambda to: None, tool_name="send_email", **CLAIMED_WRITE)
        with self.assertRaises(gated.Blocked) as caught:
            send_email(to="customer@example.com")
        message = str(caught.exception)
        self.assertIn("send_email", message)
        self.assertIn("route ask", message)
        self.assertIn("write_missing_explicit_confirmation", message)
        self.assertNotIn("customer@example.com", message)
        self.assertEqual(seen, [caught.exception.decision])  # reported before raising

    def test_async_guard(self):
        ran, seen = [], []
        client = real_client(on_decision=seen.append)

        async def search_docs(query):
            await asyncio.sleep(0)
            ran.append(query)
            return "found"

        async def send_email(to):
            ran.append(to)

        search = client.guard(search_docs, **PUBLIC_READ)
        send = client.guard(send_email, **CLAIMED_WRITE)
        self.assertTrue(inspect.iscoroutinefunction(search))

        async def main():
            self.assertEqual(await search("contracts"), "found")
            with self.assertRaises(gated.Blocked) as caught:
                await send("customer@example.com")
            return caught.exception

        blocked = asyncio.run(main())
        self.assertEqual(blocked.decision["route"], "ask")
        self.assertEqual(ran, ["contracts"])
        self.assertEqual([d["route"] for d in seen], ["accept", "ask"])



class ApprovalWait(unittest.TestCase):
    """guard's wait_for_approval and approval() where no approval is given;
    tests/test_approvals.py runs the approvals vectors against a gated with
    approvals."""

    def test_wait_for_approval_is_validated(self):
        client = gated.Client(harness.refused_url())
        for bad in (0, -1, float("nan"), float("inf"), "30", True):
            with self.subTest(wait_for_approval=bad):
                with self.assertRaises(ValueError) as caught:
                    client.guard(lambda: None, wait_for_approval=bad)
                self.assertIn("wait_for_approval must be", str(caught.exception))
        with self.assertRaises(TypeError):
            client.approval("")
        with self.assertRaises(ValueError):
            client.approval("a1", wait=-1)

    def test_an_ask_without_an_approval_blocks_at_once(self):
        # This gated has no database, so its asks carry no approval.
        seen, ran = [], []
        send_email = real_client(on_decision=seen.append).guard(
            lambda to: ran.append(to), tool_name="send_email", wait_for_approval=30,
            **CLAIMED_WRITE)
        with self.assertRaises(gated.Blocked) as caught:
            send_email(to="customer@example.com")
        self.assertIsNone(caught.exception.reason)
        self.assertNotIn("approval", caught.exception.decision)
        self.assertEqual([d["route"] for d in seen], ["ask"])
        self.assertEqual(ran, [])

    def test_approval_request_on_the_wire(self):
        token = harness.TOKENS["valid"]
        with RecordingProxy(GATED.url) as proxy:
            client = gated.Client(proxy.url, token=token)
            with self.assertRaises(gated.GatedError) as caught:
                client.approval("a/1", wait=1.5)
        self.assertRegex(caught.exception.blocker, r"^gated_http_4\d\d$")
        req = proxy.requests[0]
        self.assertEqual((req["method"], req["target"]),
                         ("GET", "/v1/approvals/a%2F1?status=pending&wait=1500ms"))
        self.assertEqual(req["headers"]["authorization"], "Bearer " + token)
        self.assertNotIn("content-type", req["headers"])
        self.assertEqual(req["body"], b"")

    def test_approval_fails_closed(self):
        cases = {
            "another approval": (http_answer("200 OK", b'{"id":"a2","status":"approved"}'),
                                 "gated_bad_answer"),
            "unknown status": (http_answer("200 OK", b'{"id":"a1","status":"maybe"}'),
                               "gated_bad_answer"),
            "not JSON": (http_answer("200 OK", b"approved"), "gated_bad_answer"),
            "not found": (http_answer("404 Not Found", b'{"error":{"code":"approval_unknown"}}'),
                          "gated_http_404"),
        }
        for name, (raw, blocker) in cases.items():
            with self.subTest(name):
                with BrokenProxy(raw) as server:
                    with self.assertRaises(gated.GatedError) as caught:
                        gated.Client(server.url).approval("a1")
                self.assertEqual(caught.exception.blocker, blocker)
        with self.assertRaises(gated.GatedError) as caught:
            gated.Client(harness.refused_url()).approval("a1", wait=1)
        self.assertEqual(caught.exception.blocker, "gated_unreachable")

    def test_an_unreadable_approval_blocks_the_waiting_call(self):
        # An ask whose approval endpoint answers the same ask again: an
        # answer gated never gives, so the wait fails closed.
        ask = {"route": "ask", "execute": False, "shadow": False, "hard_blockers": ["x"],
               "approval": {"id": "a1", "status": "pending", "url": "/ui/approvals/a1",
                            "evidence_ref": {"source_id": "gated-approval:a1", "kind": "approval"}}}
        seen, ran = [], []
        with BrokenProxy(http_answer("200 OK", json.dumps(ask).encode())) as server:
            guarded = gated.Client(server.url, on_decision=seen.append).guard(
                lambda: ran.append(1), tool_name="t", wait_for_approval=30)
            with self.assertRaises(gated.Blocked) as caught:
                guarded()
            self.assertEqual([r["method"] for r in server.requests], ["POST", "GET"])
        self.assertEqual(caught.exception.reason, "gated_bad_answer")
        self.assertEqual([d["route"] for d in seen], ["ask", "refuse"])
        self.assertIs(caught.exception.decision, seen[-1])
        self.assertEqual(caught.exception.decision["hard_blockers"], ["gated_bad_answer"])
        self.assertEqual(ran, [])

if __name__ == "__main__":
    unittest.main()
