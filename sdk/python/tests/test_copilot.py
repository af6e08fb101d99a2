"""gated.copilot_pre_tool_use: the GitHub Copilot SDK's on_pre_tool_use
handler, run against a real gated (the "copilot" vectors of
sdk/testdata/vectors.json), every failure vector injected for real, and
errors nobody planned for. The handler must never raise: the Copilot SDK
runs the tool when a hook handler raises."""

import http.client
import json
import unittest
from unittest import mock

import gated
from . import harness
from .harness import BrokenProxy, RecordingProxy, http_answer

GATED = None
DENY_PREFIX = "gated could not check this call, so it is blocked: "
CALLS = harness.VECTORS["copilot"]["calls"]
# A call the catalog allows: a failure must deny whatever gated would have said.
ALLOWED = next(c for c in CALLS if c["want"]["permissionDecision"] == "allow")


def setUpModule():
    global GATED
    GATED = harness.Gated()


def tearDownModule():
    if GATED is not None:
        GATED.stop()


def valid_client(url=None, **kw):
    return gated.Client(url or GATED.url, token=harness.TOKENS["valid"], **kw)


class FakeClient:
    """Stands in for gated.Client: records hook() calls, answers with answer()."""

    def __init__(self, answer):
        self.answer = answer
        self.calls = []

    def hook(self, runtime, body):
        self.calls.append((runtime, body))
        return self.answer()


class Base(unittest.TestCase):

    def run_handler(self, handler, input, *invocation):
        out = handler(input, *invocation)
        self.assertIsInstance(out, dict)
        self.assertEqual(set(out), {"permissionDecision", "permissionDecisionReason"})
        self.assertIsInstance(out["permissionDecisionReason"], str)
        return out

    def assert_denied(self, handler, input, invocation, reason_contains):
        out = self.run_handler(handler, input, invocation)
        self.assertEqual(out["permissionDecision"], "deny", out)
        self.assertIn(reason_contains, out["permissionDecisionReason"])
        return out


class Calls(Base):
    """copilot.calls: what gated, with its catalog, answers for each call."""

    def run_call(self, vector):
        out = self.run_handler(gated.copilot_pre_tool_use(valid_client()),
                               vector["input"], vector["invocation"])
        want = vector["want"]
        self.assertEqual(out["permissionDecision"], want["permissionDecision"],
                         out["permissionDecisionReason"])
        if "reason_contains" in want:
            self.assertIn(want["reason_contains"], out["permissionDecisionReason"])

    def test_the_python_sdks_invocation_and_working_directory_decide_alike(self):
        # The Python Copilot SDK passes {"session_id": ...}; TypeScript's name is workingDirectory.
        handler = gated.copilot_pre_tool_use(valid_client())
        for vector in CALLS:
            with self.subTest(vector["name"]):
                input = dict(vector["input"])
                input["workingDirectory"] = input.pop("cwd")
                out = self.run_handler(handler, input,
                                       {"session_id": vector["invocation"]["sessionId"]})
                self.assertEqual(out["permissionDecision"], vector["want"]["permissionDecision"])

    def test_the_invocation_is_optional(self):
        out = self.run_handler(gated.copilot_pre_tool_use(valid_client()), ALLOWED["input"])
        self.assertEqual(out["permissionDecision"], "allow")


class Failures(Base):
    """failures: a fault injected for real; the handler denies, naming it."""

    def run_failure(self, vector):
        with harness.fault(vector, GATED.url) as (url, kwargs):
            handler = gated.copilot_pre_tool_use(gated.Client(url, **kwargs))
            self.assert_denied(handler, ALLOWED["input"], ALLOWED["invocation"],
                               vector["copilot_reason"])

    def test_a_failure_names_its_blocker_after_the_fixed_sentence(self):
        handler = gated.copilot_pre_tool_use(gated.Client(harness.refused_url()))
        out = self.assert_denied(handler, ALLOWED["input"], ALLOWED["invocation"],
                                 "gated_unreachable")
        self.assertTrue(out["permissionDecisionReason"].startswith(
            DENY_PREFIX + "gated_unreachable: "), out)

    def test_answers_gated_never_gives_deny_as_bad_answers(self):
        for label, body in (
                ("an unknown permissionDecision",
                 b'{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"maybe"}}'),
                ("no hookSpecificOutput", b'{"route":"accept","execute":true}'),
                ("a reason that is not a string",
                 b'{"hookSpecificOutput":{"permissionDecision":"allow","permissionDecisionReason":7}}'),
                ("JSON that is not an object", b'["allow"]'),
                ("not JSON", b"allow")):
            with self.subTest(label), BrokenProxy(http_answer("200 OK", body)) as server:
                out = self.assert_denied(gated.copilot_pre_tool_use(gated.Client(server.url)),
                                         ALLOWED["input"], ALLOWED["invocation"],
                                         "gated_bad_answer")
                self.assertTrue(out["permissionDecisionReason"].startswith(DENY_PREFIX))


