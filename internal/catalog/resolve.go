package catalog

import (
	"encoding/json"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/gatedhq/gated/internal/opfile"
)

// Approval classes.
const (
	approvalAuto         = "auto"
	approvalOnMutate     = "on-mutate"
	approvalAlways       = "always"
	approvalPolicyPrefix = "policy:"
)

// approvalRank orders the fixed classes from least to most restrictive:
// auto < on-mutate < always. (The AIPs write the narrowing chain as
// "auto → always → on-mutate" without a rank; on-mutate asks only when the
// tool mutates, always asks every time, so always is the tighter one.)
var approvalRank = map[string]int{approvalAuto: 0, approvalOnMutate: 1, approvalAlways: 2}

// approvalNarrows reports whether an implementor's approval keeps the
// action's floor. A policy:<ref> floor can only be tightened to always: any
// other class, or another policy, could let through what the named policy
// would hold. A tool may hand an auto action to a policy, since a policy
// can only ask for more than nothing.
func approvalNarrows(floor, got string) bool {
	if got == floor {
		return true
	}
	_, floorIsPolicy := strings.CutPrefix(floor, approvalPolicyPrefix)
	_, gotIsPolicy := strings.CutPrefix(got, approvalPolicyPrefix)
	switch {
	case floorIsPolicy:
		return got == approvalAlways
	case gotIsPolicy:
		return floor == approvalAuto
	}
	return approvalRank[got] >= approvalRank[floor]
}

// actionSlug is an action id as a registry ref writes it: ':' becomes '-'.
func actionSlug(id string) string { return strings.ReplaceAll(id, ":", "-") }

// registrySlug returns the slug of a registry ref "@owner/library/…/slug".
func registrySlug(ref string) (string, bool) {
	if !strings.HasPrefix(ref, "@") {
		return "", false
	}
	parts := strings.Split(ref[1:], "/")
	if len(parts) < 3 || slices.Contains(parts, "") {
		return "", true // a registry ref, but a malformed one: resolves to nothing
	}
	return parts[len(parts)-1], true
}

// set sorts and de-duplicates, and never returns nil (views serialise lists
// as [] rather than null).
func set(items []string) []string {
	out := slices.Clone(items)
	slices.Sort(out)
	out = slices.Compact(out)
	if out == nil {
		out = []string{}
	}
	return out
}

// missing returns the floor entries absent from got.
func missing(floor, got []string) []string {
	var out []string
	for _, f := range floor {
		if !slices.Contains(got, f) {
			out = append(out, f)
		}
	}
	return out
}

// resolveTools joins every TOOL.md to the action it implements and builds
// its view, rejecting any widening of the action's floors. Inline actions
// are registered first, so that a ref naming one is told what it is.
func (l *loader) resolveTools() {
	for _, t := range l.tools {
		if t.inline != nil {
			t.inlined, t.inlineOK = l.inlineAction(t)
		}
	}
	for _, t := range l.tools {
		a, ok := l.implemented(t)
		if !ok {
			continue
		}
		if v, ok := l.merge(t, a); ok {
			l.views = append(l.views, v)
		}
	}
}

// inlineField is where a TOOL.md's inline action sits.
const inlineField = "/implements/inline"

