"""The shared conformance vectors (sdk/testdata/vectors.json), each run
through both check() and guard() against a real gated or a real fault."""

import contextlib
import unittest

import gated
from . import harness

GATED = None


def setUpModule():
    global GATED
    GATED = harness.Gated()


def tearDownModule():
    if GATED is not None:
        GATED.stop()


def _tool(ran):
    """A tool that records that it ran, and with what."""
    def tool(**kwargs):
        ran.append(kwargs)
        return "ran"
    return tool


class Checks(unittest.TestCase):
    """checks: the event goes to gated; the answer and whether the tool runs."""

    def client(self, vector, **kw):
        # The checks carry no token; gated runs with tokens, so they use "valid".
        return gated.Client(GATED.url, token=harness.TOKENS[vector.get("token", "valid")],
                            shadow=vector.get("shadow", False), **kw)

    def assert_decision(self, decision, want):
        self.assertEqual(decision["route"], want["route"])
        self.assertIs(decision["execute"], want["execute"])
        self.assertEqual(decision["hard_blockers"], want["hard_blockers"])
        if "shadow" in want:
            self.assertIs(decision["shadow"], want["shadow"])
        self.assertIsInstance(decision.get("decision_id"), str)

    def run_check(self, vector):
        seen = []
        decision = self.client(vector, on_decision=seen.append).check(vector["event"])
        self.assert_decision(decision, vector["want"])
        self.assertEqual(seen, [], "check() does not call on_decision")

    def run_guard(self, vector):
        want, ran, seen = vector["want"], [], []
        fields = dict(vector["event"])
        arguments = fields.pop("proposed_arguments", {})
        guarded = self.client(vector, on_decision=seen.append).guard(_tool(ran), **fields)
        if want["tool_runs"]:
            self.assertEqual(guarded(**arguments), "ran")
            self.assertEqual(ran, [arguments])
        else:
            with self.assertRaises(gated.Blocked) as caught:
                guarded(**arguments)
            self.assertEqual(ran, [])
            self.assertIs(caught.exception.decision, seen[0])
        self.assertEqual(len(seen), 1)
        self.assert_decision(seen[0], want)


class Failures(unittest.TestCase):
    """failures: a fault injected for real; the SDK blocks with the blocker."""

    @contextlib.contextmanager
    def client(self, vector, **kw):
        with harness.fault(vector, GATED.url) as (url, kwargs):
            yield gated.Client(url, **kwargs, **kw)

    def assert_refusal(self, decision, blocker):
        self.assertEqual(set(decision), {"route", "execute", "shadow", "hard_blockers", "error"})
        self.assertEqual(decision["route"], "refuse")
        self.assertIs(decision["execute"], False)
        self.assertIs(decision["shadow"], False)
        self.assertEqual(decision["hard_blockers"], [blocker])
        self.assertRegex(decision["error"], r"^gated.*\.$")  # a sentence

    def run_check(self, vector):
        seen = []
        with self.client(vector, on_decision=seen.append) as client:
            self.assert_refusal(client.check({"tool_name": "search_docs"}), vector["want_blocker"])
        self.assertEqual(seen, [], "check() does not call on_decision")

    def run_guard(self, vector):
        ran, seen = [], []
        with self.client(vector, on_decision=seen.append) as client:
            guarded = client.guard(_tool(ran), tool_name="search_docs",
                                   tool_category="public_read", authorization_state="none",
                                   risk_domain="research")
            with self.assertRaises(gated.Blocked) as caught:
                guarded(query="Agent Action Contract v1")
        self.assertEqual(ran, [])
        self.assertEqual(seen, [caught.exception.decision])  # once, before raising
        self.assert_refusal(caught.exception.decision, vector["want_blocker"])
        self.assertIn(vector["want_blocker"], str(caught.exception))


# One test per vector and way in, so a failure names its vector.
for _cls, _vectors in ((Checks, harness.VECTORS["checks"]),
                       (Failures, harness.VECTORS["failures"])):
    for _v in _vectors:
        for _way in ("check", "guard"):
            def _test(self, _v=_v, _way=_way):
                getattr(self, "run_" + _way)(_v)
            _test.__doc__ = "%s: %s" % (_way, _v["name"])
            setattr(_cls, "test_%s_%s" % (_way, harness.slug(_v["name"])), _test)
del _cls, _vectors, _v, _way, _test


if __name__ == "__main__":
    unittest.main()
