package coverage

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/opfile"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/testtree"
)

// fixture is a catalog of two file tools and a policy over them. The
// cases below leave exactly one item of each kind unexercised: the idle
// bot's grant, the no_tmp rule, files.delete's approval floor and the
// custom rule for huge files.
var fixture = map[string]string{
	"catalog/actions/write.ACTION.md":  "---\nschema: action/v1\nid: \"files:write\"\ndescription: write a file\ncategory: storage\nmutates: [\"storage:files\"]\nrisk_level: 2\napproval: auto\n---\n",
	"catalog/actions/delete.ACTION.md": "---\nschema: action/v1\nid: \"files:delete\"\ndescription: delete a file\ncategory: storage\nmutates: [\"storage:files\"]\nrisk_level: 3\napproval: always\n---\n",
	"catalog/tools/write/TOOL.md": `---
name: Write file
id: files.write
description: write a file
version: 1.0.0
implements: "files:write"
inputs: {type: object}
outputs: {type: object}
metadata:
  gated:
    aliases: [write_file]
    rules:
      - {code: no_secrets, pointer: /path, glob: ['@secrets'], route: refuse}
      - {code: no_tmp, pointer: /path, prefix: ['/tmp/'], route: ask}
---
`,
	"catalog/tools/delete/TOOL.md": "---\nname: Delete file\nid: files.delete\ndescription: delete a file\nversion: 1.0.0\nimplements: \"files:delete\"\ninputs: {type: object}\noutputs: {type: object}\nmetadata: {gated: {aliases: [delete_file]}}\n---\n",
	"policy/POLICY.md": `---
schema: policy/v1
id: "@t/files"
version: 1.0.0
grants:
  - principal: "bot://writer"
    actions: [{action: "files:write"}]
  - principal: "bot://deleter"
    actions: [{action: "files:delete"}]
  - principal: "bot://idle"
    actions: [{action: "files:write"}]
---

## Description
`,
	"policy/files.rego": `package gated.custom.files

findings contains {"code": "delete_noted", "route": "ask", "blocking": false, "message": "a delete"} if {
	input.action_id == "files:delete"
}

findings contains {"code": "huge_file", "route": "ask", "blocking": true, "message": "a huge file"} if {
	input.action_id == "files:write"
	count(input.event.proposed_arguments.content) > 1000000
}
`,
}

// The cases: the writer writes a secret file unconfirmed (no_secrets
// refuses; the risk floor asks, below the route), then a plain file
// authenticated, not confirmed (the risk floor asks, as the contract
// does: the route it sets); the deleter
// deletes, confirmed but without a verified approval (the irreversible
// floor defers); a stranger writes (no grant names it). Only routes are
// checked: the cases are here to be observed.
const caseFile = `cases:
  - name: a secret file
    principals: ["bot://writer"]
    now: 2026-05-04T16:00:00Z
    event: {tool_name: write_file, tool_category: write, authorization_state: validated, proposed_arguments: {path: /home/u/.env, content: x}, evidence_refs: [], risk_domain: devops, recommended_route: accept}
    expect: {route: refuse}
  - name: a plain file
    principals: ["bot://writer"]
    now: 2026-05-04T16:00:00Z
    event: {tool_name: write_file, tool_category: write, authorization_state: authenticated, proposed_arguments: {path: /home/u/a.txt, content: x}, evidence_refs: [{source_id: "idp:login", kind: auth_event, trust_tier: verified, redaction_status: redacted, retrieved_at: "2026-05-04T15:55:00Z", freshness: {status: fresh}, provenance: idp}], risk_domain: devops, recommended_route: accept}
    expect: {route: ask}
  - name: a delete
    principals: ["bot://deleter"]
    now: 2026-05-04T16:00:00Z
    event: {tool_name: delete_file, tool_category: write, authorization_state: confirmed, evidence_refs: [{source_id: "approval:x", kind: approval, trust_tier: user_claimed, redaction_status: redacted, freshness: {status: fresh}, provenance: helpdesk}], proposed_arguments: {path: /home/u/a.txt}, risk_domain: devops, recommended_route: accept}
    expect: {route: defer}
  - name: a stranger
    principals: ["bot://stranger"]
    now: 2026-05-04T16:00:00Z
    event: {tool_name: write_file, tool_category: write, authorization_state: confirmed, proposed_arguments: {path: /home/u/a.txt, content: x}, evidence_refs: [], risk_domain: devops, recommended_route: accept}
    expect: {route: refuse}
`

