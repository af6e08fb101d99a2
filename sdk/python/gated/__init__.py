"""Python SDK of gated: ask gated whether a tool call may run before it runs.

    client = gated.Client("http://127.0.0.1:8080", token="...")
    decision = client.check(event)            # never raises for gated's failures
    send_email = client.guard(send_email, tool_category="write", ...)
    send_email = client.guard(send_email, wait_for_approval=300, ...)  # waits for a person on ask
    send_email = client.guard(send_email, report_outcome=True, ...)    # tells gated how it went
    hooks = {"on_pre_tool_use": gated.copilot_pre_tool_use(client)}  # GitHub Copilot SDK

See README.md next to this package and ../README.md for the shared contract.
"""

# Defined before the import below: _client reads it for the User-Agent.
# pyproject.toml holds the same version (a test keeps the two equal).
__version__ = "0.1.0"

from ._client import (  # noqa: E402
    APPROVAL_POLL_SECONDS, APPROVAL_STATUSES, MAX_ANSWER_BYTES, PERMISSION_DECISIONS, ROUTES,
    Blocked, Client, GatedError)
from ._copilot import copilot_pre_tool_use  # noqa: E402

__all__ = ["Client", "Blocked", "GatedError", "copilot_pre_tool_use", "ROUTES",
           "PERMISSION_DECISIONS", "MAX_ANSWER_BYTES", "APPROVAL_STATUSES",
           "APPROVAL_POLL_SECONDS", "__version__"]
