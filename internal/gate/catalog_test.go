package gate

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/route"
)

func exampleCatalog(t testing.TB) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Load([]string{"../../examples/catalog"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func catalogEngine(t testing.TB, unknown UnknownTools) *Engine {
	c := exampleCatalog(t)
	return New(WithClock(func() time.Time { return fixedNow }),
		WithCatalog(func() *catalog.Catalog { return c }, unknown, catalog.ArgumentsEnforce))
}

const confirmedEmail = `{"tool_name":"send_email","tool_category":"write","authorization_state":"confirmed",
	"evidence_refs":[{"source_id":"approval.1","kind":"approval","trust_tier":"verified","redaction_status":"redacted","freshness":{"status":"fresh"},"provenance":"connector","retrieved_at":"2026-11-20T11:00:00Z"}],
	"risk_domain":"customer_support","proposed_arguments":{"to":"c@example.com","subject":"Hi","body":"Your refund is on its way.","ticket_id":"T-42"},"recommended_route":"accept"}`

func TestCatalogJoinByAlias(t *testing.T) {
	t.Parallel()
	e := catalogEngine(t, UnknownDefer)
	d := e.Decide(context.Background(), Request{Event: decode(t, []byte(confirmedEmail))})
	if d.Route != route.Accept || !d.Execute {
		t.Fatalf("route %s blockers %v", d.Route, d.HardBlockers)
	}
	if d.Action == nil || d.Action.ToolID != "support.send-email" || d.Revisions.Catalog == "" {
		t.Fatalf("action %+v revisions %+v", d.Action, d.Revisions)
	}
}

func TestCatalogFloorsTighten(t *testing.T) {
	t.Parallel()
	e := catalogEngine(t, UnknownDefer)
	// Validated is enough for the contract's ask, but the tool's approval
	// is always: the catalog adds approval_required.
	ev := decode(t, []byte(confirmedEmail))
	ev["authorization_state"] = "validated"
	d := e.Decide(context.Background(), Request{Event: ev})
	if d.Route != route.Ask || !slices.Contains(d.HardBlockers, "approval_required") {
		t.Fatalf("route %s blockers %v", d.Route, d.HardBlockers)
	}
	// Arguments that break the tool's input schema are refused.
	ev = decode(t, []byte(confirmedEmail))
	ev["proposed_arguments"] = map[string]any{"to": "c@example.com"}
	d = e.Decide(context.Background(), Request{Event: ev})
	if d.Route != route.Refuse || !slices.Contains(d.HardBlockers, "arguments_invalid") || len(d.ArgumentErrors) == 0 {
		t.Fatalf("route %s blockers %v argument errors %v", d.Route, d.HardBlockers, d.ArgumentErrors)
	}
}

func TestCatalogUnderstatedCategory(t *testing.T) {
	t.Parallel()
	e := catalogEngine(t, UnknownDefer)
	ev := decode(t, []byte(confirmedEmail))
	ev["tool_category"] = "public_read"
	d := e.Decide(context.Background(), Request{Event: ev})
	if d.ToolCategory != "write" || !slices.Contains(d.HardBlockers, "tool_category_understated") || d.Execute {
		t.Fatalf("category %s blockers %v", d.ToolCategory, d.HardBlockers)
	}
}

func TestCatalogUnknownTools(t *testing.T) {
	t.Parallel()
	ev := `{"tool_name":"search_docs","tool_category":"public_read","authorization_state":"none","evidence_refs":[],"risk_domain":"research","proposed_arguments":{"query":"x"},"recommended_route":"accept"}`
	for _, c := range []struct {
		mode     UnknownTools
		want     route.Route
		blockers []string
	}{
		{UnknownDefer, route.Defer, []string{"tool_not_in_catalog"}},
		{UnknownRefuse, route.Refuse, []string{"tool_not_in_catalog"}},
		{UnknownAllow, route.Accept, []string{}},
	} {
		d := catalogEngine(t, c.mode).Decide(context.Background(), Request{Event: decode(t, []byte(ev))})
		if d.Route != c.want || !slices.Equal(d.HardBlockers, c.blockers) || d.Action != nil {
			t.Errorf("mode %d: route %s blockers %v", c.mode, d.Route, d.HardBlockers)
		}
	}
	// Without a catalog gated is the contract gate: same answer as allow,
	// and no catalog revision.
	d := New(WithClock(func() time.Time { return fixedNow })).Decide(context.Background(), Request{Event: decode(t, []byte(ev))})
	if d.Route != route.Accept || d.Revisions.Catalog != "" {
		t.Fatalf("no catalog: route %s revisions %+v", d.Route, d.Revisions)
	}
}

// TestCatalogVouchedCategory: a surface that vouches for an uncatalogued
// tool's category (trusted MCP annotations) sets aside the unknown-tools
// rule, in every mode, and the contract rules decide on that category; a
// vouched unknown category is still unknown, and a catalogued tool keeps
// the catalog's category.
func TestCatalogVouchedCategory(t *testing.T) {
	t.Parallel()
	ev := `{"tool_name":"search_docs","tool_category":"public_read","authorization_state":"none","evidence_refs":[],"risk_domain":"research","proposed_arguments":{"query":"x"},"recommended_route":"accept"}`
	for _, mode := range []UnknownTools{UnknownDefer, UnknownRefuse} {
		d := catalogEngine(t, mode).Decide(context.Background(), Request{Event: decode(t, []byte(ev)), CategoryVouched: true})
		if d.Route != route.Accept || len(d.HardBlockers) != 0 {
			t.Errorf("mode %d: route %s blockers %v", mode, d.Route, d.HardBlockers)
		}
	}
	unknown := decode(t, []byte(ev))
	unknown["tool_category"], unknown["recommended_route"] = "unknown", "defer"
	d := catalogEngine(t, UnknownRefuse).Decide(context.Background(), Request{Event: unknown, CategoryVouched: true})
	if d.Route != route.Refuse || !slices.Contains(d.HardBlockers, "tool_not_in_catalog") {
		t.Errorf("vouched unknown: route %s blockers %v", d.Route, d.HardBlockers)
	}
	email := decode(t, []byte(confirmedEmail))
	email["tool_category"] = "public_read"
	d = catalogEngine(t, UnknownDefer).Decide(context.Background(), Request{Event: email, CategoryVouched: true})
	if d.ToolCategory != "write" || !slices.Contains(d.HardBlockers, "tool_category_understated") {
		t.Errorf("a vouched category overrode the catalog's: category %s blockers %v", d.ToolCategory, d.HardBlockers)
	}
}

func TestAlwaysRefused(t *testing.T) {
	t.Parallel()
	refuse, deferring := catalogEngine(t, UnknownRefuse), catalogEngine(t, UnknownDefer)
	for _, c := range []struct {
		e       *Engine
		tool    string
		vouched bool
		want    bool
	}{
		{deferring, "drop_database", false, true}, // R4: never executes
		{deferring, "send_email", false, false},
		{deferring, "search_docs", false, false},
		{refuse, "search_docs", false, true},
		{refuse, "search_docs", true, false},
		{New(WithShadow(true), WithCatalog(func() *catalog.Catalog { return exampleCatalog(t) }, UnknownRefuse, catalog.ArgumentsEnforce)), "drop_database", false, false},
		{New(), "drop_database", false, false},
	} {
		if got := c.e.AlwaysRefused(c.tool, c.vouched); got != c.want {
			t.Errorf("%s vouched %t: %t", c.tool, c.vouched, got)
		}
	}
}

func TestParseUnknownTools(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]UnknownTools{"": UnknownDefer, "defer": UnknownDefer, "refuse": UnknownRefuse, "allow": UnknownAllow} {
		if got, err := ParseUnknownTools(s); err != nil || got != want {
			t.Errorf("%q: %v %v", s, got, err)
		}
	}
	if _, err := ParseUnknownTools("maybe"); err == nil {
		t.Error("want an error")
	}
}

// A surface that picked the category from the catalog has the decision
// join that same snapshot: the catalog is read once per decision, and a
// reload between the pick and the decision does not split it.
func TestPickedCatalogIsTheOneJoined(t *testing.T) {
	t.Parallel()
	picked, reads := exampleCatalog(t), 0
	current := picked
	e := New(WithClock(func() time.Time { return fixedNow }),
		WithCatalog(func() *catalog.Catalog { reads++; return current }, UnknownDefer, catalog.ArgumentsEnforce))
	pick := e.CallCategory("send_email", map[string]any{"to": "c@example.com"}, "")
	if pick.Category != route.Write {
		t.Fatalf("picked %s", pick.Category)
	}
	// A reload to a catalog that does not describe the tool.
	other, err := catalog.Load([]string{"../../examples/catalog/plugins"})
	if err != nil {
		t.Fatal(err)
	}
	current = other
	d := e.Decide(context.Background(), Request{Event: decode(t, []byte(confirmedEmail)), Pick: &pick})
	if reads != 1 {
		t.Errorf("the catalog was read %d times for one decision", reads)
	}
	if d.Action == nil || d.Revisions.Catalog != picked.Revision() || slices.Contains(d.HardBlockers, route.CodeToolNotInCatalog) {
		t.Errorf("the decision did not join the picked catalog: action %v revisions %+v blockers %v", d.Action, d.Revisions, d.HardBlockers)
	}
}
