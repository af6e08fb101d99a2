package catalog

import (
	"encoding/json"
	"errors"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/gatedhq/gated/internal/opfile"
)

// loader holds the state of one Load.
type loader struct {
	ps         problems
	skills     map[string]file    // SKILL.md by skillKey of its directory
	actions    map[string]*Action // by id
	slugs      map[string]*Action // by registry slug
	actionFile map[string]*Action // ACTION.md actions by absolute file path
	actionList []*Action
	tools      []*toolDef
	views      []*View
	names      map[string]*View
}

func newLoader() *loader {
	return &loader{
		skills:     map[string]file{},
		actions:    map[string]*Action{},
		slugs:      map[string]*Action{},
		actionFile: map[string]*Action{},
		names:      map[string]*View{},
	}
}

func skillKey(root, dir string) string { return root + "\x00" + dir }

// requiresDoc is the requires block of ACTION.md and TOOL.md. A nil list was
// not declared; an empty one was declared empty.
type requiresDoc struct {
	Network []string `json:"network"`
	Secrets []string `json:"secrets"`
	Tools   []string `json:"tools"`
}

// requiresList is one kind of requirement and its entries.
type requiresList struct {
	kind  string
	items []string
}

// lists pairs each requires kind with its list, in a fixed order.
func (r *requiresDoc) lists() []requiresList {
	return []requiresList{{"network", r.Network}, {"secrets", r.Secrets}, {"tools", r.Tools}}
}

// flat renders requires as "<kind>:<item>" strings, the form views carry.
func (r *requiresDoc) flat() []string {
	if r == nil {
		return []string{}
	}
	var out []string
	for _, l := range r.lists() {
		for _, it := range l.items {
			out = append(out, l.kind+":"+it)
		}
	}
	return set(out)
}

type actionDoc struct {
	ID          string       `json:"id"`
	Version     string       `json:"version"`
	Category    string       `json:"category"`
	TargetKind  string       `json:"target_kind"`
	Mutates     []string     `json:"mutates"`
	Requires    *requiresDoc `json:"requires"`
	Approval    string       `json:"approval"`
	RiskLevel   int          `json:"risk_level"`
	FiresEvents []string     `json:"fires_events"`
}

type toolDoc struct {
	ID          string          `json:"id"`
	Version     string          `json:"version"`
	Mutates     []string        `json:"mutates"`
	Requires    *requiresDoc    `json:"requires"`
	Approval    *string         `json:"approval"`
	RiskLevel   *int            `json:"risk_level"`
	FiresEvents []string        `json:"fires_events"`
	Implements  json.RawMessage `json:"implements"`
	Metadata    struct {
		Gated struct {
			Aliases     []string                     `json:"aliases"`
			Rules       []map[string]json.RawMessage `json:"rules"`        // checked by compileRules
			ApprovalTTL string                       `json:"approval_ttl"` // checked by approvalTTL
			Approvers   []string                     `json:"approvers"`
			CommandLine json.RawMessage              `json:"command_line"` // checked by compileCommandLine
		} `json:"gated"`
	} `json:"metadata"`
}

// toolDef is a parsed TOOL.md waiting for its action to be resolved.
type toolDef struct {
	f     file
	doc   toolDoc
	input *opfile.Schema
	rules []*Rule
	line  *CommandLine  // metadata.gated.command_line; nil when not set
	ttl   time.Duration // metadata.gated.approval_ttl; 0 when not set
	// inline is implements.inline as parsed, validated only when the tools
	// are resolved (nil when the tool has none).
	inline   map[string]any
	inlined  *Action // the inline action, once registered
	inlineOK bool    // whether it was valid and registered
}

// parse reads one file into actions, views or pending tools; what is wrong
// with it becomes problems.
func (l *loader) parse(f file) {
	switch f.format {
	case FormatActionMD:
		l.parseActionMD(f)
	case FormatToolMD:
		l.parseToolMD(f)
	case FormatActionsYAML:
		l.parseActionsYAML(f)
	case FormatActionJSON:
		l.parseActionJSON(f)
	}
}

