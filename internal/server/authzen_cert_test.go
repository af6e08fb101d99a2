package server_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/server"
)

// The AuthZEN certification fixture and scenario, as shipped.
const (
	authzenScenario = "../../spec/authzen/authorization-api-1_0-scenario.md"
	authzenCatalog  = "../../spec/authzen/fixture/catalog"
	authzenPolicy   = "../../spec/authzen/fixture/policy"
	authzenPDP      = "https://pdp.example.com"
)

// pepSecret is the PEP's token: scope pre_tool_check, and it vouches for
// the subjects it names (trust_event_principals), so user://alice counts.
const pepSecret = "authzen-pep-secret-012345"

// scenarioRequests reads the JSON blocks of the certification scenario,
// by the anchor of the section they are in ("c-2-2-1"), in order.
func scenarioRequests(t testing.TB) map[string][]string {
	t.Helper()
	f, err := os.Open(authzenScenario)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	anchor := regexp.MustCompile(`^#+ .*\{#(c-[0-9-]+)\}\s*$`)
	blocks := map[string][]string{}
	var section string
	var block *strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case block != nil && line == "~~~":
			blocks[section] = append(blocks[section], block.String())
			block = nil
		case block != nil:
			block.WriteString(line + "\n")
		case strings.HasPrefix(line, "~~~ json"):
			block = &strings.Builder{}
		default:
			if m := anchor.FindStringSubmatch(line); m != nil {
				section = m[1]
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return blocks
}

// authzenServer is the real handler, engine, catalog and policy on the
// certification fixture: a PDP loaded as the scenario's section C.1 says.
// opts are more of the engine's (approvals, audit); mod changes the rest.
func authzenServer(t testing.TB, opts []gate.Option, mod func(*server.Deps)) *fixture {
	t.Helper()
	cat, err := catalog.Load([]string{authzenCatalog})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Load([]string{authzenPolicy}, cat)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := auth.Parse([]byte(`
- name: pep
  sha256: ` + auth.Hash(pepSecret) + `
  scopes: [pre_tool_check]
  trust_event_principals: true
- name: reader
  sha256: ` + auth.Hash(readerSecret) + `
  scopes: [catalog_read]
- name: approver
  sha256: ` + auth.Hash(aliceSecret) + `
  scopes: [approve]
  principals: [operator://approver]
- name: other-pep
  sha256: ` + auth.Hash(otherSecret) + `
  scopes: [pre_tool_check]
  trust_event_principals: true
`))
	if err != nil {
		t.Fatal(err)
	}
	return newServer(t, func(d *server.Deps) {
		d.Engine = gate.New(append([]gate.Option{gate.WithClock(func() time.Time { return fixedNow }),
			gate.WithCatalog(func() *catalog.Catalog { return cat }, gate.UnknownDefer, catalog.ArgumentsEnforce),
			gate.WithPolicy(func() *policy.Set { return pol }, policy.NewLimiter())}, opts...)...)
		d.Tokens, d.PublicURL = tokens, authzenPDP
		if mod != nil {
			mod(d)
		}
	})
}

// authzen posts body to path with the PEP's token and checks what every
// AuthZEN answer must keep (transport, section C.5): never a 5xx, JSON,
// and a 200 is a decision or a list of decisions.
func (f *fixture) authzen(path, body string, header map[string]string) *response {
	f.t.Helper()
	h := map[string]string{"Authorization": "Bearer " + pepSecret}
	for k, v := range header {
		h[k] = v
	}
	res := f.do(request{method: http.MethodPost, target: path, body: strings.NewReader(body), header: h})
	if res.status >= 500 {
		f.t.Fatalf("%s answered %d: %s", path, res.status, res.raw)
	}
	if ct := res.header.Get("Content-Type"); ct != "application/json" {
		f.t.Fatalf("%s answered %d with Content-Type %q", path, res.status, ct)
	}
	if res.status == http.StatusOK {
		if _, batch := res.body["evaluations"]; batch {
			for i, e := range res.body["evaluations"].([]any) {
				checkAuthZENDecision(f.t, path, e, i)
			}
		} else {
			checkAuthZENDecision(f.t, path, res.body, -1)
		}
	}
	return res
}

// checkAuthZENDecision holds one decision to sections C.2.3 and C.3.3.3:
// a boolean decision, and a context that is an object when present.
func checkAuthZENDecision(t testing.TB, path string, v any, i int) {
	t.Helper()
	d, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: decision %d is no object: %v", path, i, v)
	}
	if _, ok := d["decision"].(bool); !ok {
		t.Fatalf("%s: decision %d has no boolean decision: %v", path, i, d)
	}
	if c, present := d["context"]; present {
		if _, ok := c.(map[string]any); !ok {
			t.Fatalf("%s: decision %d has a context that is no object: %v", path, i, d)
		}
	}
}

// decisions is what an answer decided: one decision for a single answer,
// each in order for a batch.
func decisions(t testing.TB, res *response) []bool {
	t.Helper()
	if evs, batch := res.body["evaluations"].([]any); batch {
		out := make([]bool, len(evs))
		for i, e := range evs {
			out[i] = e.(map[string]any)["decision"].(bool)
		}
		return out
	}
	return []bool{res.body["decision"].(bool)}
}

