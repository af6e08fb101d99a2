// Package hook translates a coding agent's PreToolUse hook call into an
// Agent Action Contract v1 event, and gated's decision back into the hook's
// answer. It owns only translation; deciding, recording and counting stay in
// the one decision path.
package hook

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gatedhq/gated/internal/adapter/hook/wire"
	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/route"
)

// Runtime is a coding agent whose pre-tool hook gated answers: its wire
// format (package wire) and, here, the event a call stands for and the
// answer to a decision.
type Runtime struct {
	*wire.Codec
}

// The runtimes gated answers hooks of, each a wire codec over the one
// decision path and the one catalog.
var (
	ClaudeCode = Runtime{wire.ClaudeCode}
	Codex      = Runtime{wire.Codex}
	Copilot    = Runtime{wire.CopilotSDK}
	CopilotCLI = Runtime{wire.CopilotCLI}
	GeminiCLI  = Runtime{wire.GeminiCLI}
	Cursor     = Runtime{wire.Cursor}
	Cline      = Runtime{wire.Cline}
	Goose      = Runtime{wire.Goose}
	Windsurf   = Runtime{wire.Windsurf}
	KiroCLI    = Runtime{wire.KiroCLI}
	Droid      = Runtime{wire.Droid}
	OpenCode   = Runtime{wire.OpenCode}
	QwenCode   = Runtime{wire.QwenCode}
	Amp        = Runtime{wire.Amp}
	Runtimes   = []Runtime{ClaudeCode, Codex, Copilot, CopilotCLI, GeminiCLI, Cursor, Cline, Goose, Windsurf, KiroCLI, Droid, OpenCode, QwenCode, Amp}
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

// Input is one hook call in the catalog's terms, as the runtime's codec
// reads it (Runtime.Parse).
type Input = wire.Call

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
		ToolName: in.Tool, Category: category, AuthorizationState: state,
		EvidenceRefs: []any{contract.RefDoc(rt.sessionRef(in.Session))}, RiskDomain: "unknown",
		Arguments: in.Input, RecommendedRoute: recommended, AgentID: rt.ID, RequestID: plainID(in.ToolUseID),
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
	uuidID  = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	plainRe = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)
)

// sessionName keeps a UUID session id as it is and fingerprints anything
// else, so the source id never carries free text, nor a long run of digits
// (Cline's task id is a timestamp in milliseconds) that the secret scan
// would take for a card or account number and refuse every call.
func sessionName(s string) string {
	switch {
	case s == "":
		return "unknown"
	case uuidID.MatchString(s):
		return s
	}
	return contract.Fingerprint(s)
}

func plainID(s string) string {
	if plainRe.MatchString(s) {
		return s
	}
	return ""
}

// maxReasons bounds how many findings a reason quotes: a person reads it.
const maxReasons = 3

// Answer maps a decision on a call of event to the runtime's answer. A
// deny that carries an approval (an ask the runtime cannot put to the
// person) says where a person approves it, and that the same call then
// runs when tried again: the retry of such a runtime is the identical
// call, which gated matches to the approval by its digest. The reason
// names the approval's id and console URL only, never an argument.
func (rt Runtime) Answer(d *gate.Decision, event string) wire.Reply {
	v, reason := rt.Verdict(d, event)
	if a := d.Approval; a != nil && v == wire.Deny {
		reason += fmt.Sprintf(" A person can approve it at %s (approval %s) until %s; once approved, try the same call again, and it runs once.",
			a.URL, a.ID, a.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return rt.Codec.Answer(v, reason, event)
}

// Verdict words a decision for the runtime. accept allows; ask asks the
// person at the keyboard, who is the approver; defer asks too, as gated
// defers to a person and in a local session that person is at the
// keyboard; refuse denies. Where the runtime cannot ask for the event, ask
// and defer deny with a reason saying a person must approve. A shadow
// decision allows and says what gated would have done.
func (rt Runtime) Verdict(d *gate.Decision, event string) (wire.Verdict, string) {
	var verdict wire.Verdict
	var lead string
	canAsk := rt.CanAsk(event)
	switch {
	case d.Shadow && d.Execute:
		verdict, lead = wire.Allow, fmt.Sprintf("gated (shadow mode) would %s this call", d.Route)
	case d.Route == route.Accept && d.Execute:
		verdict, lead = wire.Allow, "gated allows this call"
	case d.Route == route.Ask && !canAsk:
		verdict, lead = wire.Deny, "gated needs a person to approve this call, and "+rt.Name+" cannot ask"
	case d.Route == route.Defer && !canAsk:
		verdict, lead = wire.Deny, "gated defers this call to a person, and "+rt.Name+" cannot ask"
	case d.Route == route.Ask:
		verdict, lead = wire.Ask, "gated asks you to approve this call"
	case d.Route == route.Defer:
		verdict, lead = wire.Ask, "gated defers this call to a person"
	default:
		verdict, lead = wire.Deny, "gated refuses this call"
	}
	return verdict, worded(lead, d)
}

// Declined words an ask the person at the keyboard was asked and did not
// approve (declined, dismissed, or answered approve false): the runtime
// could ask, so the refusal must not say it cannot. asked is the decision
// that asked; when d is another (a retry decided afresh after the answer),
// both are named, each as what it is.
func Declined(d *gate.Decision, asked string) string {
	lead := "gated needs a person to approve this call, and the person declined it when gated asked"
	if asked != "" && asked != d.DecisionID {
		lead += " (decision " + asked + "), so this retry is refused"
	}
	return worded(lead, d)
}

// worded is a verdict's reason: its lead, the findings behind the route,
// and the decision's id.
func worded(lead string, d *gate.Decision) string {
	reason := lead
	if why := reasons(d.Findings, d.Route); why != "" {
		reason += ": " + why
	}
	if d.DecisionID != "" {
		reason += " (decision " + d.DecisionID + ")"
	}
	return reason + "."
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