// maxFrontmatterBytes bounds the YAML of one ACTION.md, TOOL.md or
// SKILL.md handed to the parser; the file itself is bounded by limits.
const maxFrontmatterBytes = 256 << 10

// decode validates a parsed document against its format schema and decodes
// it into out; it reports false (after adding problems) when it is invalid.
func (l *loader) decode(f file, sch *opfile.Schema, doc opfile.Doc, out any) bool {
	vs := opfile.Validate(sch, doc.Value, opfile.Message)
	for _, v := range vs {
		l.ps.add(f.path, v.Pointer(), v.Code(), "%s", v.Message)
	}
	if len(vs) > 0 {
		return false
	}
	if err := json.Unmarshal(doc.JSON, out); err != nil {
		l.ps.add(f.path, "", "invalid_type", "%v", err)
		return false
	}
	return true
}

// parsed reports what is wrong when a file did not parse (err != nil).
func (l *loader) parsed(f file, err error) bool {
	if err != nil {
		l.ps.add(f.path, "", opfile.Code(err), "%v", err)
		return false
	}
	return true
}

func (l *loader) parseActionMD(f file) {
	doc, err := opfile.ParseFrontmatter(f.data, maxFrontmatterBytes)
	if !l.parsed(f, err) {
		return
	}
	d := actionDoc{Version: "1.0.0", Approval: approvalAuto}
	if !l.decode(f, actionMDSchema, doc, &d) {
		return
	}
	a := newAction(d, f)
	if l.addAction(a, "/id") {
		l.actionFile[path.Join(f.root, f.rel)] = a
	}
}

// newAction is the action an ACTION.md, or a TOOL.md's inline action,
// declares in f.
func newAction(d actionDoc, f file) *Action {
	a := &Action{
		ID: d.ID, Version: d.Version, Category: d.Category, TargetKind: d.TargetKind,
		RiskLevel: d.RiskLevel, Approval: d.Approval,
		Mutates: set(d.Mutates), Requires: d.Requires.flat(), FiresEvents: set(d.FiresEvents),
		Source: f.rel, Format: f.format, file: f.path,
	}
	if a.TargetKind == "" {
		a.TargetKind, _, _ = strings.Cut(a.ID, ":")
	}
	return a
}

// addAction registers an action by id and registry slug; a clash with an
// earlier one is a problem, reported in the later file.
func (l *loader) addAction(a *Action, field string) bool {
	if prev, dup := l.actions[a.ID]; dup {
		l.ps.add(a.file, field, "duplicate_id", "action %q is already defined in %s", a.ID, prev.file)
		return false
	}
	slug := actionSlug(a.ID)
	if prev, dup := l.slugs[slug]; dup {
		l.ps.add(a.file, field, "duplicate_action_slug", "action %q and action %q (%s) share the registry slug %q", a.ID, prev.ID, prev.file, slug)
		return false
	}
	l.actions[a.ID], l.slugs[slug] = a, a
	l.actionList = append(l.actionList, a)
	return true
}

func (l *loader) parseToolMD(f file) {
	doc, err := opfile.ParseFrontmatter(f.data, maxFrontmatterBytes)
	if !l.parsed(f, err) {
		return
	}
	t := &toolDef{f: f}
	if !l.decode(f, toolMDSchema, doc, &t.doc) {
		return
	}
	t.input = l.compileSchema(f, "/inputs", "input", doc.Value["inputs"])
	t.rules = l.compileRules(f, t.doc.Metadata.Gated.Rules)
	t.line = l.compileCommandLine(f, t.doc.Metadata.Gated.CommandLine)
	l.checkCommandRules(f, t)
	t.ttl = l.approvalTTL(f, t.doc.Metadata.Gated.ApprovalTTL)
	if impl, ok := doc.Value["implements"].(map[string]any); ok {
		t.inline, _ = impl["inline"].(map[string]any)
	}
	l.tools = append(l.tools, t)
}

// The bounds of metadata.gated.approval_ttl: long enough for a person to
// answer, short enough that an approval does not outlive its context.
const (
	MinApprovalTTL = time.Minute
	MaxApprovalTTL = 24 * time.Hour
)

