# The github bundle source against a repository with a 96 MB blob: it writes
# and compresses the blob (seconds), so it is part of make test-e2e, not
# make test (internal/bundle/gitcap_test.go, TestGitBigBlobRSS).
.PHONY: test-bundle-big

## test-bundle-big: a github source whose history and current commit hold a 96 MB blob loads within its cap (part of make test-e2e).
test-bundle-big:
	GATED_BIG_BLOB_TEST=1 $(GO) test -count=1 -run '^TestGitBigBlobRSS$$' ./internal/bundle

test-e2e: test-bundle-big
