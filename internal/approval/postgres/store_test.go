package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/gatedhq/gated/internal/approval"
	"github.com/gatedhq/gated/internal/approval/approvaltest"
	"github.com/gatedhq/gated/internal/audit"
	auditpg "github.com/gatedhq/gated/internal/audit/postgres"
	"github.com/gatedhq/gated/internal/pgtest"
	pgdb "github.com/gatedhq/gated/internal/postgres"
	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/testwait"
)

// Every field of an approval is stored and read back as written (after
// Create's normalization, which it applies to the caller's copy too).
func TestCreateGetRoundTrip(t *testing.T) {
	t.Parallel()
	now := time.Now()
	_, u := approvaltest.Database(t, now)
	s := openStore(t, u)
	ctx := context.Background()

	// Nanoseconds and a zone other than UTC: stored to the microsecond, read in UTC.
	at := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.FixedZone("X", 3600))
	full := pendingApproval(t, at)
	full.Status = approval.StatusUsed
	full.DecidedAt = at.Add(time.Minute)
	full.UsedAt = at.Add(2 * time.Minute)
	full.Approver = alice
	full.Reason = "refund agreed with the customer"
	full.ConsumedBy = newID(t)
	full.Route = "defer"
	full.MaskedArguments = json.RawMessage(`{"z": "[secret:github-pat len=40 fp=ab12cd] && ls",  "a": [1, 2]}`)
	for i, f := range reflect.VisibleFields(reflect.TypeFor[approval.Approval]()) {
		if reflect.ValueOf(*full).Field(i).IsZero() {
			t.Fatalf("the fixture leaves Approval.%s empty: give it a value, and a column", f.Name)
		}
	}
	preview := slices.Clone(full.Preview)
	create(t, s, full)
	if full.CreatedAt.Location() != time.UTC || full.CreatedAt.Nanosecond() != 123456000 {
		t.Fatalf("Create did not normalize the caller's copy: %v", full.CreatedAt)
	}
	got := get(t, s, full.ID)
	if !reflect.DeepEqual(got, full) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(full, "", " ")
		t.Fatalf("round trip:\n got %s\nwant %s", g, w)
	}
	if string(got.Preview) != string(preview) {
		t.Fatalf("the preview reads back as %s, not as written %s", got.Preview, preview)
	}
	if string(got.MaskedArguments) != `{"z": "[secret:github-pat len=40 fp=ab12cd] && ls",  "a": [1, 2]}` {
		t.Fatalf("the masked arguments read back as %s, not as written", got.MaskedArguments)
	}
	// A list leaves them out (up to 256 KiB each); the rest reads the same.
	listed, _, err := s.List(ctx, approval.StatusUsed, 0, "")
	if err != nil || len(listed) != 1 {
		t.Fatalf("List: %d approvals, %v", len(listed), err)
	}
	if listed[0].MaskedArguments != nil {
		t.Fatalf("List reads the masked arguments: %s", listed[0].MaskedArguments)
	}
	listed[0].MaskedArguments = full.MaskedArguments
	if !reflect.DeepEqual(&listed[0], full) {
		t.Fatalf("List reads the approval otherwise than Get:\n %+v", listed[0])
	}

	// The least an approval holds: nothing decided or used, no lists, no preview.
	bare := &approval.Approval{ID: newID(t), Status: approval.StatusPending, Digest: digestOne,
		CreatedAt: now, ExpiresAt: now.Add(time.Minute), Requester: approval.Identity{TokenName: "t"},
		ToolName: "x", Route: "ask", DecisionID: newID(t)}
	create(t, s, bare)
	got = get(t, s, bare.ID)
	if !reflect.DeepEqual(got, bare) {
		t.Fatalf("bare round trip:\n got %+v\nwant %+v", got, bare)
	}
	b, _ := json.Marshal(got)
	for _, absent := range []string{`"approver"`, `"decided_at"`, `"used_at"`, `"preview"`, `"consumed_by"`} {
		if strings.Contains(string(b), absent) {
			t.Errorf("a bare approval reads back with %s: %s", absent, b)
		}
	}
	// A preview of absent arguments is JSON null, which is not no preview.
	null := pendingApproval(t, now)
	null.Preview = json.RawMessage("null")
	create(t, s, null)
	if got := get(t, s, null.ID); string(got.Preview) != "null" {
		t.Errorf("a null preview reads back as %q", got.Preview)
	}

	for name, a := range map[string]*approval.Approval{
		"the same id":      func() *approval.Approval { a := pendingApproval(t, now); a.ID = full.ID; return a }(),
		"a non-UUID id":    func() *approval.Approval { a := pendingApproval(t, now); a.ID = "ap-1"; return a }(),
		"an upper-case id": func() *approval.Approval { a := pendingApproval(t, now); a.ID = strings.ToUpper(a.ID); return a }(),
		"a bad status":     func() *approval.Approval { a := pendingApproval(t, now); a.Status = "revoked"; return a }(),
		"a refuse route":   func() *approval.Approval { a := pendingApproval(t, now); a.Route = "refuse"; return a }(),
		"no expiry":        func() *approval.Approval { a := pendingApproval(t, now); a.ExpiresAt = time.Time{}; return a }(),
		"a preview that is not JSON": func() *approval.Approval {
			a := pendingApproval(t, now)
			a.Preview = json.RawMessage(`{"cut`)
			return a
		}(),
	} {
		err := s.Create(ctx, a)
		if err == nil || !strings.HasPrefix(err.Error(), "the approval ") || !strings.Contains(err.Error(), " cannot be stored: ") {
			t.Errorf("Create with %s: %v, want a sentence saying it cannot be stored", name, err)
		}
	}
	if n := pgtest.QueryInt(t, u, "SELECT count(*) FROM approvals"); n != 3 {
		t.Errorf("%d approvals stored, want the 3 created", n)
	}

	// Unknown: a UUID no approval has, and ids that are no UUID at all
	// (bytes PostgreSQL would refuse as text among them): not found, never
	// an SQL error.
	for _, id := range []string{newID(t), "", "ap-1", "'; DROP TABLE approvals; --", "\xff\xfe", "\x00", strings.ToUpper(full.ID)} {
		a, err := s.Get(ctx, id)
		if a != nil || !errors.Is(err, approval.ErrNotFound) || code(t, err) != route.CodeApprovalUnknown {
			t.Errorf("Get(%q) = %v, %v; want approval.ErrNotFound (approval_unknown)", id, a, err)
		}
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	_, u := approvaltest.Database(t, now)
	s := openStore(t, u)
	ctx := context.Background()

	var made []*approval.Approval // oldest first
	statuses := []approval.Status{approval.StatusPending, approval.StatusApproved, approval.StatusDenied, approval.StatusPending, approval.StatusUsed, approval.StatusExpired, approval.StatusPending}
	for i := range 14 {
		// pairs share a creation time, so the id must break ties in the keyset
		a := pendingApproval(t, now.Add(time.Duration(i/2)*time.Second))
		a.Status = statuses[i%len(statuses)]
		made = append(made, create(t, s, a))
	}
	newestFirst := slices.Clone(made)
	slices.SortFunc(newestFirst, func(a, b *approval.Approval) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})

	walk := func(status approval.Status) []approval.Approval {
		var all []approval.Approval
		cur := ""
		for pages := 0; ; pages++ {
			page, next, err := s.List(ctx, status, 3, cur)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > 3 {
				t.Fatalf("a page of %d, limit 3", len(page))
			}
			all = append(all, page...)
			if next == "" {
				return all
			}
			if pages > 20 {
				t.Fatal("pagination does not end")
			}
			cur = next
		}
	}
	got := walk("")
	if len(got) != len(made) {
		t.Fatalf("listed %d approvals, made %d", len(got), len(made))
	}
	for i := range got {
		if !reflect.DeepEqual(&got[i], newestFirst[i]) {
			t.Fatalf("listing %d:\n got %+v\nwant %+v", i, got[i], *newestFirst[i])
		}
	}
	pending := walk(approval.StatusPending)
	var want []string
	for _, a := range newestFirst {
		if a.Status == approval.StatusPending {
			want = append(want, a.ID)
		}
	}
	var ids []string
	for _, a := range pending {
		ids = append(ids, a.ID)
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("pending listing %v, want %v", ids, want)
	}

	for name, call := range map[string]func() error{
		"an unknown status": func() error { _, _, err := s.List(ctx, "revoked", 0, ""); return err },
		"a negative limit":  func() error { _, _, err := s.List(ctx, "", -1, ""); return err },
		"a forged cursor":   func() error { _, _, err := s.List(ctx, "", 0, "bm90IGEgY3Vyc29y"); return err },
		"garbage cursor":    func() error { _, _, err := s.List(ctx, "", 0, "\xff"); return err },
	} {
		if err := call(); !errors.Is(err, approval.ErrBadFilter) {
			t.Errorf("List with %s: %v, want approval.ErrBadFilter", name, err)
		}
	}
}

