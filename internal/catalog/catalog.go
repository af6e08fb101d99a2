// Package catalog is gated's knowledge of the tools it guards. Operators
// describe actions and tools in the agentproto and related formats
// (ACTION.md, TOOL.md, ACTIONS.yaml, action.json); Load validates and
// resolves them into immutable views, and each event's tool_name is joined
// to a view whose risk level, approval class and input schema become floors
// on the route. Loading reads files and nothing else: no network, ever.
package catalog

import (
	"strings"
	"time"

	"github.com/gatedhq/gated/internal/bundle"
	"github.com/gatedhq/gated/internal/opfile"
	"github.com/gatedhq/gated/internal/route"
)

// Format names, as they appear in View.Format.
const (
	FormatActionMD    = "action.md"
	FormatToolMD      = "tool.md"
	FormatActionsYAML = "actions.yaml"
	FormatActionJSON  = "action.json"
)

// Catalog is a loaded, fully resolved catalog. It is immutable: a reload
// builds a new one.
type Catalog struct {
	byName   map[string]*View
	views    []*View
	actions  []*Action
	byID     map[string]*Action
	bySlug   map[string]*Action
	revision string
	origin   *bundle.Origin // nil when loaded from directories
}

// View is the resolved description of one callable tool: what the event's
// tool_name is joined to. It is the decision envelope's `action` block.
// Views are shared by every decision and must not be modified.
type View struct {
	ToolID        string   `json:"tool_id"`
	ActionID      string   `json:"action_id,omitempty"` // empty for a TOOL.md that implements no action
	Version       string   `json:"version,omitempty"`
	ActionVersion string   `json:"action_version,omitempty"`
	RiskLevel     int      `json:"risk_level"`
	Approval      string   `json:"approval"`
	Mutates       []string `json:"mutates"`
	Requires      []string `json:"requires"` // "network:<host>", "secrets:<slug>", "tools:<id>"
	FiresEvents   []string `json:"fires_events"`
	NeverExecute  bool     `json:"never_execute,omitempty"` // action.json R4, or a missing or unknown tier
	RiskTier      string   `json:"risk_tier,omitempty"`     // action.json only: the tier gated applied
	Aliases       []string `json:"aliases,omitempty"`       // other tool_name values that match
	Env           []EnvVar `json:"env,omitempty"`           // ACTIONS.yaml only: names, never values
	Source        string   `json:"source"`                  // path relative to its catalog directory
	Format        string   `json:"format"`
	InputSchema   bool     `json:"input_schema"`            // whether proposed_arguments are validated
	OutputSchema  bool     `json:"output_schema,omitempty"` // whether reported outputs are checked (OutputConforms)
	Rules         []*Rule  `json:"rules,omitempty"`         // TOOL.md argument rules (rules.go), read-only
	// CommandLine is TOOL.md's metadata.gated.command_line (commands.go):
	// where the tool's command line is, for command rules and reads.
	CommandLine *CommandLine `json:"command_line,omitempty"`
	// ApprovalTTL is TOOL.md's metadata.gated.approval_ttl as written: how
	// long an approval of a call to this tool stays open (ApprovalExpiry).
	ApprovalTTL string `json:"approval_ttl,omitempty"`
	// Approvers is TOOL.md's metadata.gated.approvers: principals of which
	// an approver's token must hold one. Empty: any token with scope approve.
	Approvers []string `json:"approvers,omitempty"`

	approvalTTL time.Duration
	input       *opfile.Schema
	output      *opfile.Schema
	plugin      *plugin // action.json only
	file        string  // the path problems name
	nameField   string  // the field its tool_id comes from, for problems
}

// Action is a resolved action: an ACTION.md, or the action an ACTIONS.yaml
// entry or action.json declares about itself. POLICY.md grants name these.
type Action struct {
	ID          string   `json:"id"`
	Version     string   `json:"version,omitempty"`
	Category    string   `json:"category,omitempty"`
	TargetKind  string   `json:"target_kind,omitempty"`
	RiskLevel   int      `json:"risk_level"`
	Approval    string   `json:"approval"`
	Mutates     []string `json:"mutates"`
	Requires    []string `json:"requires"`
	FiresEvents []string `json:"fires_events"`
	Source      string   `json:"source"`
	Format      string   `json:"format"`

	file string // the path problems name
}

