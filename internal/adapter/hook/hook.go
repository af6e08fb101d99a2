// Package hook translates a coding agent's PreToolUse hook call into an
// Agent Action Contract v1 event, and gated's decision back into the hook's
// answer. It owns only translation; deciding, recording and counting stay in
// the one decision path.
package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/route"
)

// Runtime is a coding agent whose PreToolUse hook gated answers.
type Runtime struct {
	ID   string // in paths and evidence source ids: claude-code
	Name string // in sentences: Claude Code
	// CannotAsk is set for a runtime whose hooks have no working ask: its
	// asks and defers are denied, with the reason, since an answer the
	// runtime does not support counts as a failed hook and fails open.
	CannotAsk bool
}

// The runtimes gated answers hooks of. Their PreToolUse inputs and outputs
// differ in a few fields, not in kind: Codex's command hook speaks Claude
// Code's shape, and the Copilot SDK handlers of gated's SDKs send theirs in
// it too.
var (
	ClaudeCode = Runtime{ID: "claude-code", Name: "Claude Code"}
	Codex      = Runtime{ID: "codex", Name: "Codex", CannotAsk: true}
	Copilot    = Runtime{ID: "copilot", Name: "GitHub Copilot"}
	Runtimes   = []Runtime{ClaudeCode, Codex, Copilot}
)

// Lookup returns the runtime with id.
func Lookup(id string) (Runtime, bool) {
	for _, rt := range Runtimes {
		if rt.ID == id {
			return rt, true
		}
	}
	return Runtime{}, false
}

// Input is the PreToolUse hook input, as the runtime sends it on stdin (a
// command hook) or as the body of a POST (an HTTP hook).
type Input struct {
	SessionID      string         `json:"session_id"`
	TranscriptPath string         `json:"transcript_path"`
	Cwd            string         `json:"cwd"`
	PermissionMode string         `json:"permission_mode"`
	HookEventName  string         `json:"hook_event_name"`
	ToolName       string         `json:"tool_name"`
	ToolInput      map[string]any `json:"tool_input"`
	ToolUseID      string         `json:"tool_use_id"`
}

// Parse reads one hook input. It accepts only PreToolUse calls that name a
// tool: anything else cannot be decided and must be denied by the caller.
func Parse(doc map[string]any) (*Input, error) {
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("the hook input cannot be read: %w", err)
	}
	var in Input
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("the hook input has a field of the wrong type: %w", err)
	}
	if in.HookEventName != "" && in.HookEventName != "PreToolUse" {
		return nil, fmt.Errorf("gated answers PreToolUse hooks only, not %q", in.HookEventName)
	}
	if strings.TrimSpace(in.ToolName) == "" {
		return nil, errors.New("the hook input names no tool (tool_name is missing or empty)")
	}
	if in.ToolInput == nil {
		in.ToolInput = map[string]any{}
	}
	return &in, nil
}

// Options are what the hook vouches for on every event it builds.
type Options struct {
	// AuthorizationState is the state of the runtime's session: by default
	// authenticated, the person signed in at the keyboard.
	AuthorizationState string
	// Category is the call's category as the catalog gives it (a read for
	// a shell line it proves only reads); empty or unknown for a tool no
	// catalog describes.
	Category route.Category
}

// DefaultAuthorizationState is a local runtime session's: a signed-in person.
const DefaultAuthorizationState = "authenticated"

// CheckAuthorizationState accepts the states a hook may vouch for. A hook
// never claims validated or confirmed: those come from approvals.
func CheckAuthorizationState(s string) error {
	switch s {
	case "none", "user_claimed", "authenticated":
		return nil
	}
	return fmt.Errorf("a hook may vouch for none, user_claimed or authenticated, not %q", s)
}

// Event builds the contract event for one hook call. A runtime does not
// classify its tools, so the category is the catalog's, and a tool no
// catalog describes is declared unknown with the runtime recommending defer
// (the contract allows no accept for it). The only evidence is the
// runtime's session, which supports authenticated and never validated or
// confirmed: those come from approvals, not from a hook.
func (rt Runtime) Event(in *Input, o Options) contract.Event {
	state := o.AuthorizationState
	if state == "" {
		state = DefaultAuthorizationState
	}
	category, recommended := o.Category, route.Accept
	if category == "" || category == route.Unknown {
		category, recommended = route.Unknown, route.Defer
	}
	return contract.Event{
		ToolName: in.ToolName, Category: category, AuthorizationState: state,
		EvidenceRefs: []any{contract.RefDoc(rt.sessionRef(in.SessionID))}, RiskDomain: "unknown",
		Arguments: in.ToolInput, RecommendedRoute: recommended, AgentID: rt.ID, RequestID: plainID(in.ToolUseID),
	}
}