// inlineAction validates a tool's inline action as an ACTION.md and
// registers it in the catalog's action index, where POLICY.md grants find
// it. Tools may inline the same id only with the same content; an id an
// ACTION.md (or an imported action) already has is a duplicate.
func (l *loader) inlineAction(t *toolDef) (*Action, bool) {
	p := t.f.path
	doc := maps.Clone(t.inline)
	if _, ok := doc["schema"]; !ok {
		// AIP-39's own inline example has no schema marker: the TOOL.md
		// around it already says what it is.
		doc["schema"] = "action/v1"
	}
	vs := opfile.Validate(actionMDSchema, doc, opfile.Message)
	for _, v := range vs {
		l.ps.add(p, inlineField+v.Pointer(), v.Code(), "inline action: %s", v.Message)
	}
	if len(vs) > 0 {
		return nil, false
	}
	d := actionDoc{Version: "1.0.0", Approval: approvalAuto}
	raw, err := json.Marshal(doc)
	if err == nil {
		err = json.Unmarshal(raw, &d)
	}
	if err != nil {
		l.ps.add(p, inlineField, "invalid_type", "inline action: %v", err)
		return nil, false
	}
	a := newAction(d, t.f)
	if prev, ok := l.actions[a.ID]; ok && prev.Format == FormatToolMD {
		if !prev.sameContent(a) {
			l.ps.add(p, inlineField+"/id", "inline_action_conflict", "inline action %q differs from the one %s inlines under the same id; tools may share an inline action only with identical content", a.ID, prev.file)
			return nil, false
		}
		return prev, true
	}
	if !l.addAction(a, inlineField+"/id") {
		return nil, false
	}
	return a, true
}

// sameContent reports whether two actions declare the same thing, wherever
// they are declared.
func (a *Action) sameContent(b *Action) bool {
	return a.ID == b.ID && a.Version == b.Version && a.Category == b.Category && a.TargetKind == b.TargetKind &&
		a.RiskLevel == b.RiskLevel && a.Approval == b.Approval && slices.Equal(a.Mutates, b.Mutates) &&
		slices.Equal(a.Requires, b.Requires) && slices.Equal(a.FiresEvents, b.FiresEvents)
}

// implemented resolves a tool's implements ref, and checks the version
// range it pins the action to. A tool without one is an orphan: valid, but
// tied to no action.
func (l *loader) implemented(t *toolDef) (*Action, bool) {
	if t.inline != nil {
		return t.inlined, t.inlineOK
	}
	raw := t.doc.Implements
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	var ref struct {
		Ref     string `json:"ref"`
		File    string `json:"file"`
		Version string `json:"version"`
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		// The schema admits only a string or an object of one form.
		_ = json.Unmarshal(raw, &ref)
	}
	pin := versionPin{text: ref.Version, field: "/implements/version", given: ref.Version != ""}
	if ref.Ref != "" {
		s = ref.Ref
	}
	var a *Action
	var ok bool
	switch {
	case ref.File != "":
		a, ok = l.byFile(t, "/implements/file", ref.File)
	case ref.Ref == "" && isFileRef(s):
		a, ok = l.byFile(t, "/implements", s)
	default:
		id, suffix, pinned := cutVersionSuffix(s)
		if pinned && pin.given {
			l.ps.add(t.f.path, "/implements", "action_pin_ambiguous", "%q pins a version with its @ suffix and version pins %q too; give one", s, pin.text)
			return nil, false
		}
		if pinned {
			pin = versionPin{text: suffix, field: "/implements", given: true}
		}
		a, ok = l.byRef(t, id)
	}
	pinOK := !pin.given || l.parsePin(t, &pin)
	if !ok || !pinOK || !pin.given {
		return a, ok && pinOK
	}
	return a, l.checkPin(t, a, pin)
}

// isFileRef reports whether an implements string is a catalog path rather
// than an action id or registry ref.
func isFileRef(s string) bool {
	return strings.HasPrefix(s, ".") || strings.HasPrefix(s, "/") || (strings.Contains(s, "/") && !strings.HasPrefix(s, "@"))
}

// byRef resolves a bare action id or a registry ref.
func (l *loader) byRef(t *toolDef, s string) (*Action, bool) {
	p := t.f.path
	var a *Action
	slug, isRegistry := registrySlug(s)
	if isRegistry && slug != "" {
		a = l.slugs[slug]
	} else if !isRegistry {
		a = l.actions[s]
	}
	switch {
	case a != nil && a.Format == FormatToolMD:
		l.ps.add(p, "/implements", "action_ref_unresolvable", "%q names the action %s inlines; an inline action belongs to the tools that declare it, so put it in an ACTION.md to share it", s, a.file)
		return nil, false
	case a != nil:
		return a, true
	case isRegistry:
		l.ps.add(p, "/implements", "action_ref_unresolvable", "no loaded action has the registry slug of %q (the last path segment must be an action id with ':' written as '-')", s)
		return nil, false
	}
	l.ps.add(p, "/implements", "action_ref_unresolvable", "no loaded action has the id %q", s)
	return nil, false
}

