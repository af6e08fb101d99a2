package catalog

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/redact"
	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/testtree"
)

func TestEffectiveCategory(t *testing.T) {
	t.Parallel()
	write := &View{ToolID: "w", RiskLevel: 1}
	mutatingZero := &View{ToolID: "m", Mutates: []string{"database:x"}}
	read := &View{ToolID: "r"}
	tests := []struct {
		v        *View
		declared route.Category
		want     route.Category
		blocker  bool
	}{
		{write, route.PublicRead, route.Write, true},
		{write, route.PrivateRead, route.Write, true},
		{mutatingZero, route.PublicRead, route.Write, true},
		{write, route.Write, route.Write, false},
		{write, route.Unknown, route.Write, false},
		{read, route.Unknown, route.PrivateRead, false},
		{read, route.PublicRead, route.PublicRead, false},
		{read, route.PrivateRead, route.PrivateRead, false},
		{read, route.Write, route.Write, false},
		{nil, route.Unknown, route.Unknown, false},
	}
	for _, tt := range tests {
		got, fs := EffectiveCategory(tt.v, tt.declared)
		if got != tt.want || (len(fs) == 1) != tt.blocker || len(fs) > 1 {
			t.Errorf("EffectiveCategory(%v, %s) = %s, %v; want %s, blocker %v", tt.v, tt.declared, got, fs, tt.want, tt.blocker)
			continue
		}
		if tt.blocker {
			f := fs[0]
			if f.Code != route.CodeToolCategoryUnderstated || !f.Blocking || f.Route != route.Ask || f.Source != route.SourceCatalog {
				t.Errorf("finding %+v", f)
			}
		}
	}
}

func verifiedApproval() route.EvidenceRef {
	return route.EvidenceRef{SourceID: "approval.ticket-1", Kind: "approval", TrustTier: "verified"}
}

// TestFloors: each floor fires exactly when its condition holds, with its
// route and as a hard blocker.
func TestFloors(t *testing.T) {
	t.Parallel()
	none, claimed, validated, confirmed := route.AuthNone, route.AuthUserClaimed, route.AuthValidated, route.AuthConfirmed
	risk2 := &View{ToolID: "t", RiskLevel: 2, Approval: "auto", Mutates: []string{"external:*"}}
	risk3 := &View{ToolID: "t", RiskLevel: 3, Approval: "auto", Mutates: []string{"external:*"}}
	always := &View{ToolID: "t", RiskLevel: 1, Approval: "always"}
	onMutate := &View{ToolID: "t", RiskLevel: 1, Approval: "on-mutate", Mutates: []string{"database:x"}}
	onMutateRead := &View{ToolID: "t", Approval: "on-mutate"}
	policy := &View{ToolID: "t", Approval: "policy:prod"}
	r4 := &View{ToolID: "t", RiskLevel: 3, Approval: "always", NeverExecute: true, RiskTier: "R4"}
	plain := &View{ToolID: "t", RiskLevel: 1, Approval: "auto"}
	withApproval := &route.Event{EvidenceRefs: []route.EvidenceRef{verifiedApproval()}}
	unverified := &route.Event{EvidenceRefs: []route.EvidenceRef{{Kind: "approval", TrustTier: "user_claimed"}}}

	type want struct {
		code string
		r    route.Route
	}
	tests := []struct {
		name string
		v    *View
		ev   *route.Event
		auth route.AuthState
		want []want
	}{
		{"risk 2 at none defers", risk2, nil, none, []want{{route.CodeRiskLevelRequiresConfirmation, route.Defer}}},
		{"risk 2 claimed asks", risk2, nil, claimed, []want{{route.CodeRiskLevelRequiresConfirmation, route.Ask}}},
		{"risk 2 validated asks", risk2, nil, validated, []want{{route.CodeRiskLevelRequiresConfirmation, route.Ask}}},
		{"risk 2 confirmed passes", risk2, nil, confirmed, nil},
		{"risk 3 confirmed without approval defers", risk3, &route.Event{}, confirmed, []want{{route.CodeIrreversibleActionRequiresVerifiedApproval, route.Defer}}},
		{"risk 3 unverified approval defers", risk3, unverified, confirmed, []want{{route.CodeIrreversibleActionRequiresVerifiedApproval, route.Defer}}},
		{"risk 3 approval but not confirmed defers", risk3, withApproval, validated, []want{{route.CodeIrreversibleActionRequiresVerifiedApproval, route.Defer}}},
		{"risk 3 confirmed and verified passes", risk3, withApproval, confirmed, nil},
		{"approval always asks", always, nil, validated, []want{{route.CodeApprovalRequired, route.Ask}}},
		{"approval always confirmed passes", always, nil, confirmed, nil},
		{"on-mutate that mutates asks", onMutate, nil, claimed, []want{{route.CodeApprovalRequired, route.Ask}}},
		{"on-mutate that does not mutate passes", onMutateRead, nil, claimed, nil},
		{"policy approval is left to the policy", policy, nil, claimed, nil},
		{"R4 refuses even confirmed and approved", r4, withApproval, confirmed, []want{{route.CodeRiskTierNeverAuto, route.Refuse}}},
		{"R4 unconfirmed collects every floor", r4, nil, none, []want{{route.CodeRiskTierNeverAuto, route.Refuse}, {route.CodeIrreversibleActionRequiresVerifiedApproval, route.Defer}, {route.CodeApprovalRequired, route.Ask}}},
		{"risk 1 auto adds nothing", plain, nil, none, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, _ := Floors(tt.v.Call(nil, ""), tt.ev, tt.auth, ArgumentsEnforce)
			var got []want
			for _, f := range fs {
				if !f.Blocking || f.Source != route.SourceCatalog || f.Message == "" {
					t.Errorf("finding %+v is not a catalog hard blocker", f)
				}
				got = append(got, want{f.Code, f.Route})
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("findings %v, want %v", got, tt.want)
			}
		})
	}
}

