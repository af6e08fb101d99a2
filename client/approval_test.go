package client_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatedhq/gated/client"
	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/testgated"
)

// approvalVectors is vectors.json's approvals section.
type approvalVectors struct {
	ServeArgs      []string     `json:"serve_args"`
	RequesterToken string       `json:"requester_token"`
	ApproverToken  string       `json:"approver_token"`
	Event          client.Event `json:"event"`
	Cases          []struct {
		Name     string `json:"name"`
		WaitMS   int    `json:"wait_ms"`
		Approver string `json:"approver"`
		Reason   string `json:"reason"`
		Want     struct {
			ToolRuns     bool     `json:"tool_runs"`
			Decisions    []string `json:"decisions"`
			Route        string   `json:"route"`
			Execute      bool     `json:"execute"`
			HardBlockers []string `json:"hard_blockers"`
			Reason       string   `json:"reason"`
			StatusAfter  string   `json:"status_after"`
		} `json:"want"`
	} `json:"cases"`
}

// TestConformanceApprovals: Guard with WaitForApproval against a real
// gated with approvals (PostgreSQL and tokens), each case on a gated and a
// database of its own, the approver being this test with plain HTTP.
func TestConformanceApprovals(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	av := v.Approvals
	if len(av.Cases) == 0 {
		t.Fatal("vectors.json has no approvals cases")
	}
	for _, tc := range av.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			_, dbURL := pgtest.Fresh(t)
			g := startGated(t, v, append(slices.Clone(av.ServeArgs), "--database-url", dbURL)...)
			approver := v.Tokens[av.ApproverToken]

			event := maps.Clone(av.Event)
			event["agent_id"] = "sdk-go-" + randomHex(t)
			arguments, _ := json.Marshal(event["proposed_arguments"])

			seen := make(chan *client.Decision, 8)
			c := client.New(g.URL, client.WithToken(v.Tokens[av.RequesterToken]),
				client.WithOnDecision(func(d *client.Decision) { seen <- d }))
			var runs atomic.Int32
			type outcome struct {
				out string
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				out, err := client.Guard(context.Background(), c, event, func(context.Context) (string, error) {
					runs.Add(1)
					return string(arguments), nil
				}, client.WaitForApproval(time.Duration(tc.WaitMS)*time.Millisecond))
				done <- outcome{out, err}
			}()

			var first *client.Decision
			select {
			case first = <-seen:
			case o := <-done:
				t.Fatalf("Guard returned (%q, %v) before reporting a decision", o.out, o.err)
			}
			if first.Route != "ask" || first.Approval == nil || first.Approval.ID == "" ||
				first.Approval.Status != client.ApprovalPending || first.Approval.URL == "" || len(first.Approval.EvidenceRef) == 0 {
				t.Fatalf("the first decision is route %s with approval %+v; want ask with a pending approval (id, url, evidence_ref)", first.Route, first.Approval)
			}
			id := first.Approval.ID
			if !pendingListHas(t, g.URL, approver, id) {
				t.Fatalf("approval %s is not in the approver's pending list", id)
			}

			switch tc.Approver {
			case "approve", "deny":
				decide(t, g.URL, approver, id, tc.Approver, tc.Reason)
			case "nothing":
			case "kill_gated":
				g.Kill()
			default:
				t.Fatalf("unknown approver action %q", tc.Approver)
			}

			o := <-done
			routes := []string{first.Route}
			last := first
			for len(seen) > 0 {
				last = <-seen
				routes = append(routes, last.Route)
			}
			if !slices.Equal(routes, tc.Want.Decisions) {
				t.Fatalf("OnDecision saw routes %q, want %q; the last has hard blockers %q\ngated's log:\n%s", routes, tc.Want.Decisions, last.HardBlockers, g.Logs())
			}
			var final *client.Decision
			if tc.Want.ToolRuns {
				if o.err != nil || o.out != string(arguments) || runs.Load() != 1 {
					t.Fatalf("Guard returned (%q, %v) and ran the tool %d times; want it run once", o.out, o.err, runs.Load())
				}
				final = last
			} else {
				var blocked *client.BlockedError
				if !errors.As(o.err, &blocked) {
					t.Fatalf("Guard returned (%q, %v), want a BlockedError", o.out, o.err)
				}
				if runs.Load() != 0 {
					t.Fatalf("the tool ran %d times although Guard reported it blocked", runs.Load())
				}
				if blocked.Reason != tc.Want.Reason {
					t.Fatalf("BlockedError reason %q, want %q (%v)", blocked.Reason, tc.Want.Reason, blocked)
				}
				if blocked.Decision != last {
					t.Fatalf("the BlockedError carries %s, not the last decision reported (%s)", blocked.Decision.Raw, last.Raw)
				}
				final = blocked.Decision
			}
			if final.Route != tc.Want.Route || final.Execute != tc.Want.Execute {
				t.Fatalf("final decision route %s execute %v, want %s %v", final.Route, final.Execute, tc.Want.Route, tc.Want.Execute)
			}
			if tc.Want.HardBlockers != nil && !slices.Equal(final.HardBlockers, tc.Want.HardBlockers) && len(final.HardBlockers)+len(tc.Want.HardBlockers) > 0 {
				t.Fatalf("final hard blockers %q, want %q", final.HardBlockers, tc.Want.HardBlockers)
			}
			if tc.Want.StatusAfter != "" {
				if got := approvalStatus(t, g.URL, approver, id); got != tc.Want.StatusAfter {
					t.Fatalf("approval status afterwards %q, want %q", got, tc.Want.StatusAfter)
				}
			}
		})
	}
}