// versionPin is the semver range a tool binds its action under (AIP-14's
// implements[].version), and the field it was written in.
type versionPin struct {
	text, field string
	given       bool // an empty @ suffix is a pin too, and a malformed one
	constraint  *semver.Constraints
}

// cutVersionSuffix splits the "@<range>" the AIPs write after an action id
// or registry ref ("@acme/actions/storage-commit@2.0.0"). The leading @ of a
// registry ref is not a suffix; ids and slugs cannot hold an @.
func cutVersionSuffix(s string) (ref, version string, ok bool) {
	i := strings.LastIndex(s, "@")
	if i <= 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

// parsePin compiles a pin's range; a range that does not parse is a load
// error whether or not the action resolves.
func (l *loader) parsePin(t *toolDef, pin *versionPin) bool {
	c, err := semver.NewConstraint(pin.text)
	if err != nil {
		l.ps.add(t.f.path, pin.field, "invalid_version_range", "version range %q does not parse (write ^1.2, ~1.2.3, 1.2.3 or 1.x): %v", pin.text, err)
		return false
	}
	pin.constraint = c
	return true
}

// checkPin refuses the bind when the action's version is outside the pin:
// AIP-39's "resolution to a newer major MUST refuse the bind until the
// implementor explicitly upgrades", and likewise for an older one.
func (l *loader) checkPin(t *toolDef, a *Action, pin versionPin) bool {
	v, err := semver.NewVersion(a.Version)
	if err != nil {
		l.ps.add(t.f.path, pin.field, "action_version_mismatch", "action %s (%s) declares no semantic version, so the pin %q cannot be checked", a.ID, a.file, pin.text)
		return false
	}
	if pin.constraint.Check(v) {
		return true
	}
	l.ps.add(t.f.path, pin.field, "action_version_mismatch", "action %s (%s) is version %s, outside the pinned range %q; the tool binds another version only once its pin is updated", a.ID, a.file, a.Version, pin.text)
	return false
}

// byFile resolves a catalog-relative path to a loaded ACTION.md: the file
// itself, or a directory holding an ACTION.md. The path is relative to the
// catalog directory (the AIPs' workspace) and may not leave it.
func (l *loader) byFile(t *toolDef, field, ref string) (*Action, bool) {
	p := t.f.path
	if filepath.IsAbs(ref) || strings.HasPrefix(ref, "/") {
		l.ps.add(p, field, "action_ref_escapes_catalog", "%q is absolute; a file ref is relative to the catalog directory", ref)
		return nil, false
	}
	clean := path.Clean(filepath.ToSlash(ref))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		l.ps.add(p, field, "action_ref_escapes_catalog", "%q points outside the catalog directory", ref)
		return nil, false
	}
	target := path.Join(t.f.root, clean)
	for _, candidate := range []string{target, path.Join(target, "ACTION.md")} {
		if a, ok := l.actionFile[candidate]; ok {
			return a, true
		}
	}
	l.ps.add(p, field, "action_ref_unresolvable", "no valid ACTION.md at %q in the catalog directory", ref)
	return nil, false
}