// TestFloorCodesNameWhatFloorsAdds: unconfirmed and unapproved, a call
// meets every floor its view has, and FloorCodes names exactly those.
func TestFloorCodesNameWhatFloorsAdds(t *testing.T) {
	t.Parallel()
	for _, v := range []*View{
		{ToolID: "plain", RiskLevel: 1, Approval: "auto"},
		{ToolID: "risk2", RiskLevel: 2, Approval: "auto", Mutates: []string{"external:*"}},
		{ToolID: "risk3", RiskLevel: 3, Approval: "on-mutate", Mutates: []string{"external:*"}},
		{ToolID: "always", RiskLevel: 1, Approval: "always"},
		{ToolID: "on-mutate-read", Approval: "on-mutate"},
		{ToolID: "policy", RiskLevel: 2, Approval: "policy:prod"},
		{ToolID: "r4", RiskLevel: 3, Approval: "always", NeverExecute: true, RiskTier: "R4"},
	} {
		fs, _ := Floors(v.Call(nil, ""), nil, route.AuthNone, ArgumentsEnforce)
		var got []string
		for _, f := range fs {
			got = append(got, f.Code)
		}
		if !slices.Equal(got, v.FloorCodes()) {
			t.Errorf("%s: Floors adds %v, FloorCodes says %v", v.ToolID, got, v.FloorCodes())
		}
	}
}

func TestArgumentFloor(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, examples)
	refund, _ := c.Lookup("issue_refund")
	valid := map[string]any{"payment_id": "p1", "amount": 20.5, "reason": "damaged"}
	secret := "sk-live0123456789abcdefXYZ"
	invalid := map[string]any{"payment_id": secret, "amount": 900.0, "reason": "because", "card": "4111 1111 1111 1111"}
	ev := func(args map[string]any) *route.Event {
		return &route.Event{ProposedArguments: args, EvidenceRefs: []route.EvidenceRef{verifiedApproval()}}
	}

	if fs, errs := Floors(refund.Call(nil, ""), ev(valid), route.AuthConfirmed, ArgumentsEnforce); len(fs) != 0 || errs != nil {
		t.Fatalf("valid arguments: %v %v", fs, errs)
	}
	fs, errs := Floors(refund.Call(nil, ""), ev(invalid), route.AuthConfirmed, ArgumentsEnforce)
	if len(fs) != 1 || fs[0].Code != route.CodeArgumentsInvalid || fs[0].Route != route.Refuse || !fs[0].Blocking {
		t.Fatalf("enforce: %+v", fs)
	}
	// The errors behind the finding come with it, so no caller validates twice.
	if !slices.Equal(errs, refund.ValidateArguments(invalid)) {
		t.Errorf("argument errors %+v, want those of one validation", errs)
	}
	for _, frag := range []string{"/amount: must be <= 500", "/reason: value must be one of", "/card: ", "not an allowed field"} {
		if !strings.Contains(fs[0].Message, frag) {
			t.Errorf("message %q lacks %q", fs[0].Message, frag)
		}
	}
	if strings.Contains(fs[0].Message, "900") || strings.Contains(fs[0].Message, "because") ||
		redact.HasSecret(fs[0].Message) || strings.Contains(fs[0].Message, "4111") {
		t.Errorf("message leaks an argument value: %q", fs[0].Message)
	}

	fs, errs = Floors(refund.Call(nil, ""), ev(invalid), route.AuthConfirmed, ArgumentsWarn)
	if len(fs) != 1 || fs[0].Route != route.Accept || fs[0].Blocking || len(errs) == 0 {
		t.Fatalf("warn: %+v %+v", fs, errs)
	}
	if fs, errs := Floors(refund.Call(nil, ""), ev(invalid), route.AuthConfirmed, ArgumentsOff); len(fs) != 0 || errs != nil {
		t.Fatalf("off: %+v %+v", fs, errs)
	}
	// Missing arguments are validated as an empty object.
	fs, _ = Floors(refund.Call(nil, ""), ev(nil), route.AuthConfirmed, ArgumentsEnforce)
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "/payment_id: is required") {
		t.Fatalf("nil arguments: %+v", fs)
	}
}

