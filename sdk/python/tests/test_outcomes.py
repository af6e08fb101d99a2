"""The outcomes vectors (sdk/testdata/vectors.json, section outcomes):
guard(..., report_outcome=True) against a real gated with a decision store
(PostgreSQL), the outcome read back with the reader token, and against one
without, where every report fails and the tool's result still comes back.
Each case runs through the sync and the async wrapper."""

import asyncio
import json
import unittest
from urllib.parse import quote

import gated
from . import harness

OUTCOMES = harness.VECTORS["outcomes"]
WITH_STORE = WITHOUT_STORE = None


class ToolError(Exception):
    """The error class the vectors' raising tool raises."""


def setUpModule():
    global WITH_STORE, WITHOUT_STORE
    WITH_STORE = harness.Gated(*OUTCOMES["serve_args"], "--database-url", harness.database_url())
    WITHOUT_STORE = harness.Gated()


def tearDownModule():
    for server in (WITH_STORE, WITHOUT_STORE):
        if server is not None:
            server.stop()


class Outcomes(unittest.TestCase):

    def run_case(self, case, way):
        want = case["want"]
        server = WITH_STORE if case.get("database", True) else WITHOUT_STORE
        fields = dict(case["event"])
        arguments = fields.pop("proposed_arguments")
        seen, ran, report_errors = [], [], []
        raised = ToolError(case["raises"]) if "raises" in case else None
        client = gated.Client(server.url, token=harness.TOKENS["valid"],
                              shadow=case.get("shadow", False), on_decision=seen.append)

        def body(kwargs):
            ran.append(kwargs)
            if raised is not None:
                raise raised
            return case["returns"]

        if way == "sync":
            def tool(**kwargs):
                return body(kwargs)
        else:
            async def tool(**kwargs):
                return body(kwargs)
        guarded = client.guard(tool, report_outcome=True,
                               on_outcome_error=report_errors.append, **fields)
        result = error = None
        try:
            result = guarded(**arguments) if way == "sync" else asyncio.run(guarded(**arguments))
        except Exception as e:  # noqa: BLE001 — checked below
            error = e

        if want["blocked"]:
            self.assertIsInstance(error, gated.Blocked)
            self.assertEqual(ran, [])
        elif raised is not None:
            self.assertIs(error, raised, "guard did not raise the tool's own error")
        else:
            self.assertIsNone(error)
            self.assertEqual(result, case["returns"])
        self.assertEqual(len(report_errors), 1 if want["report_error"] else 0, report_errors)
        for e in report_errors:
            self.assertIsInstance(e, gated.GatedError)
        if server is WITHOUT_STORE:
            return

        status, record = harness.call_as(OUTCOMES["reader_token"], server.url, "GET",
                                         "/v1/decisions/" + quote(seen[-1]["decision_id"], safe=""))
        self.assertEqual(status, 200, record)
        got = record.get("outcome")
        if want["outcome"] is None:
            self.assertIsNone(got)
        else:
            self.assertIsInstance(got, dict, record)
            self.assertEqual(got["status"], want["outcome"]["status"])
            self.assertEqual(got.get("error_class"),
                             want["outcome"].get("error_class", {}).get("python"))
        if raised is not None:
            self.assertNotIn(case["raises"], json.dumps(record))
            self.assertNotIn(case["raises"], "".join(server.log))


for _case in OUTCOMES["cases"]:
    for _way in ("sync", "async"):
        def _test(self, _case=_case, _way=_way):
            self.run_case(_case, _way)
        _test.__doc__ = "%s: %s" % (_way, _case["name"])
        setattr(Outcomes, "test_%s_%s" % (_way, harness.slug(_case["name"])), _test)
del _case, _way, _test
