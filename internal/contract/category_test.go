package contract_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/route"
)

// Section 3, steps 1–4: when a declared public read is identity-bound.
func TestIdentityBoundPublicRead(t *testing.T) {
	t.Parallel()
	type tc struct {
		name  string
		over  obj
		bound bool
	}
	var tests []tc
	// Step 1: identity keys, even when every later step would say public.
	for _, k := range []string{"account_id", "account_key", "address", "card_id", "case_id", "client_id",
		"customer_id", "employee_id", "email", "invoice_id", "loan_id", "order_id", "patient_id",
		"payment_id", "payroll_id", "phone", "profile_id", "student_id", "subscription_id",
		"ticket_id", "transaction_id", "user_id"} {
		tests = append(tests, tc{"key " + k, obj{"tool_name": "search_public_catalog", "user_intent": "list opening hours",
			"proposed_arguments": obj{k: "redacted"}}, true})
	}
	tests = append(tests,
		tc{"key account alone", obj{"proposed_arguments": obj{"account": "x"}}, false},
		tc{"key idempotency_id", obj{"proposed_arguments": obj{"idempotency_id": "x"}}, false},
	)
	// Step 4 alone: the tool name contains an identity part.
	for _, part := range []string{"account", "booking", "cart", "client", "customer", "invoice", "order",
		"profile", "reservation", "subscription", "ticket", "transaction", "user"} {
		tests = append(tests, tc{"name part " + part, obj{"tool_name": "get_" + part + "_details"}, true})
	}
	tests = append(tests,
		tc{"name part as substring", obj{"tool_name": "recorder_status"}, true},
		tc{"name part joined", obj{"tool_name": "getUserInfo"}, true},
		tc{"plain name", obj{"tool_name": "get_weather"}, false},
	)
	// Step 2: a whole public word anywhere in the event text clears an
	// identity-looking name.
	for _, w := range []string{"search", "find", "list", "lookup", "catalog", "availability", "public", "opening hours"} {
		tests = append(tests, tc{"intent word " + w, obj{"tool_name": "get_order_details", "user_intent": "please " + w + " now"}, false})
		tests = append(tests, tc{"intent word upper " + w, obj{"tool_name": "get_order_details", "user_intent": strings.ToUpper(w) + "!"}, false})
	}
	tests = append(tests,
		tc{"word in tool name with dash", obj{"tool_name": "public-order-status"}, false},
		tc{"word in argument value", obj{"tool_name": "get_order_details", "proposed_arguments": obj{"q": "find shoes"}}, false},
		tc{"word as argument key", obj{"tool_name": "get_order_details", "proposed_arguments": obj{"lookup": "x"}}, false},
		tc{"word in ref source_id", obj{"tool_name": "get_order_details", "evidence_refs": []any{ref(obj{"source_id": "catalog.v2"})}}, false},
		tc{"word in ref summary", obj{"tool_name": "get_order_details", "evidence_refs": []any{ref(obj{"summary": "Public pricing"})}}, false},
		// Not whole words: underscores and letters join words.
		tc{"research is not search", obj{"tool_name": "get_order_details", "user_intent": "research this"}, true},
		tc{"listing is not list", obj{"tool_name": "get_order_details", "user_intent": "a listing"}, true},
		tc{"publicly is not public", obj{"tool_name": "get_order_details", "user_intent": "publicly"}, true},
		tc{"underscore joins", obj{"tool_name": "order_public"}, true},
		tc{"public_information domain is not public", obj{"tool_name": "get_order_details", "risk_domain": "public_information"}, true},
		tc{"opening alone", obj{"tool_name": "get_order_details", "user_intent": "opening soon"}, true},
		tc{"opening hourslong", obj{"tool_name": "get_order_details", "user_intent": "opening hourslong"}, true},
		tc{"opening hours at the end", obj{"tool_name": "get_order_details", "user_intent": "Opening Hours"}, false},
		tc{"opening hour at the end", obj{"tool_name": "get_order_details", "user_intent": "opening hour"}, true},
		tc{"opening two spaces", obj{"tool_name": "get_order_details", "user_intent": "opening  hours"}, true},
		// Step 3: the tool name's [a-z0-9] words include search or list.
		tc{"name word search", obj{"tool_name": "order_search"}, false},
		tc{"name word list", obj{"tool_name": "list_orders"}, false},
		tc{"name word list after digits", obj{"tool_name": "v2list.orders"}, true},
		tc{"name word find is not step 3", obj{"tool_name": "find_order"}, true},
		tc{"orderlist is one word", obj{"tool_name": "orderlist"}, true},
	)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Authenticated, so a re-classified read is accepted by its
			// category and the identity blocker stands alone.
			over := override(obj{"authorization_state": "authenticated", "evidence_refs": []any{authRef}}, tt.over)
			if refs, ok := tt.over["evidence_refs"].([]any); ok {
				over["evidence_refs"] = append([]any{authRef}, refs...)
			}
			d := decide(t, event(t, over))
			if tt.bound {
				expect(t, d, route.Ask, route.CodePublicReadIdentityBoundMisclassified)
				if d.ToolCategory != "private_read" {
					t.Errorf("tool_category = %s", d.ToolCategory)
				}
			} else {
				expect(t, d, route.Accept)
				if d.ToolCategory != "public_read" {
					t.Errorf("tool_category = %s", d.ToolCategory)
				}
			}
		})
	}
}