// Lookup returns the view an event's tool_name matches, by exact name: a
// TOOL.md id or alias, an ACTIONS.yaml name or owner/skill/name, an
// action.json name.
func (c *Catalog) Lookup(toolName string) (*View, bool) {
	v, ok := c.byName[toolName]
	return v, ok
}

// Revision is a content hash of every file loaded ("sha256:<hex>"); the same
// files give the same revision on every load.
func (c *Catalog) Revision() string { return c.revision }

// SetOrigin records the bundle the catalog was composed from. It is for
// the loader, before the catalog is published: a catalog is immutable
// once in use.
func (c *Catalog) SetOrigin(o *bundle.Origin) { c.origin = o }

// Origin is the bundle the catalog was composed from, nil when it was
// loaded from directories.
func (c *Catalog) Origin() *bundle.Origin { return c.origin }

// Len is the number of views (callable tools).
func (c *Catalog) Len() int { return len(c.views) }

// Views returns every view, sorted by tool id. The slice is the caller's;
// the views are shared.
func (c *Catalog) Views() []*View { return append([]*View{}, c.views...) }

// Actions returns every action, sorted by id: an empty list, not nil, for
// a catalog of TOOL.md files only, which GET /v1/catalog shows as [].
func (c *Catalog) Actions() []*Action { return append([]*Action{}, c.actions...) }

// ResolveActionRef maps an action reference to an action id: a bare id
// ("storage:commit") or a registry ref ("@owner/library/storage-commit",
// matched on its last segment, the id with ':' written as '-').
func (c *Catalog) ResolveActionRef(ref string) (string, bool) {
	var a *Action
	if slug, isRegistry := registrySlug(ref); isRegistry {
		a = c.bySlug[slug]
	} else {
		a = c.byID[ref]
	}
	if a == nil {
		return "", false
	}
	return a.ID, true
}

// PolicyRef returns <ref> when the view's approval is "policy:<ref>": the
// policy package decides those.
func (v *View) PolicyRef() (string, bool) {
	if ref, ok := strings.CutPrefix(v.Approval, approvalPolicyPrefix); ok {
		return ref, true
	}
	return "", false
}

// ApprovalExpiry is how long an approval of a call to this tool stays
// open, or 0 when the catalog sets none (the default applies).
func (v *View) ApprovalExpiry() time.Duration {
	if v == nil {
		return 0
	}
	return v.approvalTTL
}

// Category is the consequence class the catalog implies: a write when the
// tool mutates anything or has risk_level 1 or more, a private read
// otherwise (the catalog cannot tell a public read; the contract's rules do).
// An action.json's R1 is a read when what it declares changes nothing
// (pluginWriteLike): the LTS tier alone does not say it writes. Its R2 and
// R3 stay writes, as risk_level 2 is external side effects.
func (v *View) Category() route.Category {
	level := v.RiskLevel >= 1
	if v.plugin != nil {
		level = v.RiskLevel >= 2 || v.plugin.writeLike
	}
	if len(v.Mutates) > 0 || level || v.NeverExecute {
		return route.Write
	}
	return route.PrivateRead
}

// Document is what GET /v1/catalog returns.
type Document struct {
	Revision        string         `json:"revision"`
	Bundle          *bundle.Origin `json:"bundle,omitempty"`
	Tools           []*View        `json:"tools"`
	Actions         []*Action      `json:"actions"`
	LastReloadError *ReloadError   `json:"last_reload_error,omitempty"`
}

// ReloadError is a failed reload, kept beside the catalog still in use.
type ReloadError = opfile.ReloadError

// Document describes the catalog; lastErr and at are the reloader's
// LastError (nil when the last reload succeeded).
func (c *Catalog) Document(lastErr error, at time.Time) Document {
	return Document{Revision: c.revision, Bundle: c.origin, Tools: c.Views(), Actions: c.Actions(),
		LastReloadError: opfile.NewReloadError(lastErr, at, "catalog")}
}
