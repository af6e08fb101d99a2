"""Tests of the gated Python SDK; run them as sdk/python/README.md says."""