type run struct {
	dir  string
	cat  *catalog.Catalog
	set  *policy.Set
	rego *policy.RegoCoverage
	cov  *Collector
}

func load(t *testing.T) *run {
	t.Helper()
	r := &run{dir: testtree.Write(t, t.TempDir(), fixture), rego: policy.NewRegoCoverage()}
	var err error
	if r.cat, err = catalog.Load([]string{filepath.Join(r.dir, "catalog")}); err != nil {
		t.Fatal(err)
	}
	if r.set, err = policy.Load([]string{filepath.Join(r.dir, "policy")}, r.cat, policy.WithRegoCoverage(r.rego), policy.WithEvalBudget(time.Minute)); err != nil {
		t.Fatal(err)
	}
	r.cov = New(r.cat, r.set, r.rego)
	return r
}

// decide decides the named cases of caseFile and observes them.
func (r *run) decide(t *testing.T, names ...string) {
	t.Helper()
	var f struct{ Cases []map[string]any }
	if err := opfile.DecodeYAML([]byte(caseFile), &f); err != nil {
		t.Fatal(err)
	}
	for _, c := range f.Cases {
		if !slices.Contains(names, c["name"].(string)) {
			continue
		}
		now, _ := time.Parse(time.RFC3339, c["now"].(string))
		var principals []string
		for _, p := range c["principals"].([]any) {
			principals = append(principals, p.(string))
		}
		e := gate.New(gate.WithClock(func() time.Time { return now }),
			gate.WithCatalog(func() *catalog.Catalog { return r.cat }, gate.UnknownDefer, catalog.ArgumentsEnforce),
			gate.WithPolicy(func() *policy.Set { return r.set }, policy.NewLimiter()))
		d := e.Decide(context.Background(), gate.Request{Event: c["event"].(map[string]any), Principals: principals})
		want := c["expect"].(map[string]any)
		if d.Route.String() != want["route"] {
			t.Fatalf("case %q: route %s %v, want %v", c["name"], d.Route, d.HardBlockers, want)
		}
		r.cov.Observe(d)
	}
}

// unexercised names the items no case exercised, one short string each.
func unexercised(rep Report) []string {
	var out []string
	for _, it := range rep.Items {
		if !it.Exercised {
			out = append(out, it.short())
		}
	}
	return out
}

func (it Item) short() string {
	switch it.Kind {
	case KindGrant:
		return "grant " + it.Principal
	case KindCustomRule:
		return "custom_rule " + it.Rule + " " + filepath.Base(it.File) + ":" + strconv.Itoa(it.Line)
	}
	return it.Kind + " " + it.Tool + " " + it.Code
}