// The AuthZEN Authorization API 1.0 certification scenario, at the Basic,
// Batch and Discovery levels (Core and Properties), every test of the Test
// ID matrix: each request is the scenario's own JSON, read from the shipped
// text by its section, and the answer is held to the structure the
// scenario checks and, where it mandates one, the decision (the fixture's
// eight rules, section C.1.4). Search is out of gated's scope
// (docs/integrations.md#authzen says why).
func TestAuthZENCertification(t *testing.T) {
	t.Parallel()
	blocks := scenarioRequests(t)
	f := authzenServer(t, nil, nil)
	req := func(t *testing.T, section string, i int) string {
		t.Helper()
		if i >= len(blocks[section]) {
			t.Fatalf("the scenario has no JSON block %d in section %s", i, section)
		}
		return blocks[section][i]
	}

	// Requests the scenario gives with a decision to check, or any boolean
	// (nil want): the batch answers must have one decision per evaluation,
	// in order. single: the answer is one decision, not a list.
	decided := []struct {
		level, section, path string
		block                int
		want                 []bool // nil: structure only, of n decisions
		n                    int
		single               bool
	}{
		// Basic Core (C.2.2.1-3, 8, 9).
		{"basic-core", "c-2-2-1", authzenEvaluation, 0, []bool{true}, 1, true},
		{"basic-core", "c-2-2-2", authzenEvaluation, 0, []bool{false}, 1, true},
		{"basic-core", "c-2-2-3", authzenEvaluation, 0, []bool{true}, 1, true},
		{"basic-core", "c-2-2-8", authzenEvaluation, 0, []bool{true}, 1, true},
		{"basic-core", "c-2-2-9", authzenEvaluation, 0, []bool{true}, 1, true},
		// Basic Properties (C.2.2.4-7).
		{"basic-properties", "c-2-2-4", authzenEvaluation, 0, []bool{false}, 1, true},
		{"basic-properties", "c-2-2-5", authzenEvaluation, 0, []bool{true}, 1, true},
		{"basic-properties", "c-2-2-6", authzenEvaluation, 0, []bool{true}, 1, true},
		{"basic-properties", "c-2-2-7", authzenEvaluation, 0, []bool{false}, 1, true},
		// Batch Core (C.3.2.1, 2, 5, 6; C.3.4).
		{"batch-core", "c-3-2-1", authzenEvaluations, 0, nil, 2, false},
		{"batch-core", "c-3-2-2", authzenEvaluations, 0, []bool{true, false}, 2, false},
		{"batch-core", "c-3-2-5", authzenEvaluations, 0, []bool{true, false}, 2, false},
		{"batch-core", "c-3-2-6", authzenEvaluations, 0, nil, 2, false},
		{"batch-core", "c-3-4-1", authzenEvaluations, 0, []bool{true, false}, 2, false},
		{"batch-core", "c-3-4-2", authzenEvaluations, 0, []bool{true}, 1, true},
		{"batch-core", "c-3-4-3", authzenEvaluations, 0, []bool{true}, 1, true},
		// Batch Properties (C.3.2.3, 4, 7).
		{"batch-properties", "c-3-2-3", authzenEvaluations, 0, []bool{true, false}, 2, false},
		{"batch-properties", "c-3-2-4", authzenEvaluations, 0, []bool{false, true}, 2, false},
		{"batch-properties", "c-3-2-7", authzenEvaluations, 0, []bool{true, false}, 2, false},
	}
	for _, tt := range decided {
		t.Run(tt.level+"/"+tt.section, func(t *testing.T) {
			res := f.authzen(tt.path, req(t, tt.section, tt.block), nil)
			if res.status != http.StatusOK {
				t.Fatalf("%d %s", res.status, res.raw)
			}
			if _, batch := res.body["evaluations"]; batch == tt.single {
				t.Fatalf("a batch answer %v, want %v: %s", batch, !tt.single, res.raw)
			}
			// C.3.3.4: a list of decisions has no top-level decision.
			if _, top := res.body["decision"]; !tt.single && top {
				t.Errorf("a batch answer with a top-level decision: %s", res.raw)
			}
			got := decisions(t, res)
			if len(got) != tt.n {
				t.Fatalf("%d decisions, want %d: %s", len(got), tt.n, res.raw)
			}
			for i, w := range tt.want {
				if got[i] != w {
					t.Errorf("decision %d is %v, want %v: %s", i, got[i], w, res.raw)
				}
			}
		})
	}

	// The scenario's own expected answer, where it writes one as JSON, is
	// what the tests above want (so the table cannot drift from the text).
	for _, tt := range decided {
		if tt.want == nil || len(blocks[tt.section]) < 2 {
			continue
		}
		var expected map[string]any
		if err := json.Unmarshal([]byte(blocks[tt.section][1]), &expected); err != nil {
			t.Fatalf("%s: expected answer: %v", tt.section, err)
		}
		if got := decisions(t, &response{body: expected}); !equalBools(got, tt.want) {
			t.Errorf("%s: the scenario expects %v, the table %v", tt.section, got, tt.want)
		}
	}

	// Error handling (C.2.4): every request the scenario lists is a 400.
	for _, section := range []string{"c-2-4-1", "c-2-4-2", "c-2-4-6"} {
		for i, body := range blocks[section] {
			t.Run("basic-core/"+section+"/"+string(rune('a'+i)), func(t *testing.T) {
				if res := f.authzen(authzenEvaluation, body, nil); res.status != http.StatusBadRequest {
					t.Errorf("%d, want 400: %s", res.status, res.raw)
				}
			})
		}
	}
	if n := len(blocks["c-2-4-1"]) + len(blocks["c-2-4-2"]) + len(blocks["c-2-4-6"]); n != 10 {
		t.Errorf("read %d error requests from the scenario, want 10", n)
	}
	t.Run("basic-core/c-2-4-3-content-type", func(t *testing.T) {
		res := f.authzen(authzenEvaluation, req(t, "c-2-2-1", 0), map[string]string{"Content-Type": "text/plain"})
		if res.status != http.StatusBadRequest {
			t.Errorf("%d, want 400: %s", res.status, res.raw)
		}
	})
	for name, body := range map[string]string{"c-2-4-4-malformed": `{"subject": {"type": "user", "id": "alice"},`, "c-2-4-5-empty": ""} {
		t.Run("basic-core/"+name, func(t *testing.T) {
			for _, path := range []string{authzenEvaluation, authzenEvaluations} {
				if res := f.authzen(path, body, nil); res.status != http.StatusBadRequest {
					t.Errorf("%s: %d, want 400: %s", path, res.status, res.raw)
				}
			}
		})
	}

	// Header handling (C.2.5): X-Request-ID echoed as sent (even one gated
	// would not log as it is), and an answer without one.
	t.Run("basic-core/c-2-5", func(t *testing.T) {
		for _, id := range []string{"bfe9eb29-ab87-4ca3-be83-a1d5d8305716", "a request id with spaces"} {
			for _, path := range []string{authzenEvaluation, authzenEvaluations} {
				res := f.authzen(path, req(t, "c-2-2-1", 0), map[string]string{"X-Request-ID": id})
				if got := res.header.Get("X-Request-ID"); got != id {
					t.Errorf("%s: X-Request-ID %q, want %q", path, got, id)
				}
			}
		}
		if res := f.authzen(authzenEvaluation, req(t, "c-2-2-1", 0), nil); res.status != http.StatusOK {
			t.Errorf("without X-Request-ID: %d", res.status)
		}
		// A refusal before the handler (no token) echoes it too.
		res := f.do(request{method: http.MethodPost, target: authzenEvaluation, body: strings.NewReader(req(t, "c-2-2-1", 0)),
			header: map[string]string{"X-Request-ID": "r-401"}})
		if res.status != http.StatusUnauthorized || res.header.Get("X-Request-ID") != "r-401" {
			t.Errorf("unauthenticated: %d, X-Request-ID %q", res.status, res.header.Get("X-Request-ID"))
		}
	})

	// Idempotency (C.2.6): the same request, the same decision.
	t.Run("basic-core/c-2-6", func(t *testing.T) {
		for _, section := range []string{"c-2-2-1", "c-2-2-2"} {
			first := decisions(t, f.authzen(authzenEvaluation, req(t, section, 0), nil))
			for range 3 {
				if again := decisions(t, f.authzen(authzenEvaluation, req(t, section, 0), nil)); !equalBools(again, first) {
					t.Errorf("%s decided %v, then %v", section, first, again)
				}
			}
		}
	})

	// Discovery (C.6): the metadata, its identifier the base URL
	// discovered from, its endpoints HTTPS URLs.
	t.Run("discovery/c-6", func(t *testing.T) {
		res := f.do(request{method: http.MethodGet, target: "/.well-known/authzen-configuration"})
		if res.status != http.StatusOK || res.header.Get("Content-Type") != "application/json" {
			t.Fatalf("%d %q %s", res.status, res.header.Get("Content-Type"), res.raw)
		}
		if res.str("policy_decision_point") != authzenPDP {
			t.Errorf("policy_decision_point %q, want %q", res.str("policy_decision_point"), authzenPDP)
		}
		for k, path := range map[string]string{"access_evaluation_endpoint": authzenEvaluation, "access_evaluations_endpoint": authzenEvaluations} {
			u, err := url.Parse(res.str(k))
			if err != nil || u.Scheme != "https" || u.Host != "pdp.example.com" || u.Path != path {
				t.Errorf("%s %q, want %s%s", k, res.str(k), authzenPDP, path)
			}
		}
		for _, k := range []string{"search_subject_endpoint", "search_resource_endpoint", "search_action_endpoint", "signed_metadata"} {
			if _, ok := res.body[k]; ok {
				t.Errorf("%s offered: %s", k, res.raw)
			}
		}
	})
}

const (
	authzenEvaluation  = "/access/v1/evaluation"
	authzenEvaluations = "/access/v1/evaluations"
)

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