// TestArgumentErrorsNeverQuoteValues covers the validator messages that
// would quote the value: pattern, format, bounds, lengths.
func TestArgumentErrorsNeverQuoteValues(t *testing.T) {
	t.Parallel()
	dir := testtree.Write(t, t.TempDir(), map[string]string{"p/action.json": `{
		"name": "x", "riskTier": "R0",
		"inputSchema": {"type": "object", "properties": {
			"code": {"type": "string", "pattern": "^[0-9]+$"},
			"mail": {"type": "string", "format": "email"},
			"n": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 7},
			"m": {"type": "number", "exclusiveMaximum": 0},
			"short": {"type": "string", "maxLength": 3},
			"long": {"type": "string", "minLength": 40},
			"blob": {"type": "string", "contentEncoding": "base64"},
			"tags": {"type": "array", "maxItems": 1},
			"k": {"const": "fixed"},
			"neg": {"not": {"type": "string"}}
		}}}`})
	c := mustLoad(t, dir)
	v, _ := c.Lookup("x")
	leak := "SECRETVALUE-token=abcdefghijkl"
	args := map[string]any{}
	if err := json.Unmarshal([]byte(`{"code": "`+leak+`", "mail": "`+leak+`", "n": -123456.5, "m": 987654,
		"short": "`+leak+`", "long": "`+leak+`", "blob": "`+leak+`!!", "tags": ["`+leak+`", "b"], "k": "`+leak+`", "neg": "`+leak+`"}`), &args); err != nil {
		t.Fatal(err)
	}
	errs := v.ValidateArguments(args)
	if len(errs) < 10 {
		t.Fatalf("want an error per property, got %v", errs)
	}
	for _, e := range errs {
		s := e.String()
		if strings.Contains(s, "SECRETVALUE") || strings.Contains(s, "123456") || strings.Contains(s, "987654") {
			t.Errorf("argument error leaks the value: %s", s)
		}
		if e.Path == "" || e.Keyword == "" || e.Message == "" {
			t.Errorf("incomplete argument error %+v", e)
		}
	}
}

func TestValidateArgumentsBounds(t *testing.T) {
	t.Parallel()
	dir := testtree.Write(t, t.TempDir(), map[string]string{
		"p/action.json": `{"name": "x", "riskTier": "R0", "inputSchema": {"additionalProperties": {"type": "integer"}}}`,
		"q/action.json": `{"name": "y", "riskTier": "R0"}`,
	})
	c := mustLoad(t, dir)
	v, _ := c.Lookup("x")
	args := map[string]any{}
	for i := range 100 {
		args[strings.Repeat("k", i+1)] = "not an integer"
	}
	if errs := v.ValidateArguments(args); len(errs) != maxArgumentErrors {
		t.Fatalf("%d errors, want the cap %d", len(errs), maxArgumentErrors)
	}
	noSchema, _ := c.Lookup("y")
	if noSchema.InputSchema || noSchema.ValidateArguments(args) != nil {
		t.Fatal("a view without an input schema validated arguments")
	}
}

func TestParseArgumentMode(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]ArgumentMode{"": ArgumentsEnforce, "enforce": ArgumentsEnforce, "warn": ArgumentsWarn, "off": ArgumentsOff} {
		got, err := ParseArgumentMode(s)
		if err != nil || got != want {
			t.Errorf("ParseArgumentMode(%q) = %v, %v", s, got, err)
		}
		if s != "" && got.String() != s {
			t.Errorf("%v.String() = %q", got, got.String())
		}
	}
	if _, err := ParseArgumentMode("strict"); err == nil || !strings.Contains(err.Error(), `"strict"`) {
		t.Fatalf("ParseArgumentMode(strict) err = %v", err)
	}
}

func TestViewJSONIsTheEnvelopeActionBlock(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, examples)
	v, _ := c.Lookup("send_email")
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tool_id", "action_id", "version", "risk_level", "approval", "mutates", "source", "format"} {
		if _, ok := m[k]; !ok {
			t.Errorf("view JSON lacks %s: %s", k, b)
		}
	}
	if ref, ok := v.PolicyRef(); ok || ref != "" {
		t.Errorf("PolicyRef of an always view = %q, %v", ref, ok)
	}
	d, _ := c.Lookup("deploy_service")
	if ref, ok := d.PolicyRef(); !ok || ref != "production-deploys" {
		t.Errorf("PolicyRef = %q, %v", ref, ok)
	}
}