// approvalTTL parses a tool's approval_ttl, a Go duration within
// MinApprovalTTL and MaxApprovalTTL; "" is none (the default applies).
func (l *loader) approvalTTL(f file, s string) time.Duration {
	if s == "" {
		return 0
	}
	const field = "/metadata/gated/approval_ttl"
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		l.ps.add(f.path, field, "invalid_approval_ttl", "approval_ttl %q is not a duration such as 30m or 2h", s)
	case d < MinApprovalTTL || d > MaxApprovalTTL:
		l.ps.add(f.path, field, "invalid_approval_ttl", "approval_ttl %s is outside %s..%s", d, "1m", "24h")
	default:
		return d
	}
	return 0
}

// compileSchema compiles a tool's input or output schema (kind "input" or
// "output" names the problem codes); a schema that does not compile, or
// reaches outside itself, is a problem.
func (l *loader) compileSchema(f file, field, kind string, doc any) *opfile.Schema {
	if doc == nil {
		return nil
	}
	sch, err := opfile.CompileSchema("urn:gated:"+kind+"-schema", doc)
	if err != nil {
		code := kind + "_schema_invalid"
		var le *jsonschema.LoadURLError
		if errors.As(err, &le) {
			code = kind + "_schema_external_ref"
		}
		l.ps.add(f.path, field, code, "%v", err)
		return nil
	}
	return sch
}

type actionsYAMLDoc struct {
	Env     map[string]envDoc `json:"env"`
	Actions []struct {
		Name        string `json:"name"`
		Annotations struct {
			ReadOnlyHint    bool `json:"readOnlyHint"`
			DestructiveHint bool `json:"destructiveHint"`
		} `json:"annotations"`
	} `json:"actions"`
}

// parseActionsYAML imports RFC-001 actions. The annotations are MCP's hints:
// destructive → risk 3; read-only → risk 0, no mutates; neither → risk 2
// with external side effects. Destructive wins when both are set: the
// stricter reading of a contradictory file.
func (l *loader) parseActionsYAML(f file) {
	doc, err := opfile.ParseYAML(f.data)
	if !l.parsed(f, err) {
		return
	}
	var d actionsYAMLDoc
	if !l.decode(f, actionsYAMLSchema, doc, &d) {
		return
	}
	skill := l.skillName(f)
	env := envVars(d.Env)
	items := doc.Value["actions"].([]any)
	for i, a := range d.Actions {
		field := opfile.Pointer("actions", strconv.Itoa(i))
		item := items[i].(map[string]any)
		v := &View{ToolID: a.Name, Approval: approvalAuto, Env: env, Source: f.rel, Format: f.format, file: f.path, nameField: field + "/name"}
		if skill != "" {
			v.ToolID = skill + "/" + a.Name
			v.Aliases = []string{a.Name}
		}
		switch {
		case a.Annotations.DestructiveHint:
			v.RiskLevel, v.Mutates = 3, []string{"external:*"}
		case a.Annotations.ReadOnlyHint:
			v.RiskLevel, v.Mutates = 0, []string{}
		default:
			v.RiskLevel, v.Mutates = 2, []string{"external:*"}
		}
		v.input = l.compileSchema(f, field+"/inputSchema", "input", item["inputSchema"])
		v.output = l.compileSchema(f, field+"/outputSchema", "output", item["outputSchema"])
		var props map[string]any
		if v.input != nil {
			props = inputProperties(item["inputSchema"])
		}
		l.checkCommand(f, field, item["command"], props)
		l.addImported(f, v)
	}
}

// skillName is the owner/skill name from the SKILL.md beside an
// ACTIONS.yaml, or "" when there is none or it is not of that form.
func (l *loader) skillName(f file) string {
	s, ok := l.skills[skillKey(f.root, path.Dir(f.rel))]
	if !ok {
		return ""
	}
	var d struct {
		Name string `json:"name"`
	}
	doc, err := opfile.ParseFrontmatter(s.data, maxFrontmatterBytes)
	if err == nil {
		err = json.Unmarshal(doc.JSON, &d)
	}
	if err != nil {
		l.ps.add(s.path, "/name", "skill_name_unreadable", "the SKILL.md beside %s has no readable name: %v", f.rel, err)
		return ""
	}
	owner, skill, ok := strings.Cut(d.Name, "/")
	if !ok || owner == "" || skill == "" || strings.Contains(skill, "/") {
		return ""
	}
	return d.Name
}

