package replay_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/chain"
	"github.com/gatedhq/gated/internal/audit/file"
	auditpg "github.com/gatedhq/gated/internal/audit/postgres"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/eventcodec"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/pgtest"
	pgdb "github.com/gatedhq/gated/internal/postgres"
	"github.com/gatedhq/gated/internal/replay"
	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/sources"
	"github.com/gatedhq/gated/internal/testtree"
)

// The policy decisions are recorded under grants send-email to the support
// agent; the changed one grants it to bot://other instead.
const (
	grantSupport = "---\nschema: policy/v1\nid: \"@replay-tests/before\"\ngrants:\n  - principal: \"bot://support-agent\"\n    actions:\n      - action: \"messaging:send-email\"\n---\n"
	grantOther   = "---\nschema: policy/v1\nid: \"@replay-tests/after\"\ngrants:\n  - principal: \"bot://other\"\n    actions:\n      - action: \"messaging:send-email\"\n---\n"
)

const email = `{"tool_name":"send_email","tool_category":"write","authorization_state":"confirmed",
	"evidence_refs":[{"source_id":"approval.1","kind":"approval","trust_tier":"verified","redaction_status":"redacted","freshness":{"status":"fresh"},"provenance":"connector"}],
	"risk_domain":"customer_support","proposed_arguments":{"to":"c@example.com","subject":"Hi","body":"Your refund is on its way.","ticket_id":"T-42"},"recommended_route":"accept"}`