class Request(Base):
    """What goes to gated, and Client.hook itself."""

    def test_posts_the_call_to_the_copilot_hook_with_token_and_shadow(self):
        with RecordingProxy(GATED.url) as proxy:
            handler = gated.copilot_pre_tool_use(valid_client(proxy.url, shadow=True))
            self.run_handler(handler, {"timestamp": 1795521600000, "cwd": "/w",
                                       "workingDirectory": "/ignored", "toolName": "Read",
                                       "toolArgs": {"file_path": "a"}},
                             {"session_id": "inv-1"})
            [request] = proxy.requests
        self.assertEqual((request["method"], request["target"]),
                         ("POST", "/v1/hooks/copilot?shadow_mode=true"))
        self.assertEqual(request["headers"]["authorization"],
                         "Bearer " + harness.TOKENS["valid"])
        self.assertEqual(json.loads(request["body"]), {
            "hook_event_name": "PreToolUse", "session_id": "inv-1", "cwd": "/w",
            "tool_name": "Read", "tool_input": {"file_path": "a"}})

    def test_tool_args_become_a_tool_input_object(self):
        answer = {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                         "permissionDecision": "ask",
                                         "permissionDecisionReason": "why"}}
        for label, args, want in (("absent", mock.sentinel.absent, {}), ("None", None, {}),
                                  ("a string", "ls -l", {"input": "ls -l"}),
                                  ("a list", [1, 2], {"input": [1, 2]}),
                                  ("a number", 0, {"input": 0}),
                                  ("a dict", {"a": 1}, {"a": 1})):
            with self.subTest(label):
                client = FakeClient(lambda: answer)
                input = {"sessionId": "s", "cwd": "/c", "toolName": "t"}
                if args is not mock.sentinel.absent:
                    input["toolArgs"] = args
                out = self.run_handler(gated.copilot_pre_tool_use(client), input,
                                       {"session_id": "other"})
                self.assertEqual(out, {"permissionDecision": "ask",
                                       "permissionDecisionReason": "why"})
                self.assertEqual(client.calls, [("copilot", {
                    "hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/c",
                    "tool_name": "t", "tool_input": want})])

    def test_hook_answers_or_raises_gated_error(self):
        answer = valid_client().hook("copilot", {
            "hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/",
            "tool_name": "Read", "tool_input": {"file_path": "x"}})
        self.assertEqual(answer["hookSpecificOutput"]["permissionDecision"], "allow")
        raw = http_answer("503 Service Unavailable", b"")
        with BrokenProxy(raw) as server:
            with self.assertRaises(gated.GatedError) as caught:
                gated.Client(server.url).hook("copilot", {})
        self.assertEqual(caught.exception.blocker, "gated_http_503")
        self.assertTrue(str(caught.exception).startswith("gated_http_503: "))
        with self.assertRaises(TypeError):
            valid_client().hook("copilot", [])


class NeverRaises(Base):
    """Whatever goes wrong, the answer is deny, not an exception."""

    INPUT = {"sessionId": "s", "cwd": "/", "toolName": "Read",
             "toolArgs": {"file_path": "x"}}

    def test_a_client_that_fails_in_any_way_denies(self):
        class Unprintable(Exception):
            def __str__(self):
                raise RuntimeError("no")

        def raise_(error):
            raise error

        for label, answer in (
                ("hook raises", lambda: raise_(RuntimeError("boom"))),
                ("hook raises something unprintable", lambda: raise_(Unprintable())),
                ("hook returns None", lambda: None),
                ("hook returns an unknown decision",
                 lambda: {"hookSpecificOutput": {"permissionDecision": "yes"}}),
                ("hook returns a reason that is not a string",
                 lambda: {"hookSpecificOutput": {"permissionDecision": "allow",
                                                 "permissionDecisionReason": 1}})):
            with self.subTest(label):
                out = self.assert_denied(gated.copilot_pre_tool_use(FakeClient(answer)),
                                         self.INPUT, {"session_id": "s"}, DENY_PREFIX)
                self.assertTrue(out["permissionDecisionReason"].startswith(DENY_PREFIX))

    def test_a_transport_failing_in_a_way_nobody_planned_for_denies(self):
        with mock.patch.object(http.client.HTTPConnection, "getresponse",
                               side_effect=RuntimeError("the response fell apart")):
            self.assert_denied(gated.copilot_pre_tool_use(valid_client()), self.INPUT,
                               {"session_id": "s"}, "the response fell apart")

    def test_arguments_that_are_not_json_deny(self):
        for args in ({"n": object()}, {"n": float("nan")}):
            with self.subTest(args=args):
                self.assert_denied(gated.copilot_pre_tool_use(valid_client()),
                                   dict(self.INPUT, toolArgs=args), {"session_id": "s"},
                                   "gated_bad_answer")

    def test_an_unreadable_input_denies(self):
        for input in (None, "Read", ["Read"]):
            with self.subTest(input=input):
                self.assert_denied(gated.copilot_pre_tool_use(valid_client()), input,
                                   None, DENY_PREFIX)

    def test_it_refuses_at_once_to_be_built_without_a_client(self):
        for bad in (None, "http://127.0.0.1:8080", object()):
            with self.subTest(bad=bad), self.assertRaises(TypeError):
                gated.copilot_pre_tool_use(bad)


# One test per vector, so a failure names its vector.
for _v in CALLS:
    setattr(Calls, "test_" + harness.slug(_v["name"]),
            lambda self, _v=_v: self.run_call(_v))
for _v in harness.VECTORS["failures"]:
    setattr(Failures, "test_" + harness.slug(_v["name"]),
            lambda self, _v=_v: self.run_failure(_v))
del _v


if __name__ == "__main__":
    unittest.main()
