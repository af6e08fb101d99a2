# Fuzzing: every fuzz target for FUZZTIME each. `make fuzz-short` (30 s a
# target) runs in CI after make test; `make fuzz` runs longer by hand.
# Crashers found land in the package's testdata/fuzz and then run as
# regression seeds in every `go test`.

FUZZ_TARGETS := ./internal/server:FuzzDecide ./internal/opfile:FuzzFrontmatter ./internal/policy:FuzzParse ./internal/redact:FuzzDigitGroupBound \
	./internal/opfile/fastschema:FuzzFastSchema ./internal/opfile/fastschema:FuzzFastSchemaGenerated
FUZZ_TARGETS += ./internal/pathset:FuzzCanonical ./internal/shell:FuzzParse
.PHONY: fuzz fuzz-short

fuzz-short:
	$(MAKE) fuzz FUZZTIME=30s

FUZZTIME ?= 5m
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name in $$pkg for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done