// merge builds a tool's view on top of its action's floors. A tool may raise
// risk_level, add mutates, requires and fires_events, and tighten approval;
// declaring less than the action is an error naming the field.
func (l *loader) merge(t *toolDef, a *Action) (*View, bool) {
	d, p := &t.doc, t.f.path
	v := &View{
		ToolID: d.ID, Version: d.Version, Approval: approvalAuto,
		Aliases: set(d.Metadata.Gated.Aliases), Source: t.f.rel, Format: t.f.format, file: p, nameField: "/id",
		InputSchema: t.input != nil, input: t.input, Rules: t.rules, CommandLine: t.line,
		approvalTTL: t.ttl,
	}
	if len(v.Aliases) == 0 {
		v.Aliases = nil
	}
	if t.ttl > 0 {
		v.ApprovalTTL = d.Metadata.Gated.ApprovalTTL
	}
	if len(d.Metadata.Gated.Approvers) > 0 {
		v.Approvers = set(d.Metadata.Gated.Approvers)
	}
	var floorMutates, floorRequires, floorEvents []string
	if a != nil {
		v.ActionID, v.ActionVersion = a.ID, a.Version
		v.RiskLevel, v.Approval = a.RiskLevel, a.Approval
		floorMutates, floorRequires, floorEvents = a.Mutates, a.Requires, a.FiresEvents
	}
	ok := true
	if d.RiskLevel != nil {
		if *d.RiskLevel < v.RiskLevel {
			l.ps.add(p, "/risk_level", "widens_risk_level", "risk_level %d is below the %d of action %s; a tool may only raise it", *d.RiskLevel, v.RiskLevel, a.ID)
			ok = false
		}
		v.RiskLevel = max(v.RiskLevel, *d.RiskLevel)
	}
	if d.Approval != nil {
		if !approvalNarrows(v.Approval, *d.Approval) {
			l.ps.add(p, "/approval", "relaxes_approval", "approval %q relaxes %q of action %s (order: auto < on-mutate < always; policy:<ref> may only become always)", *d.Approval, v.Approval, a.ID)
			ok = false
		}
		v.Approval = *d.Approval
	}
	if d.Mutates != nil {
		if m := missing(floorMutates, d.Mutates); len(m) > 0 {
			l.ps.add(p, "/mutates", "drops_mutates", "mutates leaves out %s of action %s; a tool may only add entries", strings.Join(m, ", "), a.ID)
			ok = false
		}
	}
	if d.Requires != nil {
		for _, rl := range d.Requires.lists() {
			if rl.items == nil {
				continue
			}
			var floor []string
			for _, r := range floorRequires {
				if k, item, _ := strings.Cut(r, ":"); k == rl.kind {
					floor = append(floor, item)
				}
			}
			if m := missing(floor, rl.items); len(m) > 0 {
				l.ps.add(p, "/requires/"+rl.kind, "drops_requires", "requires.%s leaves out %s of action %s; a tool may only add entries", rl.kind, strings.Join(m, ", "), a.ID)
				ok = false
			}
		}
	}
	if d.FiresEvents != nil {
		if m := missing(floorEvents, d.FiresEvents); len(m) > 0 {
			l.ps.add(p, "/fires_events", "drops_fires_events", "fires_events leaves out %s of action %s; a tool may only add events", strings.Join(m, ", "), a.ID)
			ok = false
		}
	}
	v.Mutates = set(append(slices.Clone(floorMutates), d.Mutates...))
	v.Requires = set(append(slices.Clone(floorRequires), d.Requires.flat()...))
	v.FiresEvents = set(append(slices.Clone(floorEvents), d.FiresEvents...))
	return v, ok
}

// index maps every name an event may use to its view; a name claimed twice
// is ambiguous and a load error.
func (l *loader) index() {
	for _, v := range l.views {
		for _, name := range append([]string{v.ToolID}, v.Aliases...) {
			prev, dup := l.names[name]
			switch {
			case !dup:
				l.names[name] = v
			case prev != v:
				field := v.nameField
				if v.Format == FormatToolMD && name != v.ToolID {
					field = "/metadata/gated/aliases"
				}
				l.ps.add(v.file, field, "ambiguous_tool_name", "tool name %q matches both %s (%s) and %s (%s)", name, prev.ToolID, prev.Source, v.ToolID, v.Source)
			}
		}
	}
}
