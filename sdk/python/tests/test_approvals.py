"""The approvals vectors (sdk/testdata/vectors.json, section approvals):
guard(..., wait_for_approval=...) against a real gated with approvals
(PostgreSQL and tokens), the approver being this test with plain HTTP.
Each case runs through the sync and the async wrapper."""

import asyncio
import secrets
import threading
import unittest
from urllib.parse import quote

import gated
from . import harness

APPROVALS = harness.VECTORS["approvals"]
GATED = None  # shared by the cases that do not kill gated


def setUpModule():
    global GATED
    GATED = harness.approvals_gated()


def tearDownModule():
    if GATED is not None:
        GATED.stop()


class Approvals(unittest.TestCase):

    def run_case(self, case, way):
        own = case["approver"] == "kill_gated"
        server = harness.approvals_gated() if own else GATED
        try:
            self.check_case(case, way, server)
        finally:
            if own:
                server.stop()

    def check_case(self, case, way, server):
        want = case["want"]
        event = dict(APPROVALS["event"], agent_id="sdk-python-" + secrets.token_hex(8))
        fields = dict(event)
        arguments = fields.pop("proposed_arguments")

        seen, ran, outcome = [], [], {}
        progress = threading.Event()  # a decision was reported, or the call ended

        def on_decision(decision):
            seen.append(decision)
            progress.set()

        client = gated.Client(server.url, token=harness.TOKENS[APPROVALS["requester_token"]],
                              on_decision=on_decision)
        wait = case["wait_ms"] / 1000
        if way == "sync":
            def send_email(**kwargs):
                ran.append(kwargs)
                return "sent"
            guarded = client.guard(send_email, wait_for_approval=wait, **fields)
            call = lambda: guarded(**arguments)  # noqa: E731
        else:
            async def send_email(**kwargs):
                ran.append(kwargs)
                return "sent"
            guarded = client.guard(send_email, wait_for_approval=wait, **fields)
            call = lambda: asyncio.run(guarded(**arguments))  # noqa: E731

        def caller():
            try:
                outcome["result"] = call()
            except BaseException as e:  # noqa: BLE001 — handed to the test
                outcome["error"] = e
            finally:
                progress.set()

        worker = threading.Thread(target=caller, daemon=True)
        worker.start()
        progress.wait()
        self.assertTrue(seen, "guard ended without reporting a decision: %r" % (outcome,))
        first = seen[0]
        approval = first.get("approval")
        self.assertEqual(first["route"], "ask")
        self.assertIsInstance(approval, dict, "the ask carries no approval")
        self.assertEqual(approval.get("status"), "pending")
        for field in ("id", "url"):
            self.assertIsInstance(approval.get(field), str)
        self.assertIsInstance(approval.get("evidence_ref"), dict)
        approval_id = approval["id"]
        self.assertTrue(harness.pending_has(server.url, approval_id),
                        "approval %s is not in the approver's pending list" % approval_id)

        action = case["approver"]
        if action in ("approve", "deny"):
            status, answer = harness.approver_call(
                server.url, "POST", "/v1/approvals/%s/%s" % (quote(approval_id, safe=""), action),
                {"reason": case["reason"]})
            self.assertEqual(status, 200, answer)
            self.assertEqual(answer["status"], {"approve": "approved", "deny": "denied"}[action])
        elif action == "kill_gated":
            server.kill()
        elif action != "nothing":
            raise AssertionError("unknown approver action %r" % action)

        worker.join()
        self.assertEqual([d["route"] for d in seen], want["decisions"],
                         [(d["route"], d.get("hard_blockers")) for d in seen])
        if want["tool_runs"]:
            self.assertNotIn("error", outcome)
            self.assertEqual(outcome["result"], "sent")
            self.assertEqual(ran, [arguments])
            final = seen[-1]
        else:
            error = outcome.get("error")
            self.assertIsInstance(error, gated.Blocked, "want Blocked, got %r" % (outcome,))
            self.assertEqual(ran, [])
            self.assertEqual(error.reason, want["reason"])
            self.assertIn(want["reason"], str(error))
            self.assertIs(error.decision, seen[-1])
            final = error.decision
        self.assertEqual(final["route"], want["route"])
        self.assertIs(final["execute"], want["execute"])
        if "hard_blockers" in want:
            self.assertEqual(final["hard_blockers"], want["hard_blockers"])
        if "status_after" in want:
            status, answer = harness.approver_call(
                server.url, "GET", "/v1/approvals/" + quote(approval_id, safe=""))
            self.assertEqual(status, 200, answer)
            self.assertEqual(answer["status"], want["status_after"])


for _case in APPROVALS["cases"]:
    for _way in ("sync", "async"):
        def _test(self, _case=_case, _way=_way):
            self.run_case(_case, _way)
        _test.__doc__ = "%s: %s" % (_way, _case["name"])
        setattr(Approvals, "test_%s_%s" % (_way, harness.slug(_case["name"])), _test)
del _case, _way, _test


if __name__ == "__main__":
    unittest.main()
