"""Python SDK of gated: ask gated whether a tool call may run before it runs.

    client = gated.Client("http://127.0.0.1:8080", token="...")
    decision = client.check(event)            # never raises for gated's failures
    send_email = client.guard(send_email, tool_category="write", ...)

See README.md next to this package and ../README.md for the shared contract.
"""

# Defined before the import below: _client reads it for the User-Agent.
# pyproject.toml holds the same version (a test keeps the two equal).
__version__ = "0.1.0"

from ._client import MAX_ANSWER_BYTES, ROUTES, Blocked, Client  # noqa: E402

__all__ = ["Client", "Blocked", "ROUTES", "MAX_ANSWER_BYTES", "__version__"]
