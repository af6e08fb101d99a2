# Fuzzing: every fuzz target for FUZZTIME each. `make fuzz-short` (30 s a
# target) runs in CI after make test; `make fuzz` runs longer by hand.
# Crashers found land in the package's testdata/fuzz and then run as
# regression seeds in every `go test`.

FUZZ_TARGETS := ./internal/server:FuzzDecide ./internal/opfile:FuzzFrontmatter ./internal/policy:FuzzParse ./internal/policy:FuzzNativeMatchesRego ./internal/redact:FuzzDigitGroupBound \
	./internal/opfile/fastschema:FuzzFastSchema ./internal/opfile/fastschema:FuzzFastSchemaGenerated
FUZZ_TARGETS += ./internal/pathset:FuzzCanonical ./internal/shell:FuzzParse ./internal/adapter/hook/wire:FuzzParse
FUZZ_TARGETS += ./internal/eventcodec:FuzzDecodeAgrees ./internal/envelope:FuzzAppendJSONAgrees
.PHONY: fuzz fuzz-short

fuzz-short:
	$(MAKE) fuzz FUZZTIME=30s

# Go 1.26's fuzz coordinator can end a run with a bare "context deadline
# exceeded" at the -fuzztime boundary, with no failing input (golang/go#75804,
# fixed in Go 1.27). Such a run is reported and not counted as a failure; any
# other failure, or one that wrote a failing input to testdata/fuzz, fails.
FUZZTIME ?= 5m
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; corpus=$$pkg/testdata/fuzz/$$name; \
		echo "fuzz $$name in $$pkg for $(FUZZTIME)"; \
		before=$$(ls $$corpus 2>/dev/null | wc -l); \
		if ! $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg > .fuzz.log 2>&1; then \
			cat .fuzz.log; after=$$(ls $$corpus 2>/dev/null | wc -l); \
			if [ "$$after" = "$$before" ] && grep -q '^    context deadline exceeded$$' .fuzz.log && \
				[ "$$(grep -c -- '--- FAIL' .fuzz.log)" = 1 ]; then \
				echo "fuzz $$name: the coordinator's end-of-run race (golang/go#75804), no failing input: not a failure"; \
			else rm -f .fuzz.log; exit 1; fi; \
		else tail -n 3 .fuzz.log; fi; \
	done; rm -f .fuzz.log