type actionJSONDoc struct {
	Name        string   `json:"name"`
	RiskTier    any      `json:"riskTier"`
	Mutates     []string `json:"mutates"`
	Permissions struct {
		Commands []string `json:"commands"`
	} `json:"permissions"`
	Verification struct {
		Required bool `json:"required"`
	} `json:"verification"`
	Rollback struct {
		Required bool `json:"required"`
	} `json:"rollback"`
}

// parseActionJSON imports an Action API plugin action. R0–R2 map to the same
// risk level, R3 to risk 2 with approval always (R3 never auto-executes);
// R4, a missing tier or one gated does not know never executes.
func (l *loader) parseActionJSON(f file) {
	doc, err := opfile.ParseJSON(f.data)
	if !l.parsed(f, err) {
		return
	}
	var d actionJSONDoc
	if !l.decode(f, actionJSONSchema, doc, &d) {
		return
	}
	v := &View{ToolID: d.Name, Approval: approvalAuto, Mutates: append([]string{}, d.Mutates...), Source: f.rel, Format: f.format, file: f.path, nameField: "/name"}
	tier, _ := d.RiskTier.(string)
	switch tier {
	case "R0":
		v.RiskLevel = 0
	case "R1":
		v.RiskLevel = 1
	case "R2":
		v.RiskLevel = 2
	case "R3":
		v.RiskLevel, v.Approval = 2, approvalAlways
	default:
		tier = "R4"
		v.RiskLevel, v.Approval, v.NeverExecute = 3, approvalAlways, true
	}
	v.RiskTier = tier
	v.input = l.compileSchema(f, "/inputSchema", "input", doc.Value["inputSchema"])
	v.output = l.compileSchema(f, "/outputSchema", "output", doc.Value["outputSchema"])
	v.plugin = &plugin{
		commands:             argvs(d.Permissions.Commands),
		fileInputs:           fileProperties(doc.Value["inputSchema"]),
		verificationRequired: d.Verification.Required,
		rollbackRequired:     d.Rollback.Required,
		writeLike:            pluginWriteLike(tier, d.Mutates, doc.Value["permissions"]),
	}
	if core, ok := l.coreName(d.Name); ok {
		l.ps.add(f.path, "/name", "plugin_overrides_core_action",
			"plugin action %q has the name of core %s; plugin actions cannot override core actions", d.Name, core)
		return
	}
	l.addImported(f, v)
}

// coreName reports which core definition (an ACTION.md, TOOL.md or
// ACTIONS.yaml entry, parsed before any action.json) already claims name as
// an action id or a tool name.
func (l *loader) coreName(name string) (string, bool) {
	if a, ok := l.actions[name]; ok && a.Format != FormatActionJSON {
		return "action " + a.Source, true
	}
	for _, v := range l.views {
		if v.Format != FormatActionJSON && (v.ToolID == name || slices.Contains(v.Aliases, name)) {
			return "tool " + v.Source, true
		}
	}
	for _, t := range l.tools {
		if t.doc.ID == name || slices.Contains(t.doc.Metadata.Gated.Aliases, name) {
			return "tool " + t.f.rel, true
		}
	}
	return "", false
}

// addImported registers an ACTIONS.yaml or action.json entry, which is both
// a callable tool and the action it performs.
func (l *loader) addImported(f file, v *View) {
	v.ActionID = v.ToolID
	v.Requires, v.FiresEvents = []string{}, []string{}
	v.InputSchema, v.OutputSchema = v.input != nil, v.output != nil
	a := &Action{
		ID: v.ActionID, RiskLevel: v.RiskLevel, Approval: v.Approval,
		Mutates: v.Mutates, Requires: v.Requires, FiresEvents: v.FiresEvents,
		Source: f.rel, Format: f.format, file: f.path,
	}
	if l.addAction(a, v.nameField) {
		l.views = append(l.views, v)
	}
}
