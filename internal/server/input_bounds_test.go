package server_test

import (
	"net/http"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// validate posts body to /validate-tool-precheck with the runtime token.
func (f *fixture) validate(body string) *response {
	return f.do(request{method: http.MethodPost, target: "/validate-tool-precheck", body: strings.NewReader(body),
		header: map[string]string{"Authorization": "Bearer " + runtimeSecret}})
}

// firstValidationError is the first validation error of a decision
// (validation_errors) or a validation answer (errors).
func firstValidationError(res *response) map[string]any {
	for _, k := range []string{"validation_errors", "errors"} {
		if errs, _ := res.body[k].([]any); len(errs) > 0 {
			e, _ := errs[0].(map[string]any)
			return e
		}
	}
	return nil
}

func blockers(res *response) []any { bl, _ := res.body["hard_blockers"].([]any); return bl }

// A number beyond what gated checks (1e999999 used to cost tens of
// milliseconds of schema arithmetic each, and passed exclusiveMinimum 0) is
// refused: 200, route refuse, blocker argument_number_out_of_range, its path
// named and its value never repeated. 1e400 and -1e-400 stay valid
// (TestHugeNumbers).
func TestNumberOutOfRangeRefused(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	for _, n := range []string{"1e999999", "-1e-999999", "1e401", "1" + strings.Repeat("0", 41)} {
		body := eventWith(t, map[string]string{"proposed_arguments": `{"order":{"amount":` + n + `}}`})
		res := f.post(body)
		if res.status != http.StatusOK || res.str("route") != "refuse" || !slices.Equal(blockers(res), []any{"argument_number_out_of_range"}) {
			t.Fatalf("%s: %d %.400s", n, res.status, res.raw)
		}
		if e := firstValidationError(res); e["path"] != "$.proposed_arguments.order.amount" {
			t.Errorf("%s: validation error %v", n, e)
		}
		if strings.Contains(string(res.raw), n) {
			t.Errorf("%s: the answer repeats the number", n)
		}
		res = f.validate(body)
		if res.status != http.StatusOK || res.body["valid"] != false || firstValidationError(res)["path"] != "$.proposed_arguments.order.amount" {
			t.Errorf("%s: validate: %d %.400s", n, res.status, res.raw)
		}
	}
}

// evidence_refs: [{}] × 12,000 (36 KB) used to be normalised before the
// 128-ref cap: 8 MB per request on top of decoding, 1.5 GB of RSS at 200
// concurrent requests. It is refused with the cap's validation error, and a
// request costs little more than decoding the body. Serial: it counts the
// process's allocations, which tests running beside it would add to.
func TestEvidenceRefFloodRefused(t *testing.T) {
	f := newServer(t, nil)
	body := eventWith(t, map[string]string{"evidence_refs": "[" + strings.Repeat("{},", 11999) + "{}]"})
	res := f.post(body)
	if res.status != http.StatusOK || res.str("route") != "refuse" || !slices.Equal(blockers(res), []any{"schema_validation_failed"}) {
		t.Fatalf("%d %.400s", res.status, res.raw)
	}
	if e := firstValidationError(res); e["path"] != "$.evidence_refs" || e["keyword"] != "maxItems" {
		t.Errorf("validation error %v", e)
	}

	const runs = 10
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f.post(body)
	}
	runtime.ReadMemStats(&after)
	perRequest := (after.TotalAlloc - before.TotalAlloc) / runs
	t.Logf("%d bytes per request", perRequest)
	if perRequest > 4<<20 {
		t.Errorf("a refused flood allocates %d bytes per request", perRequest)
	}
}

// A NUL or another control character in tool_name used to be accepted (and
// sent to logs and the audit store); now it is a validation error at
// $.tool_name, and the answer's tool_name is cleaned.
func TestControlCharacterToolNameRefused(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	for _, name := range []string{`get\u0000weather`, `get_weather\n`, `get\u001b[2Jweather`, `get\u202eweather`} {
		res := f.post(eventWith(t, map[string]string{"tool_name": `"` + name + `"`}))
		if res.status != http.StatusOK || res.str("route") != "refuse" || !slices.Equal(blockers(res), []any{"schema_validation_failed"}) {
			t.Fatalf("%s: %d %.400s", name, res.status, res.raw)
		}
		if e := firstValidationError(res); e["path"] != "$.tool_name" {
			t.Errorf("%s: validation error %v", name, e)
		}
		if tn := res.str("tool_name"); strings.ContainsAny(tn, "\x00\n\x1b\u202e") {
			t.Errorf("%s: the answer repeats tool_name %q", name, tn)
		}
	}
	for _, field := range []string{"agent_id", "request_id"} {
		res := f.post(eventWith(t, map[string]string{field: `"x\u0000"`}))
		if res.str("route") != "refuse" || firstValidationError(res)["path"] != "$."+field {
			t.Errorf("%s: %d %.400s", field, res.status, res.raw)
		}
	}
}