// TestWaitForApprovalWithoutApprovals: on a gated without approvals (no
// database) an ask carries no approval, and Guard blocks at once as
// without the option.
func TestWaitForApprovalWithoutApprovals(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	g := startGated(t, v)
	var seen []string
	c := client.New(g.URL, client.WithToken(v.Tokens["valid"]),
		client.WithOnDecision(func(d *client.Decision) { seen = append(seen, d.Route) }))
	_, err := client.Guard(context.Background(), c, v.Approvals.Event, func(context.Context) (int, error) {
		t.Fatal("the tool ran")
		return 0, nil
	}, client.WaitForApproval(time.Hour))
	var blocked *client.BlockedError
	if !errors.As(err, &blocked) || blocked.Decision.Route != "ask" || blocked.Decision.Approval != nil || blocked.Reason != "" {
		t.Fatalf("got %v, want a BlockedError with the ask and no reason", err)
	}
	if !slices.Equal(seen, []string{"ask"}) {
		t.Fatalf("OnDecision saw %q, want [ask]", seen)
	}
}

// TestApprovalFailsClosed: reading an approval from a peer that gives no
// usable answer is an *Error naming the failure.
func TestApprovalFailsClosed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, base, want string }{
		{"refused", "http://" + testgated.ClosedAddr(t), client.BlockerUnreachable},
		{"another approval", "http://" + testgated.BrokenProxy(t, rawOK(`{"id":"other","status":"approved"}`)), client.BlockerBadAnswer},
		{"unknown status", "http://" + testgated.BrokenProxy(t, rawOK(`{"id":"a1","status":"maybe"}`)), client.BlockerBadAnswer},
		{"not found", "http://" + testgated.BrokenProxy(t, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"), "gated_http_404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := client.New(tc.base).Approval(context.Background(), "a1", 0)
			var cerr *client.Error
			if !errors.As(err, &cerr) || cerr.Blocker != tc.want {
				t.Fatalf("got %v, want blocker %s", err, tc.want)
			}
		})
	}
}

func rawOK(body string) string {
	return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n" + body
}

func randomHex(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// approverDo sends one request to gated with the approver token and
// decodes the JSON answer into out; any status but 200 fails the test.
func approverDo(t *testing.T, method, u, token string, body, out any) {
	t.Helper()
	var payload []byte
	if body != nil {
		payload, _ = json.Marshal(body)
	}
	req, err := http.NewRequest(method, u, bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	_ = json.NewDecoder(resp.Body).Decode(&raw)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: HTTP %d %s", method, u, resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%s %s: %v in %s", method, u, err, raw)
	}
}

// pendingListHas walks the approver's pending list for approval id.
func pendingListHas(t *testing.T, base, token, id string) bool {
	t.Helper()
	cursor := ""
	for {
		u := base + "/v1/approvals?status=pending&limit=50"
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		var page struct {
			Approvals []struct {
				ID     string `json:"id"`
				Status string `json:"status"`
			} `json:"approvals"`
			NextCursor string `json:"next_cursor"`
		}
		approverDo(t, http.MethodGet, u, token, nil, &page)
		for _, a := range page.Approvals {
			if a.ID == id {
				return a.Status == client.ApprovalPending
			}
		}
		if page.NextCursor == "" || page.NextCursor == cursor {
			return false
		}
		cursor = page.NextCursor
	}
}

// decide approves or denies approval id as the approver.
func decide(t *testing.T, base, token, id, action, reason string) {
	t.Helper()
	var a struct{ Status string }
	approverDo(t, http.MethodPost, base+"/v1/approvals/"+url.PathEscape(id)+"/"+action, token, map[string]string{"reason": reason}, &a)
	if want := map[string]string{"approve": "approved", "deny": "denied"}[action]; a.Status != want {
		t.Fatalf("%s answered status %q, want %q", action, a.Status, want)
	}
}

func approvalStatus(t *testing.T, base, token, id string) string {
	t.Helper()
	var a struct{ Status string }
	approverDo(t, http.MethodGet, base+"/v1/approvals/"+url.PathEscape(id), token, nil, &a)
	return a.Status
}
