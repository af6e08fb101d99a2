package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gatedhq/gated/client"
	"github.com/gatedhq/gated/internal/testgated"
)

// vectors is sdk/testdata/vectors.json, shared with the Python and
// TypeScript SDKs.
type vectors struct {
	raw       map[string]any
	ServeArgs []string          `json:"serve_args"`
	Tokens    map[string]string `json:"tokens"`
	Checks    []struct {
		Name   string       `json:"name"`
		Event  client.Event `json:"event"`
		Shadow bool         `json:"shadow"`
		Want   struct {
			Route        string   `json:"route"`
			Execute      bool     `json:"execute"`
			Shadow       bool     `json:"shadow"`
			ToolRuns     bool     `json:"tool_runs"`
			HardBlockers []string `json:"hard_blockers"`
		} `json:"want"`
	} `json:"checks"`
	Failures []struct {
		Name        string `json:"name"`
		Fault       string `json:"fault"`
		Shadow      bool   `json:"shadow"`
		TimeoutMS   int    `json:"timeout_ms"`
		Token       string `json:"token"`
		Respond     string `json:"respond"`
		WantBlocker string `json:"want_blocker"`
	} `json:"failures"`
	Approvals approvalVectors `json:"approvals"`
	Outcomes  outcomeVectors  `json:"outcomes"`
}

const testdata = "../sdk/testdata"

func loadVectors(t *testing.T) *vectors {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testdata, "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &v.raw); err != nil {
		t.Fatal(err)
	}
	return &v
}

func startGated(t *testing.T, v *vectors, extra ...string) *testgated.Server {
	args := slices.Clone(v.ServeArgs)
	for i, a := range args {
		if i > 0 && (args[i-1] == "--tokens" || args[i-1] == "--catalog") {
			args[i] = filepath.Join(testdata, a)
		}
	}
	return testgated.Start(t, append(args, extra...)...)
}

// check runs one event through both Check and Guard and returns what each
// saw: the decision, and whether the guarded tool ran.
func check(t *testing.T, c *client.Client, ev client.Event) (*client.Decision, *client.Decision, bool) {
	t.Helper()
	d, _ := c.Check(context.Background(), ev)
	ran := false
	out, err := client.Guard(context.Background(), c, ev, func(context.Context) (string, error) {
		ran = true
		return "done", nil
	})
	var blocked *client.BlockedError
	switch {
	case err == nil:
		if out != "done" || !ran {
			t.Fatalf("Guard returned %q, nil without running the tool", out)
		}
		return d, nil, true
	case errors.As(err, &blocked):
		if ran {
			t.Fatal("Guard ran the tool and still reported it blocked")
		}
		return d, blocked.Decision, false
	}
	t.Fatalf("Guard returned an error that is not a BlockedError: %v", err)
	return nil, nil, false
}

func TestConformanceChecks(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	g := startGated(t, v)
	for _, tc := range v.Checks {
		t.Run(tc.Name, func(t *testing.T) {
			c := client.New(g.URL, client.WithToken(v.Tokens["valid"]), client.WithShadow(tc.Shadow))
			d, blocked, ran := check(t, c, tc.Event)
			if d.Route != tc.Want.Route || d.Execute != tc.Want.Execute || d.Shadow != tc.Want.Shadow {
				t.Fatalf("route %s execute %v shadow %v, want %s %v %v", d.Route, d.Execute, d.Shadow, tc.Want.Route, tc.Want.Execute, tc.Want.Shadow)
			}
			if !slices.Equal(d.HardBlockers, tc.Want.HardBlockers) && len(d.HardBlockers)+len(tc.Want.HardBlockers) > 0 {
				t.Fatalf("hard blockers %q, want %q", d.HardBlockers, tc.Want.HardBlockers)
			}
			if ran != tc.Want.ToolRuns {
				t.Fatalf("tool ran: %v, want %v", ran, tc.Want.ToolRuns)
			}
			if blocked != nil && blocked.Route != tc.Want.Route {
				t.Fatalf("BlockedError carries route %s, want %s", blocked.Route, tc.Want.Route)
			}
			if d.DecisionID == "" || len(d.Raw) == 0 {
				t.Fatalf("decision lacks its id or raw answer: %+v", d)
			}
		})
	}
}

func TestConformanceFailures(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	g := startGated(t, v)
	event := v.Checks[0].Event // accepted when gated answers
	for i, tc := range v.Failures {
		t.Run(tc.Name, func(t *testing.T) {
			c := failingClient(t, v, g, i)
			d, err := c.Check(context.Background(), event)
			var cerr *client.Error
			if !errors.As(err, &cerr) || cerr.Blocker != tc.WantBlocker {
				t.Fatalf("Check error %v, want blocker %s", err, tc.WantBlocker)
			}
			_, blocked, ran := check(t, c, event)
			for _, got := range []*client.Decision{d, blocked} {
				if ran || got == nil || got.Route != "refuse" || got.Execute || !slices.Equal(got.HardBlockers, []string{tc.WantBlocker}) {
					t.Fatalf("ran %v, decision %+v; want a refusal with blocker %s", ran, got, tc.WantBlocker)
				}
			}
		})
	}
}

// failingClient is a client facing failure vector i's fault, injected for
// real.
func failingClient(t *testing.T, v *vectors, g *testgated.Server, i int) *client.Client {
	tc := v.Failures[i]
	opts := []client.Option{client.WithToken(v.Tokens["valid"]), client.WithShadow(tc.Shadow)}
	if tc.TimeoutMS > 0 {
		opts = append(opts, client.WithTimeout(time.Duration(tc.TimeoutMS)*time.Millisecond))
	}
	base := ""
	switch tc.Fault {
	case "refused":
		base = "http://" + testgated.ClosedAddr(t)
	case "silent":
		base = "http://" + testgated.SilentAddr(t)
	case "token":
		base = g.URL
		opts = append(opts, client.WithToken(v.Tokens[tc.Token]))
	case "respond":
		base = "http://" + testgated.BrokenProxy(t, tc.Respond)
	default:
		t.Fatalf("unknown fault %q", tc.Fault)
	}
	return client.New(base, opts...)
}

// TestShadowReportsWouldBeRoute: in shadow mode the tool runs and the
// OnDecision callback sees the route gated would have enforced.
func TestShadowReportsWouldBeRoute(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	g := startGated(t, v)
	var seen []string
	c := client.New(g.URL, client.WithToken(v.Tokens["valid"]), client.WithShadow(true),
		client.WithOnDecision(func(d *client.Decision) { seen = append(seen, d.Route) }))
	for _, tc := range v.Checks {
		if tc.Want.Route == "ask" {
			if _, err := client.Guard(context.Background(), c, tc.Event, func(context.Context) (int, error) { return 1, nil }); err != nil {
				t.Fatalf("shadow guard blocked: %v", err)
			}
			break
		}
	}
	if !slices.Equal(seen, []string{"ask"}) {
		t.Fatalf("OnDecision saw %q, want [ask]", seen)
	}
}

// TestRedirectIsAFailure: a 3xx is not followed to another target.
func TestRedirectIsAFailure(t *testing.T) {
	t.Parallel()
	addr := testgated.BrokenProxy(t, "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:1/pre-tool-check\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	_, err := client.New("http://"+addr).Check(context.Background(), client.Event{})
	var cerr *client.Error
	if !errors.As(err, &cerr) || cerr.Blocker != "gated_http_307" {
		t.Fatalf("got %v, want gated_http_307", err)
	}
}
