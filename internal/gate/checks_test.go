package gate

import (
	"context"
	"slices"
	"testing"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/route"
)

// A surface's Checks see the catalog view the event joined, add to the
// findings like any source, and fail closed when they panic.
func TestRequestChecks(t *testing.T) {
	t.Parallel()
	e := catalogEngine(t, UnknownDefer)
	var seen *catalog.View
	d := e.Decide(context.Background(), Request{Event: decode(t, []byte(confirmedEmail)),
		Checks: func(v *catalog.View, ev *route.Event) []route.Finding {
			seen = v
			return []route.Finding{{Source: route.SourceActionAPI, Code: "plan_rule", Route: route.Ask, Blocking: true, Message: "m"}}
		}})
	if seen == nil || seen.ToolID != "support.send-email" {
		t.Errorf("Checks saw view %+v", seen)
	}
	if d.Route != route.Ask || !slices.Equal(d.HardBlockers, []string{"plan_rule"}) {
		t.Errorf("route %s blockers %v, want ask [plan_rule]", d.Route, d.HardBlockers)
	}

	d = e.Decide(context.Background(), Request{Event: decode(t, []byte(confirmedEmail)),
		Checks: func(*catalog.View, *route.Event) []route.Finding { panic("boom") }})
	if d.Route != route.Refuse || d.Execute || !slices.Contains(d.HardBlockers, route.CodeInternalError) {
		t.Errorf("a panicking check: route %s execute %v blockers %v", d.Route, d.Execute, d.HardBlockers)
	}
}
