package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gatedhq/gated/client"
	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/testgated"
)

// outcomeVectors is vectors.json's outcomes section.
type outcomeVectors struct {
	ServeArgs   []string `json:"serve_args"`
	ReaderToken string   `json:"reader_token"`
	Cases       []struct {
		Name     string       `json:"name"`
		Database *bool        `json:"database"`
		Event    client.Event `json:"event"`
		Shadow   bool         `json:"shadow"`
		Returns  string       `json:"returns"`
		Raises   string       `json:"raises"`
		Want     struct {
			Blocked     bool            `json:"blocked"`
			ReportError bool            `json:"report_error"`
			Outcome     json.RawMessage `json:"outcome"`
		} `json:"want"`
	} `json:"cases"`
}

// ToolError is the error class the vectors' raising tool raises.
type ToolError struct{ msg string }

func (e ToolError) Error() string { return e.msg }

// TestConformanceOutcomes: Guard with ReportOutcome against a real gated,
// with a decision store (the outcome is read back) and without (every
// report fails, and the tool's result still comes back unchanged).
func TestConformanceOutcomes(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	ov := v.Outcomes
	if len(ov.Cases) == 0 {
		t.Fatal("vectors.json has no outcomes cases")
	}
	_, dbURL := pgtest.Fresh(t)
	withStore := startGated(t, v, append(slices.Clone(ov.ServeArgs), "--database-url", dbURL)...)
	withoutStore := startGated(t, v)
	for _, tc := range ov.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			g := withStore
			if tc.Database != nil && !*tc.Database {
				g = withoutStore
			}
			var seen *client.Decision
			c := client.New(g.URL, client.WithToken(v.Tokens["valid"]), client.WithShadow(tc.Shadow),
				client.WithOnDecision(func(d *client.Decision) { seen = d }))
			var reportErrors []error
			toolErr := ToolError{tc.Raises}
			ran := false
			out, err := client.Guard(context.Background(), c, tc.Event, func(context.Context) (string, error) {
				ran = true
				if tc.Raises != "" {
					return "", toolErr
				}
				return tc.Returns, nil
			}, client.ReportOutcome(func(err error) { reportErrors = append(reportErrors, err) }))

			var blocked *client.BlockedError
			switch {
			case tc.Want.Blocked:
				if ran || !errors.As(err, &blocked) {
					t.Fatalf("Guard returned (%q, %v), ran %v; want it blocked", out, err, ran)
				}
			case tc.Raises != "":
				if !ran || err != error(toolErr) {
					t.Fatalf("Guard returned (%q, %v); want the tool's own error", out, err)
				}
			case !ran || err != nil || out != tc.Returns:
				t.Fatalf("Guard returned (%q, %v); want the tool's %q", out, err, tc.Returns)
			}
			if got := len(reportErrors) > 0; got != tc.Want.ReportError || len(reportErrors) > 1 {
				t.Fatalf("onError saw %v; want called: %v", reportErrors, tc.Want.ReportError)
			}
			if g == withoutStore {
				return
			}
			rec := readDecision(t, g.URL, v.Tokens[ov.ReaderToken], seen.DecisionID)
			checkOutcome(t, rec["outcome"], tc.Want.Outcome)
			if tc.Raises != "" && (strings.Contains(string(mustJSON(t, rec)), tc.Raises) || strings.Contains(g.Logs(), tc.Raises)) {
				t.Fatal("the tool's error message reached gated")
			}
		})
	}
}

// checkOutcome compares a decision's outcome with the vector's: null for
// none, else its status and this SDK's error_class.
func checkOutcome(t *testing.T, got any, want json.RawMessage) {
	t.Helper()
	if string(want) == "null" {
		if got != nil {
			t.Fatalf("the decision has outcome %v; want none", got)
		}
		return
	}
	var w struct {
		Status     string            `json:"status"`
		ErrorClass map[string]string `json:"error_class"`
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	o, _ := got.(map[string]any)
	class, _ := o["error_class"].(string)
	if o == nil || o["status"] != w.Status || class != w.ErrorClass["go"] {
		t.Fatalf("the decision has outcome %v; want status %s, error_class %q", got, w.Status, w.ErrorClass["go"])
	}
}

// readDecision reads decision id back with token.
func readDecision(t *testing.T, base, token, id string) map[string]any {
	t.Helper()
	var rec map[string]any
	approverDo(t, http.MethodGet, base+"/v1/decisions/"+url.PathEscape(id), token, nil, &rec)
	return rec
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRecordOutcomeNamesGatedsCode: a refused report is an *Error whose
// Err carries gated's status and code, for a caller to tell them apart.
func TestRecordOutcomeNamesGatedsCode(t *testing.T) {
	t.Parallel()
	body := `{"route":"refuse","error":"an outcome is already recorded for this decision; each decision has one","code":"outcome_exists"}`
	base := "http://" + testgated.BrokenProxy(t, "HTTP/1.1 409 Conflict\r\nContent-Type: application/json\r\nContent-Length: "+
		strconv.Itoa(len(body))+"\r\nConnection: close\r\n\r\n"+body)
	err := client.New(base).RecordOutcome(context.Background(), "d1", client.Outcome{Status: client.OutcomeSucceeded})
	var cerr *client.Error
	var he *client.HTTPError
	if !errors.As(err, &cerr) || cerr.Blocker != "gated_http_409" || !errors.As(err, &he) || he.Status != 409 || he.Code != "outcome_exists" {
		t.Fatalf("got %v, want gated_http_409 with code outcome_exists", err)
	}
}
