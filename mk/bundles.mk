# The github bundle source against repositories with big blobs: it writes
# and compresses the blob (seconds), so it is part of make test-e2e, not
# make test (internal/bundle/gitcap_test.go, TestGitBigBlobRSS).
.PHONY: test-bundle-big

## test-bundle-big: a github source whose history and current commit hold a big blob loads within twice its cap in RSS (part of make test-e2e).
test-bundle-big:
	GATED_BIG_BLOB_TEST=1 $(GO) test -count=1 -run '^TestGitBigBlobRSS$$' ./internal/bundle

test-e2e: test-bundle-big