// A re-classified read is routed as a private read at its effective state,
// evidence checks included.
func TestIdentityBoundRoutedAsPrivateRead(t *testing.T) {
	t.Parallel()
	d := decide(t, event(t, obj{"tool_name": "get_customer", "evidence_refs": []any{}}))
	expect(t, d, route.Defer, route.CodePublicReadIdentityBoundMisclassified, route.CodePrivateReadNotAuthenticated, route.CodeMissingEvidenceRefs)
	d = decide(t, event(t, obj{"tool_name": "get_customer", "authorization_state": "user_claimed", "evidence_refs": []any{claimRef}}))
	expect(t, d, route.Ask, route.CodePublicReadIdentityBoundMisclassified, route.CodePrivateReadNotAuthenticated)
}

// Section 3: the route of each category at each effective state.
func TestCategoryRoutes(t *testing.T) {
	t.Parallel()
	states := []string{"none", "user_claimed", "authenticated", "validated", "confirmed"}
	type want struct {
		r        route.Route
		blockers []string
	}
	hr := func(r route.Route, extra ...string) want {
		return want{r, append([]string{route.CodeHighRiskWriteMissingExplicitConfirmation, route.CodeWriteMissingExplicitConfirmation}, extra...)}
	}
	table := map[string][]want{
		"public_read":  {{route.Accept, nil}, {route.Accept, nil}, {route.Accept, nil}, {route.Accept, nil}, {route.Accept, nil}},
		"private_read": {{route.Defer, []string{route.CodePrivateReadNotAuthenticated}}, {route.Ask, []string{route.CodePrivateReadNotAuthenticated}}, {route.Accept, nil}, {route.Accept, nil}, {route.Accept, nil}},
		"write": {{route.Defer, []string{route.CodeWriteMissingAuthorization}}, {route.Ask, []string{route.CodeWriteMissingValidationOrConfirmation}},
			{route.Ask, []string{route.CodeWriteMissingValidationOrConfirmation}}, {route.Ask, []string{route.CodeWriteMissingExplicitConfirmation}}, {route.Accept, nil}},
		"high_risk_write": {hr(route.Defer), hr(route.Ask, route.CodeWriteMissingValidationOrConfirmation), hr(route.Ask, route.CodeWriteMissingValidationOrConfirmation),
			hr(route.Ask), {route.Accept, nil}},
		"unknown": {{route.Defer, []string{route.CodeUnknownToolCategory}}, {route.Defer, []string{route.CodeUnknownToolCategory}},
			{route.Defer, []string{route.CodeUnknownToolCategory}}, {route.Defer, []string{route.CodeUnknownToolCategory}}, {route.Defer, []string{route.CodeUnknownToolCategory}}},
	}
	for cat, wants := range table {
		for i, state := range states {
			t.Run(cat+"/"+state, func(t *testing.T) {
				name, c := "update_note", cat
				if cat == "high_risk_write" {
					name, c = "send_message", "write"
				}
				d := decide(t, event(t, obj{"tool_name": name, "tool_category": c, "authorization_state": state,
					"evidence_refs": refsBacking(state), "risk_domain": "personal_productivity"}))
				expect(t, d, wants[i].r, wants[i].blockers...)
				if d.Gate.Route != wants[i].r || d.AuthorizationName() != state {
					t.Errorf("aana_route %s, state %s", d.Gate.Route, d.AuthorizationState)
				}
			})
		}
	}
}