func TestCoverageListsWhatNoCaseExercised(t *testing.T) {
	t.Parallel()
	r := load(t)
	before := unexercised(r.cov.Report())
	if len(before) != 10 {
		t.Fatalf("before any case, %d items unexercised, want all 10: %v", len(before), before)
	}
	r.decide(t, "a secret file")
	// The risk floor fired below the refusal: it did not set the route.
	if got := unexercised(r.cov.Report()); !slices.Contains(got, "floor files.write risk_level_requires_confirmation") ||
		slices.Contains(got, "argument_rule files.write no_secrets") || slices.Contains(got, "grant bot://writer") {
		t.Fatalf("after the secret file: unexercised %v", got)
	}
	r.decide(t, "a plain file", "a delete", "a stranger")
	rep := r.cov.Report()
	want := []string{
		"grant bot://idle",
		"floor files.delete approval_required",
		"argument_rule files.write no_tmp",
		"custom_rule gated.custom.files.findings files.rego:7",
	}
	if got := unexercised(rep); !slices.Equal(got, want) {
		t.Errorf("unexercised %v, want %v", got, want)
	}
	if rep.Total != 10 || rep.Exercised != 6 || rep.Percent != 60 {
		t.Errorf("total %d exercised %d percent %v, want 10, 6, 60", rep.Total, rep.Exercised, rep.Percent)
	}
	for _, min := range []float64{0, 50, 60} {
		if rep.Below(min) {
			t.Errorf("6 of 10 is below %v", min)
		}
	}
	for _, min := range []float64{60.01, 61, 100} {
		if !rep.Below(min) {
			t.Errorf("6 of 10 is not below %v", min)
		}
	}
}

func TestCoverageText(t *testing.T) {
	t.Parallel()
	r := load(t)
	r.decide(t, "a secret file", "a plain file", "a delete", "a stranger")
	var out bytes.Buffer
	r.cov.Report().WriteText(&out)
	text := out.String()
	for _, want := range []string{
		"coverage: 6 of 10 items exercised (60.0%)\n",
		"  grants          2 of 3\n  argument rules  1 of 2\n  floors          2 of 3\n  custom rules    1 of 2\n",
		"not exercised:\n",
		"  grant         " + filepath.Join(r.dir, "policy", "POLICY.md") + ": @t/files grant 2 (bot://idle: files:write)\n",
		"  argument rule tools/write/TOOL.md: tool files.write rule no_tmp\n",
		"  floor         tools/delete/TOOL.md: tool files.delete approval_required\n",
		"  custom rule   " + filepath.Join(r.dir, "policy", "files.rego") + ":7: gated.custom.files.findings\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if n := strings.Count(text, "\n  "); n != 4+4 {
		t.Errorf("%d indented lines, want 4 kinds and 4 items:\n%s", n, text)
	}
}

// TestCoverageJSON pins the report's shape, which docs/policy.md shows.
func TestCoverageJSON(t *testing.T) {
	t.Parallel()
	r := load(t)
	r.decide(t, "a secret file", "a plain file", "a delete", "a stranger")
	b, err := json.Marshal(r.cov.Report())
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Total, Exercised int
		Percent          float64
		Items            []map[string]any
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Total != 10 || got.Exercised != 6 || got.Percent != 60 || len(got.Items) != 10 {
		t.Fatalf("report %s", b)
	}
	keys := map[string][]string{}
	for _, it := range got.Items {
		var ks []string
		for k := range it {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		keys[it["kind"].(string)] = ks
	}
	want := map[string][]string{
		KindGrant:        {"actions", "exercised", "file", "grant", "kind", "policy", "principal"},
		KindArgumentRule: {"code", "exercised", "file", "kind", "tool"},
		KindFloor:        {"code", "exercised", "file", "kind", "tool"},
		KindCustomRule:   {"exercised", "file", "kind", "line", "rule"},
	}
	for k, w := range want {
		if !slices.Equal(keys[k], w) {
			t.Errorf("%s item has keys %v, want %v", k, keys[k], w)
		}
	}
	if g := got.Items[0]; g["grant"] != 0.0 || g["policy"] != "@t/files" || g["exercised"] != true {
		t.Errorf("first grant %v: the index 0 must be there", g)
	}
}

// With nothing to cover the report is complete, and no threshold fails.
func TestCoverageOfNothing(t *testing.T) {
	t.Parallel()
	rep := New(nil, nil, nil).Report()
	if rep.Total != 0 || rep.Percent != 100 || rep.Below(100) || rep.Items == nil {
		t.Errorf("empty report %+v", rep)
	}
}