// A page is DefaultLimit long unless asked otherwise, and never longer
// than MaxLimit.
func TestListLimits(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	_, u := approvaltest.Database(t, now)
	s := openStore(t, u)
	ctx := context.Background()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	rows := make([][]any, MaxLimit+5)
	for i := range rows {
		a := pendingApproval(t, now.Add(time.Duration(i)*time.Millisecond))
		normalize(a)
		rows[i] = values(a)
	}
	if _, err := c.CopyFrom(ctx, pgx.Identifier{"approvals"}, strings.Fields(strings.ReplaceAll(columns, ",", " ")), pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ limit, want int }{{0, DefaultLimit}, {1, 1}, {MaxLimit, MaxLimit}, {MaxLimit + 1, MaxLimit}, {1 << 30, MaxLimit}} {
		page, next, err := s.List(ctx, "", tc.limit, "")
		if err != nil || len(page) != tc.want || next == "" {
			t.Errorf("List(limit %d) = %d approvals, next %q, %v; want %d and a next page", tc.limit, len(page), next, err, tc.want)
		}
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	_, u := approvaltest.Database(t, now)
	s := openStore(t, u)
	ctx := context.Background()
	later := now.Add(time.Minute)

	t.Run("approve", func(t *testing.T) {
		a := create(t, s, pendingApproval(t, now))
		got, err := s.Decide(ctx, a.ID, alice, true, "  agreed with the customer\n", later)
		if err != nil {
			t.Fatal(err)
		}
		want := *a
		want.Status, want.DecidedAt, want.Approver, want.Reason = approval.StatusApproved, later.Truncate(time.Microsecond), alice, "agreed with the customer"
		if !reflect.DeepEqual(got, &want) {
			t.Fatalf("Decide returned\n %+v\nwant\n %+v", got, want)
		}
		if stored := get(t, s, a.ID); !reflect.DeepEqual(stored, &want) {
			t.Fatalf("stored\n %+v\nwant\n %+v", stored, want)
		}
		// Deciding twice, the same way or the other.
		for _, approve := range []bool{true, false} {
			if _, err := s.Decide(ctx, a.ID, carolLead(), approve, "", later); code(t, err) != route.CodeApprovalDecided {
				t.Errorf("deciding an approved approval (approve %v): %v", approve, err)
			}
		}
	})
	t.Run("deny", func(t *testing.T) {
		a := create(t, s, pendingApproval(t, now))
		got, err := s.Decide(ctx, a.ID, alice, false, "", later)
		if err != nil || got.Status != approval.StatusDenied || got.Reason != "" || !reflect.DeepEqual(get(t, s, a.ID), got) {
			t.Fatalf("deny: %+v, %v", got, err)
		}
		if _, err := s.Decide(ctx, a.ID, alice, true, "changed my mind", later); code(t, err) != route.CodeApprovalDecided {
			t.Errorf("approving a denied approval: %v", err)
		}
	})
	for _, c := range []struct {
		name     string
		approver approval.Identity
		at       time.Time
		expire   bool
		want     string
	}{
		{name: "self approval by the requester's token", approver: approval.Identity{TokenName: "runtime-a", Principals: alice.Principals}, at: later, want: route.CodeApprovalSelfApproval},
		{name: "self approval by the agent's principal", approver: approval.Identity{TokenName: "console-x", Principals: []string{"bot://agent-7", "group://payments-leads"}}, at: later, want: route.CodeApprovalSelfApproval},
		{name: "an approver without a required principal", approver: carol, at: later, want: route.CodeApprovalApproverNotAllowed},
		{name: "an anonymous approver", approver: approval.Identity{Principals: alice.Principals}, at: later, want: route.CodeApprovalApproverAnonymous},
		{name: "at expiry", approver: alice, at: now.Add(approval.DefaultTTL), want: route.CodeApprovalExpired},
		{name: "marked expired", approver: alice, at: now.Add(approval.DefaultTTL), expire: true, want: route.CodeApprovalExpired},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := create(t, s, pendingApproval(t, now))
			if c.expire {
				if _, err := s.ExpireDue(ctx, c.at); err != nil {
					t.Fatal(err)
				}
				a = get(t, s, a.ID)
			}
			got, err := s.Decide(ctx, a.ID, c.approver, true, "yes", c.at)
			if got != nil || code(t, err) != c.want {
				t.Fatalf("Decide = %+v, %v; want %s", got, err, c.want)
			}
			if stored := get(t, s, a.ID); !reflect.DeepEqual(stored, a) {
				t.Fatalf("a refused decision changed the approval:\n %+v\nwas\n %+v", stored, a)
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		for _, id := range []string{newID(t), "nope"} {
			if _, err := s.Decide(ctx, id, alice, true, "", later); !errors.Is(err, approval.ErrNotFound) {
				t.Errorf("Decide(%q): %v, want approval.ErrNotFound", id, err)
			}
		}
	})
	t.Run("reason bounded", func(t *testing.T) {
		a := create(t, s, pendingApproval(t, now))
		long := " " + strings.Repeat("é", MaxReason-1) + " x" + strings.Repeat("y", 500) + "\x00\xff"
		got, err := s.Decide(ctx, a.ID, alice, true, long, later)
		if err != nil {
			t.Fatal(err)
		}
		if n := utf8.RuneCountInString(got.Reason); n != MaxReason-1 || !utf8.ValidString(got.Reason) || get(t, s, a.ID).Reason != got.Reason {
			t.Fatalf("a long reason is stored as %d runes (valid %v), want %d: trimmed after the cut", n, utf8.ValidString(got.Reason), MaxReason-1)
		}
	})
	t.Run("reason masked", func(t *testing.T) {
		a := create(t, s, pendingApproval(t, now))
		got, err := s.Decide(ctx, a.ID, alice, true, "ok, it rotates ghp_R7cK2mQ9xZ4vB8nL1pW6sT3yH5jD0fG2aE9u tonight", later)
		if err != nil {
			t.Fatal(err)
		}
		if stored := get(t, s, a.ID).Reason; !strings.HasPrefix(stored, "ok, it rotates [secret:github-pat len=40 fp=") || !strings.HasSuffix(stored, "] tonight") || got.Reason != stored {
			t.Fatalf("a reason holding a token is stored as %q", stored)
		}
	})
}

// carolLead is an approver other than alice who may decide the fixture.
func carolLead() approval.Identity {
	return approval.Identity{TokenName: "console-carol", Principals: []string{"operator://carol", "group://payments-leads"}}
}

// approved is a stored approval, approved by alice.
func approved(t *testing.T, s *Store, now time.Time) *approval.Approval {
	t.Helper()
	a := create(t, s, pendingApproval(t, now))
	d, err := s.Decide(context.Background(), a.ID, alice, true, "", now)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Of 100 concurrent retries with one approval exactly one is accepted,
// and only its decision is stored; the others are refused approval_used
// and store nothing.
//
// The retries are made to overlap for certain: a transaction of the test's
// holds the approval's row lock until every connection of the Store's pool
// is waiting for a lock, so they all have started before any can proceed.
func TestConsumeExactlyOnce(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	name, u := approvaltest.Database(t, now)
	const conns = 16
	s := openStore(t, withPoolSize(t, u, conns))
	ctx := deadline(t)
	a := approved(t, s, now)
	admin, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	hold, err := admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback(ctx)
	if _, err := hold.Exec(ctx, "SELECT 1 FROM approvals WHERE id = $1 FOR UPDATE", a.ID); err != nil {
		t.Fatal(err)
	}

	const retries = 100
	recs := make([]*audit.Record, retries)
	for i := range recs {
		recs[i] = consumingRecord(t, i, a.ID, now)
	}
	results := make([]*approval.Approval, retries)
	errs := make([]error, retries)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range retries {
		wg.Go(func() {
			<-start
			results[i], errs[i] = s.Consume(ctx, a.ID, a.Digest, runtimeA, now.Add(time.Second), recs[i])
		})
	}
	close(start)
	watch, err := pgx.Connect(ctx, u) // not admin: inside its transaction pg_stat_activity is a snapshot
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)
	testwait.Until(t, "every connection of the pool waiting for the row lock", func() bool {
		var waiting int
		if err := watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = $1 AND wait_event_type = 'Lock'`, name).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		return waiting == conns
	})
	if err := hold.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	winner := -1
	for i, err := range errs {
		switch c := code(t, err); {
		case c == "":
			if winner >= 0 {
				t.Fatalf("retries %d and %d both used the approval", winner, i)
			}
			winner = i
		case c != route.CodeApprovalUsed:
			t.Errorf("retry %d: %v, want approval_used", i, err)
		case results[i] != nil:
			t.Errorf("retry %d was refused but returned %+v", i, results[i])
		}
	}
	if winner < 0 {
		t.Fatal("no retry used the approval")
	}
	w := recs[winner]
	got := results[winner]
	if got.Status != approval.StatusUsed || got.ConsumedBy != w.DecisionID || !got.UsedAt.Equal(now.Add(time.Second).Truncate(time.Microsecond)) {
		t.Fatalf("the winner's approval: %+v", got)
	}
	if stored := get(t, s, a.ID); !reflect.DeepEqual(stored, got) {
		t.Fatalf("stored %+v, Consume returned %+v", stored, got)
	}
	if n := pgtest.QueryInt(t, u, "SELECT count(*) FROM audit_decisions"); n != 1 {
		t.Fatalf("%d audit records stored, want the winner's alone", n)
	}
	if n := pgtest.QueryInt(t, u, "SELECT count(*) FROM audit_decisions WHERE decision_id = $1 AND approval_id = $2", w.DecisionID, a.ID); n != 1 {
		t.Fatal("the stored audit record is not the winner's, linked to the approval")
	}
}

// A refused use writes nothing: neither the approval nor a record.
func TestConsumeRefusals(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	_, u := approvaltest.Database(t, now)
	s := openStore(t, u)
	ctx := context.Background()
	at := now.Add(time.Minute)

	for _, c := range []struct {
		name      string
		setup     func(t *testing.T) *approval.Approval
		digest    string
		requester approval.Identity
		at        time.Time
		want      string
	}{
		{name: "digest mismatch", setup: func(t *testing.T) *approval.Approval { return approved(t, s, now) },
			digest: "sha256:" + strings.Repeat("f", 64), requester: runtimeA, at: at, want: route.CodeApprovalDigestMismatch},
		{name: "requester mismatch", setup: func(t *testing.T) *approval.Approval { return approved(t, s, now) },
			digest: digestOne, requester: approval.Identity{TokenName: "runtime-b", Principals: runtimeA.Principals}, at: at, want: route.CodeApprovalRequesterMismatch},
		{name: "pending", setup: func(t *testing.T) *approval.Approval { return create(t, s, pendingApproval(t, now)) },
			digest: digestOne, requester: runtimeA, at: at, want: route.CodeApprovalPending},
		{name: "denied", setup: func(t *testing.T) *approval.Approval {
			a := create(t, s, pendingApproval(t, now))
			d, err := s.Decide(ctx, a.ID, alice, false, "no", now)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}, digest: digestOne, requester: runtimeA, at: at, want: route.CodeApprovalDenied},
		{name: "expired, not yet marked", setup: func(t *testing.T) *approval.Approval { return approved(t, s, now) },
			digest: digestOne, requester: runtimeA, at: now.Add(approval.DefaultTTL), want: route.CodeApprovalExpired},
		{name: "expired and marked", setup: func(t *testing.T) *approval.Approval {
			a := approved(t, s, now)
			if _, err := s.ExpireDue(ctx, now.Add(approval.DefaultTTL)); err != nil {
				t.Fatal(err)
			}
			return get(t, s, a.ID)
		}, digest: digestOne, requester: runtimeA, at: at, want: route.CodeApprovalExpired},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := c.setup(t)
			rec := consumingRecord(t, 0, a.ID, now)
			got, err := s.Consume(ctx, a.ID, c.digest, c.requester, c.at, rec)
			if got != nil || code(t, err) != c.want {
				t.Fatalf("Consume = %+v, %v; want %s", got, err, c.want)
			}
			if stored := get(t, s, a.ID); !reflect.DeepEqual(stored, a) {
				t.Fatalf("a refused use changed the approval:\n %+v\nwas\n %+v", stored, a)
			}
			if n := pgtest.QueryInt(t, u, "SELECT count(*) FROM audit_decisions WHERE decision_id = $1", rec.DecisionID); n != 0 {
				t.Fatal("a refused use stored its record")
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		for _, id := range []string{newID(t), "nope"} {
			if _, err := s.Consume(ctx, id, digestOne, runtimeA, at, consumingRecord(t, 0, id, now)); !errors.Is(err, approval.ErrNotFound) {
				t.Errorf("Consume(%q): %v, want approval.ErrNotFound", id, err)
			}
		}
	})
	t.Run("a record that names another approval", func(t *testing.T) {
		a := approved(t, s, now)
		rec := consumingRecord(t, 0, newID(t), now)
		_, err := s.Consume(ctx, a.ID, digestOne, runtimeA, at, rec)
		if _, refused := errors.AsType[*approval.Error](err); err == nil || refused {
			t.Fatalf("a record linked to another approval: %v, want an error that is no refusal", err)
		}
		if get(t, s, a.ID).Status != approval.StatusApproved {
			t.Fatal("the approval was used")
		}
	})
	t.Run("a record without its link gets it", func(t *testing.T) {
		a := approved(t, s, now)
		rec := consumingRecord(t, 0, "", now)
		if _, err := s.Consume(ctx, a.ID, digestOne, runtimeA, at, rec); err != nil {
			t.Fatal(err)
		}
		if n := pgtest.QueryInt(t, u, "SELECT count(*) FROM audit_decisions WHERE decision_id = $1 AND approval_id = $2", rec.DecisionID, a.ID); n != 1 {
			t.Fatal("the record was not stored linked to the approval it used")
		}
	})
}

// When the record cannot be stored the approval is not spent: both commit
// or neither.
func TestConsumeRollsBackWithTheRecord(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	_, u := approvaltest.Database(t, now)
	s := openStore(t, u)
	ctx := context.Background()
	a := approved(t, s, now)
	rec := consumingRecord(t, 0, a.ID, now)

	// The same decision stored already: its primary key fails the insert.
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	dup := *rec
	if err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		return auditpg.InsertRecords(ctx, tx, []*audit.Record{&dup})
	}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Consume(ctx, a.ID, digestOne, runtimeA, now.Add(time.Second), rec)
	if got != nil || err == nil {
		t.Fatalf("Consume with a record stored already = %+v, %v; want an error", got, err)
	}
	if _, refused := errors.AsType[*approval.Error](err); refused || !strings.HasPrefix(err.Error(), "the approval "+a.ID+" cannot be used: ") {
		t.Fatalf("error %q: want a sentence saying the approval cannot be used, not a refusal", err)
	}
	if stored := get(t, s, a.ID); !reflect.DeepEqual(stored, a) {
		t.Fatalf("the approval changed though its record failed:\n %+v\nwas\n %+v", stored, a)
	}
	// And with a record that can be stored, it is used.
	if _, err := s.Consume(ctx, a.ID, digestOne, runtimeA, now.Add(time.Second), consumingRecord(t, 2, a.ID, now)); err != nil {
		t.Fatal(err)
	}
}

// TestConsumeMakesItsPartition: on a fresh database, before the audit
// sink's first maintenance, the consuming record's day has no partition;
// Consume makes it rather than refusing an approved retry.
func TestConsumeMakesItsPartition(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	_, u := pgtest.Fresh(t)
	ctx := context.Background()
	if err := pgdb.Migrate(ctx, u, "up", io.Discard); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	s := openStore(t, u)
	a := approved(t, s, now)
	if _, err := s.Consume(ctx, a.ID, digestOne, runtimeA, now.Add(time.Second), consumingRecord(t, 0, a.ID, now)); err != nil {
		t.Fatalf("Consume on a database without partitions: %v", err)
	}
	if stored := get(t, s, a.ID); stored.Status != approval.StatusUsed {
		t.Fatalf("status %s, want used", stored.Status)
	}
}

func TestExpireAndPurge(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	_, u := approvaltest.Database(t, now)
	s := openStore(t, u)
	ctx := context.Background()
	day := 24 * time.Hour

	openPast := create(t, s, pendingApproval(t, now.Add(-time.Hour))) // pending, expired an hour ago less 15 min
	approvedPast := approved(t, s, now.Add(-time.Hour))               // approved, expired too
	openNow := create(t, s, pendingApproval(t, now))                  // pending, not yet expired
	used := approved(t, s, now.Add(-time.Hour))                       // spent before it expired
	if _, err := s.Consume(ctx, used.ID, digestOne, runtimeA, now.Add(-time.Hour), consumingRecord(t, 0, used.ID, now)); err != nil {
		t.Fatal(err)
	}
	ancient := create(t, s, pendingApproval(t, now.Add(-100*day))) // long past retention
	ancientDenied := create(t, s, pendingApproval(t, now.Add(-100*day)))
	if _, err := s.Decide(ctx, ancientDenied.ID, alice, false, "", now.Add(-100*day)); err != nil {
		t.Fatal(err)
	}

	n, err := s.ExpireDue(ctx, now)
	if err != nil || n != 3 {
		t.Fatalf("ExpireDue = %d, %v; want the 2 open ones past expiry and the ancient pending one", n, err)
	}
	for id, want := range map[string]approval.Status{
		openPast.ID: approval.StatusExpired, approvedPast.ID: approval.StatusExpired, openNow.ID: approval.StatusPending,
		used.ID: approval.StatusUsed, ancient.ID: approval.StatusExpired, ancientDenied.ID: approval.StatusDenied,
	} {
		if got := get(t, s, id); got.Status != want {
			t.Errorf("after ExpireDue %s is %s, want %s", id, got.Status, want)
		}
	}
	if n, err := s.ExpireDue(ctx, now); err != nil || n != 0 {
		t.Fatalf("ExpireDue again = %d, %v; want nothing left to mark", n, err)
	}

	// Purge with a 90-day retention takes the ancient ones alone.
	n, err = s.Purge(ctx, now.Add(-90*day))
	if err != nil || n != 2 {
		t.Fatalf("Purge = %d, %v; want the 2 ancient approvals", n, err)
	}
	for _, id := range []string{ancient.ID, ancientDenied.ID} {
		if _, err := s.Get(ctx, id); !errors.Is(err, approval.ErrNotFound) {
			t.Errorf("purged %s: %v", id, err)
		}
	}
	if n := pgtest.QueryInt(t, u, "SELECT count(*) FROM approvals"); n != 4 {
		t.Fatalf("%d approvals left, want 4", n)
	}
	// An approval decided or used after the cut stays, whatever its expiry.
	odd := pendingApproval(t, now.Add(-2*day))
	odd.Status, odd.DecidedAt, odd.Approver = approval.StatusDenied, now, alice
	create(t, s, odd)
	if n, err := s.Purge(ctx, now.Add(-day)); err != nil || n != 0 {
		t.Fatalf("Purge of an approval decided after the cut = %d, %v", n, err)
	}
	// One past retention but not yet marked expired is marked first, so
	// its end is counted, and purged on the next sweep.
	late := create(t, s, pendingApproval(t, now.Add(-100*day)))
	if n, err := s.Purge(ctx, now.Add(-90*day)); err != nil || n != 0 {
		t.Fatalf("Purge of a pending approval = %d, %v; want it marked expired first", n, err)
	}
	if n, err := s.ExpireDue(ctx, now); err != nil || n != 1 {
		t.Fatalf("ExpireDue = %d, %v", n, err)
	}
	if n, err := s.Purge(ctx, now.Add(-90*day)); err != nil || n != 1 {
		t.Fatalf("Purge after the mark = %d, %v", n, err)
	}
	if _, err := s.Get(ctx, late.ID); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("purged %s: %v", late.ID, err)
	}
}

// FindOpen finds a call's open approval by digest and requester: an
// approved one before a pending one, and never one that is used, denied,
// expired (marked or only past its expiry), another call's or another
// requester's.
func TestFindOpen(t *testing.T) {
	t.Parallel()
	now := time.Now()
	_, u := approvaltest.Database(t, now)
	s := openStore(t, u)
	ctx := context.Background()
	find := func(digest string, who approval.Identity, at time.Time) string {
		t.Helper()
		a, err := s.FindOpen(ctx, digest, who, at)
		if err != nil {
			t.Fatal(err)
		}
		if a == nil {
			return ""
		}
		return a.ID
	}
	if id := find(digestOne, runtimeA, now); id != "" {
		t.Fatalf("an empty table has an open approval %s", id)
	}
	pending := create(t, s, pendingApproval(t, now))
	if id := find(digestOne, runtimeA, now); id != pending.ID {
		t.Fatalf("the pending approval is not found: %q", id)
	}
	// Another call, another token, the same token with other principals, or
	// past its expiry: not this approval.
	other := "sha256:" + fmt.Sprintf("%064x", 2)
	someoneElse := approval.Identity{TokenName: "runtime-b", Principals: runtimeA.Principals}
	fewer := approval.Identity{TokenName: runtimeA.TokenName, Principals: runtimeA.Principals[:1]}
	for name, id := range map[string]string{
		"another digest": find(other, runtimeA, now), "another token": find(digestOne, someoneElse, now),
		"other principals": find(digestOne, fewer, now), "past expiry": find(digestOne, runtimeA, pending.ExpiresAt),
	} {
		if id != "" {
			t.Errorf("%s finds approval %s", name, id)
		}
	}
	// An approved one comes before a newer pending one.
	ok := approved(t, s, now.Add(-time.Second))
	newer := create(t, s, pendingApproval(t, now.Add(time.Second)))
	if id := find(digestOne, runtimeA, now.Add(2*time.Second)); id != ok.ID {
		t.Fatalf("found %q, want the approved %s", id, ok.ID)
	}
	// Used, it is found no more; the newest pending one is.
	if _, err := s.Consume(ctx, ok.ID, digestOne, runtimeA, now, consumingRecord(t, 0, ok.ID, now)); err != nil {
		t.Fatal(err)
	}
	if id := find(digestOne, runtimeA, now.Add(2*time.Second)); id != newer.ID {
		t.Fatalf("found %q, want the newest pending %s", id, newer.ID)
	}
	// Denied, neither is found.
	for _, a := range []*approval.Approval{pending, newer} {
		if _, err := s.Decide(ctx, a.ID, alice, false, "", now.Add(2*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if id := find(digestOne, runtimeA, now.Add(2*time.Second)); id != "" {
		t.Fatalf("a denied approval is found: %s", id)
	}
}