// sessionRef is the evidence a hook has: the runtime's session of the
// person at the keyboard. Its text is fixed, so nothing the session id
// holds can read as a stronger authorization.
func (rt Runtime) sessionRef(session string) route.EvidenceRef {
	return route.EvidenceRef{
		SourceID: rt.ID + ".session." + sessionName(session), Kind: "auth_event", TrustTier: "runtime",
		RedactionStatus: "redacted", Summary: rt.Name + " session of the signed-in user at the keyboard",
		Provenance: rt.ID + "_hook", Freshness: route.Freshness{Status: "fresh"},
	}
}

var (
	hexID   = regexp.MustCompile(`^[0-9a-fA-F-]{1,64}$`)
	plainRe = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)
)

// sessionName keeps a UUID-shaped session id as it is and fingerprints
// anything else, so the source id never carries free text.
func sessionName(s string) string {
	switch {
	case s == "":
		return "unknown"
	case hexID.MatchString(s):
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + hex.EncodeToString(sum[:8])
}

func plainID(s string) string {
	if plainRe.MatchString(s) {
		return s
	}
	return ""
}

// Output is the hook's answer: {"hookSpecificOutput": {…}}.
type Output struct {
	HookSpecificOutput Specific `json:"hookSpecificOutput"`
}

// Specific is the PreToolUse part of the answer.
type Specific struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason"`
}

// The hook's permission decisions: Claude Code's words, not gated's routes
// (its "ask" answers both ask and defer).
const (
	permissionAllow = "allow"
	permissionAsk   = "ask"
	permissionDeny  = "deny"
)

// maxReasons bounds how many findings a reason quotes: a person reads it.
const maxReasons = 3

// Answer maps a decision to the hook's answer. accept allows; ask asks the
// person at the keyboard, who is the approver; defer asks too, as gated
// defers to a person and in a local session that person is at the
// keyboard; refuse denies. A shadow decision allows and says what gated
// would have done.
func (rt Runtime) Answer(d *gate.Decision) Output {
	var verdict, lead string
	switch {
	case d.Shadow && d.Execute:
		verdict, lead = permissionAllow, fmt.Sprintf("gated (shadow mode) would %s this call", d.Route)
	case d.Route == route.Accept && d.Execute:
		verdict, lead = permissionAllow, "gated allows this call"
	case d.Route == route.Ask && rt.CannotAsk:
		verdict, lead = permissionDeny, "gated needs a person to approve this call, and "+rt.Name+" cannot ask"
	case d.Route == route.Defer && rt.CannotAsk:
		verdict, lead = permissionDeny, "gated defers this call to a person, and "+rt.Name+" cannot ask"
	case d.Route == route.Ask:
		verdict, lead = permissionAsk, "gated asks you to approve this call"
	case d.Route == route.Defer:
		verdict, lead = permissionAsk, "gated defers this call to a person"
	default:
		verdict, lead = permissionDeny, "gated refuses this call"
	}
	reason := lead
	if why := reasons(d.Findings, d.Route); why != "" {
		reason += ": " + why
	}
	if d.DecisionID != "" {
		reason += " (decision " + d.DecisionID + ")"
	}
	return Output{Specific{HookEventName: "PreToolUse", PermissionDecision: verdict, PermissionDecisionReason: reason + "."}}
}

// Deny is the answer to a call gated could not decide: a failure blocks.
func (rt Runtime) Deny(why string) Output {
	return Output{Specific{HookEventName: "PreToolUse", PermissionDecision: permissionDeny,
		PermissionDecisionReason: "gated could not check this call, so it is blocked: " + why}}
}

// reasons joins the messages of the blocking findings, strictest first; a
// decision that no finding blocks (a runtime's own recommendation, say)
// quotes the findings that set its route.
func reasons(fs []route.Finding, r route.Route) string {
	quoted := func(f route.Finding) bool { return f.Blocking }
	if !slices.ContainsFunc(fs, quoted) {
		quoted = func(f route.Finding) bool { return f.Route == r && r != route.Accept }
	}
	var msgs []string
	for _, level := range []route.Route{route.Refuse, route.Defer, route.Ask, route.Accept} {
		for _, f := range fs {
			if quoted(f) && f.Route == level && len(msgs) < maxReasons {
				msgs = append(msgs, strings.TrimSuffix(f.Message, "."))
			}
		}
	}
	n := 0
	for _, f := range fs {
		if quoted(f) {
			n++
		}
	}
	s := strings.Join(msgs, "; ")
	if n > len(msgs) {
		s += fmt.Sprintf("; and %d more", n-len(msgs))
	}
	return s
}