// TestExampleCatalogCoversEveryFloor: the example catalog the README points
// at triggers every catalog blocker with a realistic event.
func TestExampleCatalogCoversEveryFloor(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, examples)
	approval := []route.EvidenceRef{verifiedApproval()}
	tests := []struct {
		toolName string
		declared route.Category
		auth     route.AuthState
		args     map[string]any
		refs     []route.EvidenceRef
		code     string
	}{
		{"update_ticket", route.PrivateRead, route.AuthConfirmed, map[string]any{"ticket_id": "T-1"}, nil, route.CodeToolCategoryUnderstated},
		{"publish_article", route.Write, route.AuthValidated, map[string]any{"article_id": "a1"}, nil, route.CodeRiskLevelRequiresConfirmation},
		{"issue_refund", route.Write, route.AuthConfirmed, map[string]any{"payment_id": "p", "amount": 10.0, "reason": "damaged"}, nil, route.CodeIrreversibleActionRequiresVerifiedApproval},
		{"send_email", route.Write, route.AuthValidated, map[string]any{"to": "a@example.com", "subject": "s", "body": "b", "ticket_id": "T-1"}, nil, route.CodeApprovalRequired},
		{"run_shell", route.Write, route.AuthAuthenticated, map[string]any{"command": "make test"}, nil, route.CodeApprovalRequired},
		{"deploy_service", route.Write, route.AuthConfirmed, map[string]any{"service": "api", "release": "v1.2.3"}, nil, route.CodeApprovalPolicyUnresolvable},
		{"drop_database", route.Write, route.AuthConfirmed, map[string]any{"database": "orders"}, approval, route.CodeRiskTierNeverAuto},
		{"legacy_cleanup", route.Unknown, route.AuthConfirmed, nil, approval, route.CodeRiskTierNeverAuto},
		{"send_email", route.Write, route.AuthConfirmed, map[string]any{"to": "not-an-address", "subject": "s", "body": "b", "ticket_id": "T-1"}, nil, route.CodeArgumentsInvalid},
	}
	for _, tt := range tests {
		v, ok := c.Lookup(tt.toolName)
		if !ok {
			t.Fatalf("%s not in the example catalog", tt.toolName)
		}
		ev := &route.Event{ToolName: tt.toolName, ToolCategory: tt.declared, ProposedArguments: tt.args, EvidenceRefs: tt.refs}
		_, fs := EffectiveCategory(v, tt.declared)
		floors, _ := Floors(v.Call(nil, ""), ev, tt.auth, ArgumentsEnforce)
		fs = append(fs, floors...)
		if f, ok := UnresolvedApprovalPolicy(v); ok {
			fs = append(fs, f)
		}
		found := false
		for _, f := range fs {
			found = found || f.Code == tt.code
		}
		if !found {
			t.Errorf("%s at %s: findings %v lack %s", tt.toolName, tt.auth, fs, tt.code)
		}
	}
	// And a fully authorised call of each kind passes the catalog.
	for _, tt := range []struct {
		toolName string
		args     map[string]any
	}{
		{"issue_refund", map[string]any{"payment_id": "p", "amount": 10.0, "reason": "damaged"}},
		{"get_customer_profile", map[string]any{"customer_id": "C123456"}},
		{"search_kb", map[string]any{"query": "reset password"}},
	} {
		v, _ := c.Lookup(tt.toolName)
		ev := &route.Event{ProposedArguments: tt.args, EvidenceRefs: approval}
		if fs, _ := Floors(v.Call(nil, ""), ev, route.AuthConfirmed, ArgumentsEnforce); len(fs) != 0 {
			t.Errorf("%s confirmed with a verified approval: %v", tt.toolName, fs)
		}
	}
}

// Without a policy nothing can grant a policy:<ref> approval: defer, even
// for a confirmed call; other approvals are not its business.
func TestUnresolvedApprovalPolicy(t *testing.T) {
	t.Parallel()
	f, ok := UnresolvedApprovalPolicy(&View{ToolID: "t", Approval: "policy:prod"})
	if !ok || f.Code != route.CodeApprovalPolicyUnresolvable || f.Route != route.Defer || !f.Blocking {
		t.Fatalf("got %+v %v", f, ok)
	}
	for _, a := range []string{"auto", "on-mutate", "always"} {
		if _, ok := UnresolvedApprovalPolicy(&View{ToolID: "t", Approval: a}); ok {
			t.Errorf("approval %s: want no finding", a)
		}
	}
}