// Section 3: a write is high-risk by a name word, a name substring or its
// domain; a validated high-risk write still needs confirmation.
func TestHighRiskWrite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, tool, domain string
		high               bool
	}{
		{"word delete", "delete_file", "personal_productivity", true},
		{"word deploy", "deploy.service", "personal_productivity", true},
		{"word grant", "grant-role", "personal_productivity", true},
		{"word pay", "pay_invoice", "personal_productivity", true},
		{"word purchase", "purchase_item", "personal_productivity", true},
		{"word reset", "reset_password", "personal_productivity", true},
		{"word revoke", "revoke_access", "personal_productivity", true},
		{"word send", "send_email", "personal_productivity", true},
		{"word transfer", "transfer_funds", "personal_productivity", true},
		{"case", "SendEmail", "personal_productivity", true},
		{"substring pay", "repayment_schedule", "personal_productivity", true},
		{"substring send", "resend_invite", "personal_productivity", true},
		{"substring delete", "bulkdelete", "personal_productivity", true},
		{"substring deploy", "redeploy", "personal_productivity", true},
		{"substring grant", "regrant", "personal_productivity", true},
		{"substring revoke", "autorevoke", "personal_productivity", true},
		{"substring reset", "softreset", "personal_productivity", true},
		{"substring transfer", "wiretransfers", "personal_productivity", true},
		{"substring purchase", "repurchases", "personal_productivity", true},
		{"plain write", "update_note", "personal_productivity", false},
		{"domain finance", "update_note", "finance", true},
		{"domain devops", "update_note", "devops", true},
		{"domain security", "update_note", "security", true},
		{"domain legal", "update_note", "legal", true},
		{"domain pharma", "update_note", "pharma", true},
		{"domain healthcare", "update_note", "healthcare", true},
		{"domain hr", "update_note", "hr", false},
		{"domain commerce", "update_note", "commerce", false},
		{"domain education", "update_note", "education", false},
		{"domain customer_support", "update_note", "customer_support", false},
		{"domain research", "update_note", "research", false},
		{"domain unknown", "update_note", "unknown", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decide(t, event(t, obj{"tool_name": tt.tool, "tool_category": "write", "authorization_state": "validated",
				"evidence_refs": []any{validRef}, "risk_domain": tt.domain}))
			if tt.high {
				expect(t, d, route.Ask, route.CodeHighRiskWriteMissingExplicitConfirmation, route.CodeWriteMissingExplicitConfirmation)
			} else {
				expect(t, d, route.Ask, route.CodeWriteMissingExplicitConfirmation)
			}
			if got := slices.Contains(d.Reasons, "high_risk_write_requires_explicit_confirmation"); got != tt.high {
				t.Errorf("reasons %q", d.Reasons)
			}
		})
	}
}

// Evaluate routes on the category it is given (the catalog's effective
// one), not the declared one.
func TestEvaluateUsesGivenCategory(t *testing.T) {
	t.Parallel()
	p := contract.Prepare(event(t, nil))
	if p.Event == nil {
		t.Fatal(p.ValidationErrors)
	}
	e := contract.Evaluate(p.Event, route.Write, fixedNow)
	o := route.Combine(e.Findings)
	if e.Category != route.Write || o.Route != route.Defer || !slices.Equal(o.HardBlockers, []string{route.CodeWriteMissingAuthorization}) {
		t.Errorf("category %s, outcome %+v", e.Category, o)
	}
	// A public read given by the catalog is still checked for identity.
	p = contract.Prepare(event(t, obj{"tool_name": "get_invoice", "tool_category": "write", "recommended_route": "ask"}))
	e = contract.Evaluate(p.Event, route.PublicRead, fixedNow)
	if e.Category != route.PrivateRead {
		t.Errorf("category %s, want private_read", e.Category)
	}
}

// adversarialIntent repeats "opening " up to 60 KB, ending in an upper-case
// letter so that lower-casing it is never free.
var adversarialIntent = strings.Repeat("opening ", (60<<10)/8) + "X"

// The public-word scan is linear: each "opening" must not re-read the rest
// of the text. Counted in allocations, not time.
func TestPublicWordScanIsLinear(t *testing.T) {
	p := contract.Prepare(event(t, obj{"tool_name": "get_order", "user_intent": adversarialIntent}))
	if p.Event == nil {
		t.Fatal(p.ValidationErrors)
	}
	allocs := testing.AllocsPerRun(3, func() { contract.Evaluate(p.Event, route.PublicRead, fixedNow) })
	if allocs > 500 {
		t.Errorf("Evaluate made %.0f allocations for one long user_intent", allocs)
	}
}

func BenchmarkEvaluateLongIntent(b *testing.B) {
	p := contract.Prepare(event(b, obj{"tool_name": "get_order", "user_intent": adversarialIntent}))
	b.ReportAllocs()
	for b.Loop() {
		contract.Evaluate(p.Event, route.PublicRead, fixedNow)
	}
}
