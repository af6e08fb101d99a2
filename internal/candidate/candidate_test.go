package candidate_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/file"
	"github.com/gatedhq/gated/internal/candidate"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/sources"
	"github.com/gatedhq/gated/internal/testtree"
)

// written hands each batch the candidate writes to a channel, after
// writing it to the file beside an audit file.
type written struct {
	file    *file.Candidates
	batches chan []*audit.Candidate
}

func (w written) WriteCandidates(ctx context.Context, cs []*audit.Candidate) error {
	err := w.file.WriteCandidates(ctx, cs)
	w.batches <- cs
	return err
}

// A full queue skips and counts; what was queued is decided with the
// candidate's engine, compared, counted and written to the file beside
// the audit file, with the caller's tool name masked.
func TestCandidateQueueSkipsAndWrites(t *testing.T) {
	t.Parallel()
	path := file.CandidatesPath(filepath.Join(t.TempDir(), "audit.jsonl"))
	f, err := file.OpenCandidates(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	w := written{file: f, batches: make(chan []*audit.Candidate, 4)}
	m := metrics.New("test")
	// The candidate refuses every tool no catalog describes; the live
	// engine, without a catalog, lets the contract rules decide.
	dir := t.TempDir()
	testtree.Write(t, dir, map[string]string{"other/TOOL.md": "---\nname: other\nid: other\ndescription: another tool\nversion: 1.0.0\n" +
		"inputs: {type: object}\noutputs: {type: object}\n---\n"})
	other, err := catalog.Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	cat := gate.New(gate.WithCatalog(func() *catalog.Catalog { return other }, gate.UnknownRefuse, catalog.ArgumentsEnforce))
	c := candidate.New(candidate.Config{Engine: cat, Writer: w, Queue: 1, Metrics: m})
	live := gate.New(gate.WithFollower(c.Follow))
	const secretTool = "sk-live-abcdefghijklmnopqrstuvwx"
	ev := map[string]any{"tool_name": secretTool, "tool_category": "public_read", "authorization_state": "none", "evidence_refs": []any{},
		"risk_domain": "research", "proposed_arguments": map[string]any{"q": "x"}, "recommended_route": "accept"}
	var first *gate.Decision
	for i := range 3 {
		d := live.Decide(context.Background(), gate.Request{Event: ev, TokenName: "agent", Principals: []string{"bot://agent-7"}})
		if d.Route != route.Accept {
			t.Fatalf("live route %s blockers %v", d.Route, d.HardBlockers)
		}
		if i == 0 {
			first = d
		}
	}
	if s := c.Status(); s.Skipped != 2 || s.QueueDepth != 1 || s.QueueCapacity != 1 {
		t.Fatalf("status before running: %+v, want two skipped and one queued", s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go c.Run(ctx)
	batch := <-w.batches
	cancel()
	c.Wait()
	if len(batch) != 1 {
		t.Fatalf("wrote %d rows, want 1", len(batch))
	}
	got := batch[0]
	if got.DecisionID != first.DecisionID || got.LiveRoute != "accept" || got.Route != "refuse" || got.Direction != audit.DirectionNarrower ||
		!strings.Contains(strings.Join(got.HardBlockers, ","), route.CodeToolNotInCatalog) || got.TokenName != "agent" || got.Principals[0] != "bot://agent-7" {
		t.Fatalf("row %+v", got)
	}
	if s := c.Status(); s.Decided != 1 || s.Narrower != 1 || s.Wider != 0 {
		t.Errorf("status after: %+v", s)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "abcdefghijklmnop") {
		t.Fatalf("the file holds the tool name's secret: %s", data)
	}
	var line audit.Candidate
	if err := json.Unmarshal(data, &line); err != nil || line.DecisionID != first.DecisionID {
		t.Fatalf("the file's line %s: %v", data, err)
	}
}

// Live decisions made concurrently while the candidate runs are each
// either decided by it or skipped, and the counts say which.
func TestCandidateUnderConcurrentDecisions(t *testing.T) {
	t.Parallel()
	w := written{batches: make(chan []*audit.Candidate, 64)}
	c := candidate.New(candidate.Config{Engine: gate.New(), Writer: counted{w}, Queue: 8})
	live := gate.New(gate.WithFollower(c.Follow))
	ctx, cancel := context.WithCancel(context.Background())
	go c.Run(ctx)
	const workers, each = 4, 25
	done := make(chan struct{})
	for range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for range each {
				ev := map[string]any{"tool_name": "search_docs", "tool_category": "public_read", "authorization_state": "none", "evidence_refs": []any{},
					"risk_domain": "research", "proposed_arguments": map[string]any{"q": "x"}, "recommended_route": "accept"}
				live.Decide(context.Background(), gate.Request{Event: ev})
			}
		}()
	}
	for range workers {
		<-done
	}
	rows := 0
	for s := c.Status(); s.Decided+s.Skipped < workers*each; s = c.Status() {
		rows += len(<-w.batches)
	}
	cancel()
	c.Wait()
	close(w.batches)
	for b := range w.batches {
		rows += len(b)
	}
	if s := c.Status(); s.Decided+s.Skipped != workers*each || int64(rows) != s.Decided || s.Wider+s.Narrower != 0 {
		t.Fatalf("status %+v, %d rows written, want %d decisions each decided (and written) or skipped, all agreeing", s, rows, workers*each)
	}
}

// counted hands each batch on without a file.
type counted struct{ w written }

func (c counted) WriteCandidates(_ context.Context, cs []*audit.Candidate) error {
	c.w.batches <- cs
	return nil
}

// A candidate policy that writes an argument value into its finding code
// gets it stored as a record would hold it: fingerprinted with the live
// Redactor's key (an e-mail address is personal data).
func TestCandidateRowScreened(t *testing.T) {
	t.Parallel()
	const leak = `package gated.custom.leak

findings contains {
	"code": concat("_", ["to", input.event.proposed_arguments.to]),
	"route": "refuse",
	"blocking": true,
	"message": "leak",
} if input.event.proposed_arguments.to
`
	dir := testtree.Write(t, t.TempDir(), map[string]string{"POLICY.md": "---\nschema: policy/v1\nid: \"@candidate-tests/leak\"\n---\n", "rules/leak.rego": leak})
	src, err := sources.Load(sources.Config{CatalogDirs: []string{"../../examples/catalog"}, PolicyDirs: []string{dir}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := file.CandidatesPath(filepath.Join(t.TempDir(), "audit.jsonl"))
	f, err := file.OpenCandidates(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	w := written{file: f, batches: make(chan []*audit.Candidate, 1)}
	red := audit.NewRedactor([]byte("candidate-test-key"))
	c := candidate.New(candidate.Config{Engine: gate.New(src.Opts...), Writer: w, Redactor: red})
	live := gate.New(gate.WithFollower(c.Follow))
	ev := map[string]any{"tool_name": "send_email", "tool_category": "write", "authorization_state": "confirmed", "evidence_refs": []any{},
		"risk_domain": "customer_support", "proposed_arguments": map[string]any{"to": "alice@example.com", "subject": "Hi", "body": "b", "ticket_id": "T-1"},
		"recommended_route": "accept"}
	live.Decide(context.Background(), gate.Request{Event: ev, Principals: []string{"alice@example.com"}})
	ctx, cancel := context.WithCancel(context.Background())
	go c.Run(ctx)
	batch := <-w.batches
	cancel()
	c.Wait()
	row := batch[0]
	if want := red.Screen("to_alice@example.com"); !slices.Contains(row.HardBlockers, want) {
		t.Errorf("blockers %v, want the code's fingerprint %s among them", row.HardBlockers, want)
	}
	if want := red.Screen("alice@example.com"); len(row.Principals) != 1 || row.Principals[0] != want {
		t.Errorf("principals %v, want the record's fingerprint %s", row.Principals, want)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "alice") {
		t.Fatalf("the candidate file holds the argument: %s", data)
	}
}
