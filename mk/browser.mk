# The web console in a real browser: headless Chromium (Debian's chromium
# package) drives /ui/ against a real gated and PostgreSQL
# (internal/console/browser_test.go). Part of make test-e2e; CI installs
# Chromium itself (.ci/run). With GATED_BROWSER_TEST=1 a missing Chromium
# fails the test instead of skipping it.
.PHONY: test-browser screenshots

## test-browser: the console's approval flow in headless Chromium (part of make test-e2e).
test-browser: gated-bin
	GATED_BIN=$(GATED_BIN) GATED_BROWSER_TEST=1 $(GO) test -count=1 -run '^TestBrowser' ./internal/console

## screenshots: run the browser test and write its screenshots to docs/img.
screenshots: gated-bin
	GATED_BIN=$(GATED_BIN) GATED_BROWSER_TEST=1 GATED_UPDATE_SCREENSHOTS=1 $(GO) test -count=1 -run '^TestBrowser' ./internal/console

test-e2e: test-browser