func load(t *testing.T, policy string) *sources.Sources {
	t.Helper()
	dir := testtree.Write(t, t.TempDir(), map[string]string{"POLICY.md": policy})
	src, err := sources.Load(sources.Config{CatalogDirs: []string{"../../examples/catalog"}, PolicyDirs: []string{dir}, Limits: replay.Unlimited}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func event(t *testing.T, s string) map[string]any {
	t.Helper()
	doc, err := eventcodec.Decode([]byte(s), eventcodec.DefaultMaxDepth)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// record decides four calls under grantSupport through the real engine and
// recorder into sink, and returns the window holding them.
func record(t *testing.T, sink audit.Sink, red *audit.Redactor) replay.Window {
	t.Helper()
	ctx := context.Background()
	// Signed, so the trail holds checkpoints beside the records, which
	// replay passes over.
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := audit.NewRecorder(ctx, sink, audit.Config{SpoolDir: t.TempDir(), Durability: audit.Sync, Signer: chain.NewSigner(key)})
	if err != nil {
		t.Fatal(err)
	}
	e := gate.New(append(load(t, grantSupport).Opts, gate.WithAudit(rec, red, "test"))...)
	w := replay.Window{Since: time.Now().Add(-time.Minute)}
	for _, c := range []struct {
		req  gate.Request
		want route.Route
	}{
		{gate.Request{Event: event(t, email), Principals: []string{"bot://support-agent"}, TokenName: "support"}, route.Accept},
		{gate.Request{Event: event(t, email), Principals: []string{"bot://other"}, TokenName: "other", Workspace: "/work/other"}, route.Refuse},
		{gate.Request{Event: event(t, strings.Replace(email, `"send_email"`, `"launch_rocket"`, 1)), Principals: []string{"bot://other"}}, route.Refuse},
		{gate.Request{Event: event(t, `{"tool_name":"send_email","tool_category":"write"}`), Principals: []string{"bot://other"}}, route.Refuse},
	} {
		if d := e.Decide(ctx, c.req); d.Route != c.want || d.Audit == nil {
			t.Fatalf("recorded %s (blockers %v, audit %v), want %s", d.Route, d.HardBlockers, d.Audit, c.want)
		}
	}
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	w.Until = time.Now().Add(time.Minute)
	return w
}

func engine(t *testing.T, policy string, u *audit.Unsealer) replay.Engine {
	src := load(t, policy)
	return replay.Engine{Options: src.Opts, Blind: src.ArgumentsOpts(catalog.ArgumentsOff), Unsealer: u}
}

func transitions(r *replay.Report) map[string]int {
	m := map[string]int{}
	for _, tr := range r.Routes {
		m[tr.Recorded.String()+">"+tr.New.String()] = tr.Count
	}
	return m
}

func group(gs []replay.Group, name string) replay.Group {
	for _, g := range gs {
		if g.Name == name {
			return g
		}
	}
	return replay.Group{Name: name + " (absent)"}
}

// checkCounts holds what both replays find, sealed or not: the support
// agent's e-mail narrowed, bot://other's widened, the uncatalogued tool
// (no grant either way) and the invalid event as recorded.
func checkCounts(t *testing.T, r *replay.Report) {
	t.Helper()
	if r.Replayed != 4 || r.Changed != 2 || r.Widened != 1 || r.Narrowed != 1 {
		t.Fatalf("replayed %d changed %d widened %d narrowed %d, want 4 2 1 1", r.Replayed, r.Changed, r.Widened, r.Narrowed)
	}
	want := map[string]int{"accept>refuse": 1, "refuse>accept": 1, "refuse>refuse": 2}
	if got := transitions(r); !maps(got, want) {
		t.Errorf("routes %v, want %v", got, want)
	}
	if g := group(r.ByTool, "send_email"); g.Replayed != 3 || g.Changed != 2 || g.Widened != 1 || g.Narrowed != 1 {
		t.Errorf("send_email %+v", g)
	}
	if g := group(r.ByPrincipal, "bot://other"); g.Replayed != 3 || g.Changed != 1 || g.Widened != 1 || g.Narrowed != 0 {
		t.Errorf("bot://other %+v", g)
	}
	if g := group(r.ByPrincipal, "bot://support-agent"); g.Replayed != 1 || g.Narrowed != 1 {
		t.Errorf("bot://support-agent %+v", g)
	}
	if len(r.Changes) != 2 || r.Changes[0].Recorded != route.Accept || r.Changes[0].New != route.Refuse ||
		!slices.Contains(r.Changes[0].NewBlockers, route.CodePolicyNoGrant) || r.Changes[0].Widened ||
		r.Changes[1].Recorded != route.Refuse || r.Changes[1].New != route.Accept || !r.Changes[1].Widened ||
		!slices.Equal(r.Changes[1].Principals, []string{"bot://other"}) {
		t.Fatalf("changes %+v", r.Changes)
	}
	if r.PolicyRevision == "" || r.CatalogRevision == "" {
		t.Errorf("revisions %q %q", r.CatalogRevision, r.PolicyRevision)
	}
}

func maps(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Recorded in PostgreSQL without sealing, the calls replay with no
// argument values: the widening is marked as resting on them, so only
// --allow-unseen-widening lets it pass.
func TestReplayPostgresUnsealed(t *testing.T) {
	t.Parallel()
	_, u := pgtest.Fresh(t)
	if err := pgdb.Migrate(context.Background(), u, "up", io.Discard); err != nil {
		t.Fatal(err)
	}
	db := pgtest.DB(t, u)
	w := record(t, auditpg.New(db, auditpg.Config{}), audit.NewRedactor([]byte("k")))
	r, err := replay.Run(context.Background(), replay.Store(auditpg.NewStore(db)), engine(t, grantOther, nil), w)
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, r)
	if r.Sealed != 0 || r.Kept != 1 || r.WidenedUnseen != 1 {
		t.Errorf("sealed %d kept %d widened unseen %d, want 0 1 1", r.Sealed, r.Kept, r.WidenedUnseen)
	}
	for _, c := range r.Changes {
		if !slices.Equal(c.Unseen, []replay.Unseen{replay.UnseenArguments, replay.UnseenEvidenceText}) || c.Sealed {
			t.Errorf("change %s unseen %v sealed %v, want arguments and evidence text unseen", c.DecisionID, c.Unseen, c.Sealed)
		}
	}
	if err := r.Gate(false); !errors.Is(err, replay.ErrWidened) {
		t.Errorf("Gate(false) = %v, want ErrWidened", err)
	}
	if err := r.Gate(true); err != nil {
		t.Errorf("Gate(true) = %v: the one widening rests on unseen arguments", err)
	}
	// The same policy changes nothing.
	same, err := replay.Run(context.Background(), replay.Store(auditpg.NewStore(db)), engine(t, grantSupport, nil), w)
	if err != nil {
		t.Fatal(err)
	}
	if same.Replayed != 4 || same.Changed != 0 || same.Gate(false) != nil {
		t.Errorf("replay under the recording policy: replayed %d changed %d", same.Replayed, same.Changed)
	}

	// A second row of a decision in the window (another decided_at) is
	// refused, as in a file.
	pgtest.ExecOn(t, u, `CREATE TABLE forged AS SELECT * FROM audit_decisions WHERE final_route = 'refuse' LIMIT 1;
		UPDATE forged SET decided_at = decided_at + interval '1 millisecond', final_route = 'accept', chain_id = 'fake', chain_seq = 1;
		INSERT INTO audit_decisions SELECT * FROM forged`)
	_, err = replay.Run(context.Background(), replay.Store(auditpg.NewStore(db)), engine(t, grantSupport, nil), w)
	if err == nil || !strings.Contains(err.Error(), "stored twice") || !strings.Contains(err.Error(), "gated audit verify") {
		t.Errorf("replay of a decision stored twice: %v", err)
	}
}

// Recorded in a file with the arguments sealed, the calls replay exactly:
// nothing is marked, so the widening fails even --allow-unseen-widening.
// Without the identity they replay as unsealed ones.
func TestReplayFileSealed(t *testing.T) {
	t.Parallel()
	path, w, unsealer := sealedTrail(t)

	r, err := replay.Run(context.Background(), replay.File(path), engine(t, grantOther, unsealer), w)
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, r)
	if r.Sealed != 4 || r.Kept != 0 || r.WidenedUnseen != 0 {
		t.Errorf("sealed %d kept %d widened unseen %d, want 4 0 0", r.Sealed, r.Kept, r.WidenedUnseen)
	}
	for _, c := range r.Changes {
		if len(c.Unseen) != 0 || !c.Sealed {
			t.Errorf("change %s unseen %v sealed %v, want everything seen", c.DecisionID, c.Unseen, c.Sealed)
		}
	}
	if err := r.Gate(true); !errors.Is(err, replay.ErrWidened) {
		t.Errorf("Gate(true) = %v, want ErrWidened: the widening was seen in full", err)
	}

	blind, err := replay.Run(context.Background(), replay.File(path), engine(t, grantOther, nil), w)
	if err != nil {
		t.Fatal(err)
	}
	if blind.Sealed != 0 || blind.WidenedUnseen != 1 {
		t.Errorf("without the identity: sealed %d widened unseen %d, want 0 1", blind.Sealed, blind.WidenedUnseen)
	}

	// A window that holds none of them replays nothing.
	empty, err := replay.Run(context.Background(), replay.File(path), engine(t, grantOther, unsealer),
		replay.Window{Since: w.Until, Until: w.Until.Add(time.Hour)})
	if err != nil || empty.Replayed != 0 || empty.Gate(false) != nil {
		t.Errorf("empty window: %+v, %v", empty, err)
	}
}

// Every rendering names the changes and what they rest on; the Markdown
// one escapes a tool name that would break its table.
func TestRenderings(t *testing.T) {
	t.Parallel()
	path, sink := fileSink(t)
	w := record(t, sink, audit.NewRedactor([]byte("k")))
	r, err := replay.Run(context.Background(), replay.File(path), engine(t, grantOther, nil), w)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []replay.Format{replay.Text, replay.Markdown, replay.JSON} {
		var b bytes.Buffer
		if err := r.Render(&b, f); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"refuse → accept", "accept → refuse", "bot://other", r.Changes[1].DecisionID, "arguments, evidence_text"} {
			if f == replay.JSON {
				continue
			}
			if f == replay.Markdown {
				// Escaped as the tool column is: a bare underscore starts
				// emphasis in GitHub's Markdown.
				want = strings.ReplaceAll(want, "_", `\_`)
			}
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s rendering lacks %q:\n%s", f, want, b.String())
			}
		}
		if f == replay.JSON {
			var back replay.Report
			if err := json.Unmarshal(b.Bytes(), &back); err != nil || back.Widened != 1 || len(back.Changes) != 2 ||
				back.Changes[1].Unseen[0] != replay.UnseenArguments {
				t.Errorf("JSON rendering read back: %+v, %v", back, err)
			}
		}
	}
	r.Changes[0].ToolName = "a|b\n<script>"
	var b bytes.Buffer
	if err := r.Render(&b, replay.Markdown); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"a\|b\\n\<script\>"`) {
		t.Errorf("markdown does not escape the tool name:\n%s", b.String())
	}
	if !strings.Contains(b.String(), `| send\_email |`) || strings.Contains(b.String(), " evidence_text") {
		t.Errorf("markdown escapes the tool column and the unseen column differently:\n%s", b.String())
	}
}

func TestBadWindowAndFormat(t *testing.T) {
	t.Parallel()
	now := time.Now()
	for _, w := range []replay.Window{{}, {Since: now}, {Since: now, Until: now}, {Since: now, Until: now.Add(-time.Hour)}} {
		if _, err := replay.Run(context.Background(), replay.File("/nonexistent"), replay.Engine{}, w); err == nil {
			t.Errorf("window %+v accepted", w)
		}
	}
	if _, err := replay.ParseFormat("yaml"); err == nil {
		t.Error("format yaml accepted")
	}
}

// writeRecords writes hand-made records as the file sink's lines.
func writeRecords(t *testing.T, recs ...*audit.Record) string {
	t.Helper()
	path, sink := fileSink(t)
	if err := sink.Write(context.Background(), audit.Batch{Records: recs}); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// A change resting on what replay does not evaluate again (a kill switch,
// an approval, a rate limit, gated's own failure, a surface's rules, a
// fingerprinted principal, an unknown recorded route) is marked with it,
// a later correction line is the record replayed, and a call without
// arguments is judged on its (empty) arguments.
func TestMarks(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	n := 0
	rec := func(route string, codes []string, principals ...string) *audit.Record {
		n++
		return &audit.Record{
			DecisionID: "d" + string(rune('a'+n)), DecidedAt: at.Add(time.Duration(n) * time.Minute), ToolName: "send_email",
			DeclaredCategory: "write", DeclaredAuth: "confirmed", RiskDomain: "customer_support", RuntimeRoute: "accept",
			FinalRoute: route, HardBlockers: codes, FindingCodes: codes, Principals: principals,
			ArgumentKeys: []string{"body", "subject", "ticket_id", "to"},
			Evidence:     []audit.EvidenceMeta{{SourceID: "approval.1", Kind: "approval", TrustTier: "verified", RedactionStatus: "redacted", Freshness: "fresh"}},
		}
	}
	killed := rec("refuse", []string{route.CodeKillSwitch}, "bot://other")
	approved := rec("ask", []string{route.CodeApprovalPending}, "bot://other")
	approved.ApprovalID = "0190a5b4-7c3e-7a1b-8f00-000000000001"
	limited := rec("defer", []string{route.CodePolicyLimitExceeded}, "bot://other")
	failed := rec("refuse", []string{route.CodeAuditUnavailable}, "bot://other")
	planned := rec("refuse", []string{route.CodePlanRollbackRequired}, "bot://other")
	hidden := rec("accept", nil, "hmac-sha256:00ff")
	odd := rec("maybe", nil, "bot://other")
	corrected := rec("accept", nil, "bot://other")
	corrected.ChainID, corrected.ChainSeq = "writer", 1
	fix := *corrected
	fix.FinalRoute, fix.HardBlockers, fix.FindingCodes = "refuse", []string{route.CodeAuditUnavailable}, []string{route.CodeAuditUnavailable}
	fix.ChainSeq, fix.Supersedes = 2, 1

	// Arguments without keys were the empty object: seen, and validated as
	// they were, so the schema refuses them again.
	empty := rec("refuse", []string{route.CodeArgumentsInvalid}, "bot://other")
	empty.ArgumentKeys = []string{}
	path := writeRecords(t, killed, approved, limited, failed, planned, hidden, odd, corrected, empty)
	sink, err := file.Open(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := sink.Write(context.Background(), audit.Batch{Fixes: []audit.Fix{{Record: &fix}}}); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}

	r, err := replay.Run(context.Background(), replay.File(path), engine(t, grantOther, nil),
		replay.Window{Since: at, Until: at.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]replay.Unseen{
		killed.DecisionID:    {replay.UnseenArguments, replay.UnseenEvidenceText, replay.UnseenKillSwitch},
		approved.DecisionID:  {replay.UnseenApproval, replay.UnseenArguments, replay.UnseenEvidenceText},
		limited.DecisionID:   {replay.UnseenArguments, replay.UnseenEvidenceText, replay.UnseenRateLimit},
		failed.DecisionID:    {replay.UnseenArguments, replay.UnseenEvidenceText, replay.UnseenGatedFailure},
		planned.DecisionID:   {replay.UnseenArguments, replay.UnseenEvidenceText, replay.UnseenSurfaceChecks},
		hidden.DecisionID:    {replay.UnseenArguments, replay.UnseenEvidenceText, replay.UnseenPrincipal},
		odd.DecisionID:       {replay.UnseenArguments, replay.UnseenEvidenceText, replay.UnseenRecordedRoute},
		corrected.DecisionID: {replay.UnseenArguments, replay.UnseenEvidenceText, replay.UnseenGatedFailure},
	}
	if r.Replayed != len(want)+1 || r.Changed != len(want) {
		t.Fatalf("replayed %d changed %d, want %d and %d: %+v", r.Replayed, r.Changed, len(want)+1, len(want), r.Changes)
	}
	for _, c := range r.Changes {
		if !slices.Equal(c.Unseen, want[c.DecisionID]) {
			t.Errorf("%s (%s → %s): unseen %v, want %v", c.DecisionID, c.Recorded, c.New, c.Unseen, want[c.DecisionID])
		}
	}
	if r.Widened != len(want)-1 || r.WidenedUnseen != r.Widened || r.Narrowed != 1 || r.Gate(true) != nil || r.Gate(false) == nil {
		t.Errorf("widened %d (unseen %d) narrowed %d", r.Widened, r.WidenedUnseen, r.Narrowed)
	}
}

// A policy under test that writes a sealed argument into its finding code
// cannot get it into the report: every rendering shows the code masked, as
// a record would hold it (the e-mail address is personal data).
func TestPolicyTextScreened(t *testing.T) {
	t.Parallel()
	path, w, unsealer := sealedTrail(t)

	const leak = `package gated.custom.leak

findings contains {
	"code": concat("_", ["to", input.event.proposed_arguments.to]),
	"route": "refuse",
	"blocking": true,
	"message": concat(" ", ["mail to", input.event.proposed_arguments.to]),
} if input.event.proposed_arguments.to
`
	dir := testtree.Write(t, t.TempDir(), map[string]string{"POLICY.md": grantSupport, "rules/leak.rego": leak})
	src, err := sources.Load(sources.Config{CatalogDirs: []string{"../../examples/catalog"}, PolicyDirs: []string{dir}, Limits: replay.Unlimited}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := replay.Run(context.Background(), replay.File(path),
		replay.Engine{Options: src.Opts, Blind: src.ArgumentsOpts(catalog.ArgumentsOff), Unsealer: unsealer}, w)
	if err != nil {
		t.Fatal(err)
	}
	masked := false
	for _, c := range r.Changes {
		masked = masked || slices.Contains(c.NewBlockers, audit.MaskedText)
	}
	if !masked {
		t.Errorf("no change has the masked code %q: %+v", audit.MaskedText, r.Changes)
	}
	for _, f := range []replay.Format{replay.Text, replay.Markdown, replay.JSON} {
		var b bytes.Buffer
		if err := r.Render(&b, f); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), "example.com") {
			t.Errorf("%s rendering shows the sealed argument:\n%s", f, b.String())
		}
	}
}

// A decision id stored again other than by a correction of its record —
// signed records copied into a chain of their own with the route changed —
// is refused: the line kept would be the forgery's.
func TestDuplicateRefused(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	signed := &audit.Record{DecisionID: "d1", DecidedAt: at, ToolName: "send_email", FinalRoute: "refuse", ChainID: "real", ChainSeq: 1}
	forged := *signed
	forged.FinalRoute, forged.ChainID = "accept", "fake"
	// A correction in another chain than its record's is no correction.
	elsewhere := forged
	elsewhere.ChainSeq, elsewhere.Supersedes = 2, 1
	for name, second := range map[string]*audit.Record{"copied": &forged, "correction of another chain": &elsewhere} {
		path := writeRecords(t, signed, second)
		_, err := replay.Run(context.Background(), replay.File(path), engine(t, grantOther, nil), replay.Window{Since: at, Until: at.Add(time.Hour)})
		if err == nil || !strings.Contains(err.Error(), "decision d1") || !strings.Contains(err.Error(), "gated audit verify") {
			t.Errorf("%s: err %v, want a refusal naming d1 and gated audit verify", name, err)
		}
	}
}

// sealedTrail records the calls of record into an audit file with their
// arguments sealed to a fresh age identity, and returns the file, the
// window holding them and what opens them.
func sealedTrail(t *testing.T) (string, replay.Window, *audit.Unsealer) {
	t.Helper()
	sealer, unsealer := sealing(t)
	path, sink := fileSink(t)
	w := record(t, sink, audit.NewRedactor([]byte("k")).SealingTo(sealer))
	return path, w, unsealer
}

// sealing is a fresh age identity: what seals records to it and what
// opens them.
func sealing(t *testing.T) (*audit.Sealer, *audit.Unsealer) {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := audit.ParseSealer(id.Recipient().String())
	if err != nil {
		t.Fatal(err)
	}
	unsealer, err := audit.ParseUnsealer(id.String())
	if err != nil {
		t.Fatal(err)
	}
	return sealer, unsealer
}

// fileSink is an audit file sink in a temporary folder, and its path.
func fileSink(t *testing.T) (string, audit.Sink) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	sink, err := file.Open(path, true)
	if err != nil {
		t.Fatal(err)
	}
	return path, sink
}

// A call that came as an AuthZEN request replays with the request sealed
// beside its event, so policy reads input.authzen as it did: a rule on the
// request's subject, added after the call was recorded, narrows it, and
// nothing is marked unseen.
func TestReplaySealedAuthZEN(t *testing.T) {
	t.Parallel()
	sealer, unsealer := sealing(t)
	path, sink := fileSink(t)
	ctx := context.Background()
	rec, err := audit.NewRecorder(ctx, sink, audit.Config{SpoolDir: t.TempDir(), Durability: audit.Sync})
	if err != nil {
		t.Fatal(err)
	}
	e := gate.New(append(load(t, grantSupport).Opts, gate.WithAudit(rec, audit.NewRedactor([]byte("k")).SealingTo(sealer), "test"))...)
	w := replay.Window{Since: time.Now().Add(-time.Minute)}
	req := gate.Request{Event: event(t, email), Principals: []string{"bot://support-agent"}, TokenName: "support",
		AuthZEN: map[string]any{"profile": "authzen-1.0", "subject": map[string]any{"type": "agent", "id": "mallory"}}}
	if d := e.Decide(ctx, req); d.Route != route.Accept {
		t.Fatalf("recorded %s %v, want accept", d.Route, d.HardBlockers)
	}
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	w.Until = time.Now().Add(time.Minute)

	dir := testtree.Write(t, t.TempDir(), map[string]string{"POLICY.md": grantSupport, "rules/subject.rego": `package gated.custom.subject

findings contains {"code": "subject_barred", "route": "refuse", "blocking": true, "message": "this subject is barred"} if {
	input.authzen.subject.id == "mallory"
}
`})
	src, err := sources.Load(sources.Config{CatalogDirs: []string{"../../examples/catalog"}, PolicyDirs: []string{dir}, Limits: replay.Unlimited}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := replay.Run(ctx, replay.File(path), replay.Engine{Options: src.Opts, Blind: src.ArgumentsOpts(catalog.ArgumentsOff), Unsealer: unsealer}, w)
	if err != nil {
		t.Fatal(err)
	}
	if r.Sealed != 1 || r.Narrowed != 1 || len(r.Changes) != 1 || len(r.Changes[0].Unseen) != 0 ||
		!slices.Contains(r.Changes[0].NewBlockers, "subject_barred") {
		t.Fatalf("sealed %d narrowed %d changes %+v; want the AuthZEN call narrowed by the rule on its subject, nothing unseen", r.Sealed, r.Narrowed, r.Changes)
	}
}

// A file read twice must be the same file both times: one rewritten while
// replay decides its records fails the replay, naming what happened,
// rather than leaving decisions out in silence.
func TestReplayFileChangedUnderfoot(t *testing.T) {
	t.Parallel()
	path, w, _ := sealedTrail(t)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Many more decisions than one read of the file takes in, so the
	// second pass is still reading when the file is rewritten.
	var line map[string]any
	first := raw[:bytes.IndexByte(raw, '\n')+1]
	if err := json.Unmarshal(first, &line); err != nil {
		t.Fatal(err)
	}
	// Each line is padded to 4 KiB, so a truncation at 64 KiB (the
	// reader's buffer) ends the file cleanly between two lines: what is
	// left reads as a shorter trail, not as a broken line.
	const lineSize = 4 << 10
	var big bytes.Buffer
	for i := range 500 {
		line["decision_id"] = fmt.Sprintf("0193a5b4-7c3e-7a1b-8f00-%012d", i)
		line["reasons"] = []string{""}
		b, err := json.Marshal(line)
		if err != nil {
			t.Fatal(err)
		}
		line["reasons"] = []string{strings.Repeat("x", lineSize-len(b)-1)}
		if b, err = json.Marshal(line); err != nil || len(b) != lineSize-1 {
			t.Fatalf("padded line of %d bytes: %v", len(b), err)
		}
		big.Write(append(b, '\n'))
	}
	if err := os.WriteFile(path, big.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	calls := 0
	err = replay.File(path).Each(context.Background(), w, func(*audit.Record) error {
		if calls++; calls == 1 {
			if err := os.Truncate(path, 64<<10); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "changed while replay read it") {
		t.Fatalf("replay of a file rewritten underfoot: %v after %d decisions", err, calls)
	}
	// Left alone, every decision of the window is read once.
	if err := os.WriteFile(path, big.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	calls = 0
	if err := replay.File(path).Each(context.Background(), w, func(*audit.Record) error { calls++; return nil }); err != nil || calls != 500 {
		t.Fatalf("replay of the file: %v after %d decisions, want 500", err, calls)
	}
}

// A record decided with the very catalog and policy replay decides with
// keeps its route, even one a rule replay cannot run again decided (an
// Action API plan's): the rules are the same, so nothing they decide can
// differ. Under another policy the same record is replayed, and the
// change it shows is marked as resting on the surface's rules.
func TestSameRevisionsKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path, sink := fileSink(t)
	rec, err := audit.NewRecorder(ctx, sink, audit.Config{SpoolDir: t.TempDir(), Durability: audit.Sync})
	if err != nil {
		t.Fatal(err)
	}
	policyDir := testtree.Write(t, t.TempDir(), map[string]string{"POLICY.md": grantSupport})
	loadFrom := func(dir string) *sources.Sources {
		src, err := sources.Load(sources.Config{CatalogDirs: []string{"../../examples/catalog"}, PolicyDirs: []string{dir}, Limits: replay.Unlimited}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return src
	}
	e := gate.New(append(loadFrom(policyDir).Opts, gate.WithAudit(rec, audit.NewRedactor([]byte("k")), "test"))...)
	w := replay.Window{Since: time.Now().Add(-time.Minute)}
	// The Action API's plan rule refuses a call the policy grants.
	plan := func(*catalog.View, *route.Event) []route.Finding {
		return []route.Finding{{Source: route.SourceActionAPI, Code: route.CodePlanRollbackRequired, Route: route.Refuse, Blocking: true, Message: "no rollbackPlan"}}
	}
	d := e.Decide(ctx, gate.Request{Event: event(t, email), Principals: []string{"bot://support-agent"}, TokenName: "support", Checks: plan})
	if d.Route != route.Refuse || !slices.Contains(d.HardBlockers, route.CodePlanRollbackRequired) {
		t.Fatalf("recorded %s %v, want refuse by the plan rule", d.Route, d.HardBlockers)
	}
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	w.Until = time.Now().Add(time.Minute)
	run := func(src *sources.Sources) *replay.Report {
		t.Helper()
		r, err := replay.Run(ctx, replay.File(path), replay.Engine{Options: src.Opts, Blind: src.ArgumentsOpts(catalog.ArgumentsOff)}, w)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	same := run(loadFrom(policyDir))
	if same.Replayed != 1 || same.Changed != 0 || same.Kept != 1 || same.SameRevisions != 1 || same.Gate(false) != nil {
		t.Fatalf("under the recording sources: replayed %d changed %d kept %d same revisions %d, want 1 0 1 1: %+v",
			same.Replayed, same.Changed, same.Kept, same.SameRevisions, same.Changes)
	}
	if same.PolicyRevision != d.Revisions.Policy || same.CatalogRevision != d.Revisions.Catalog {
		t.Errorf("report names catalog %s policy %s, want the recorded %s %s", same.CatalogRevision, same.PolicyRevision, d.Revisions.Catalog, d.Revisions.Policy)
	}
	if want := transitions(same); want["refuse>refuse"] != 1 {
		t.Errorf("routes %v, want the recorded refuse kept", want)
	}
	var text bytes.Buffer
	if err := same.WriteText(&text); err != nil || !strings.Contains(text.String(), "same revisions, decided with this very catalog and policy: 1") {
		t.Errorf("the summary does not say why the route was kept (%v):\n%s", err, text.String())
	}

	// Told to judge what the revisions do not cover (gated replay with
	// --unknown-tools or --argument-validation), the same sources decide
	// the record again: nothing is kept for its revisions.
	src := loadFrom(policyDir)
	redecided, err := replay.Run(ctx, replay.File(path), replay.Engine{Options: src.Opts, Blind: src.ArgumentsOpts(catalog.ArgumentsOff), Redecide: true}, w)
	if err != nil || redecided.SameRevisions != 0 || redecided.Widened != 1 {
		t.Fatalf("redecided: %v, same revisions %d widened %d; want the record decided again", err, redecided.SameRevisions, redecided.Widened)
	}

	// Another policy granting the same: replayed, so the plan rule's
	// refusal is not seen again and the call widens, marked.
	other := run(loadFrom(testtree.Write(t, t.TempDir(), map[string]string{"POLICY.md": grantSupport, "extra.POLICY.md": strings.Replace(grantOther, "@replay-tests/after", "@replay-tests/extra", 1)})))
	if other.Kept != 0 || other.SameRevisions != 0 || other.Widened != 1 || len(other.Changes) != 1 ||
		!slices.Contains(other.Changes[0].Unseen, replay.UnseenSurfaceChecks) {
		t.Fatalf("under another policy: kept %d same revisions %d widened %d changes %+v; want the call replayed and marked surface_checks",
			other.Kept, other.SameRevisions, other.Widened, other.Changes)
	}
}
