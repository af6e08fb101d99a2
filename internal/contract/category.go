package contract

import (
	"encoding/json"
	"strings"

	"github.com/gatedhq/gated/internal/route"
)

var (
	identityKeys = set("account_id", "account_key", "address", "card_id", "case_id", "client_id",
		"customer_id", "employee_id", "email", "invoice_id", "loan_id", "order_id", "patient_id",
		"payment_id", "payroll_id", "phone", "profile_id", "student_id", "subscription_id",
		"ticket_id", "transaction_id", "user_id")
	publicWords       = set("search", "find", "list", "lookup", "catalog", "availability", "public")
	identityNameParts = []string{"account", "booking", "cart", "client", "customer", "invoice", "order", "profile", "reservation", "subscription", "ticket", "transaction", "user"}
	highRiskNameParts = []string{"delete", "transfer", "pay", "purchase", "reset", "send", "deploy", "grant", "revoke"}
	highRiskDomains   = set("finance", "devops", "security", "legal", "pharma", "healthcare")
)

// identityBound reports whether a declared public_read is really an
// identity-bound read (section 3 of the reference).
func identityBound(ev *route.Event) bool {
	for k := range ev.ProposedArguments {
		if identityKeys[strings.ToLower(k)] {
			return true
		}
	}
	if eventHasPublicWord(ev) {
		return false
	}
	name := strings.ToLower(ev.ToolName)
	for _, w := range nameWords(name) {
		if w == "search" || w == "list" {
			return false
		}
	}
	return containsAny(name, identityNameParts)
}

func eventHasPublicWord(ev *route.Event) bool {
	if hasPublicWord(ev.ToolName) || hasPublicWord(ev.RiskDomain) || hasPublicWord(ev.UserIntent) {
		return true
	}
	if args, err := json.Marshal(ev.ProposedArguments); err == nil && hasPublicWord(string(args)) {
		return true
	}
	for i := range ev.EvidenceRefs {
		r := &ev.EvidenceRefs[i]
		if hasPublicWord(r.SourceID) || hasPublicWord(r.Kind) || hasPublicWord(r.Summary) {
			return true
		}
	}
	return false
}

// isWordByte follows regular-expression \b semantics: letters, digits and
// underscore are word characters. Bytes of non-ASCII characters count as
// word characters too, so they never open a boundary: fewer matches means
// more reads treated as identity-bound, which is the safe side.
func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// hasPublicWord reports whether s, lowercased, holds one of the public
// words as a whole word, or the phrase "opening hours".
func hasPublicWord(s string) bool {
	for i := 0; i < len(s); {
		if !isWordByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		w := strings.ToLower(s[i:j])
		if publicWords[w] {
			return true
		}
		// Only the five bytes after the space are compared: lower-casing the
		// whole rest at every "opening" made the scan quadratic.
		if w == "opening" && j+6 <= len(s) && s[j] == ' ' && strings.EqualFold(s[j+1:j+6], "hours") {
			if k := j + 6; k == len(s) || !isWordByte(s[k]) {
				return true
			}
		}
		i = j
	}
	return false
}

// nameWords splits a lowercased tool name into its runs of [a-z0-9].
func nameWords(name string) []string {
	return strings.FieldsFunc(name, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') })
}

// highRisk reports whether a write is high-risk by its name or domain. The
// reference's word list is a subset of its substring list, so one
// substring test covers both.
func highRisk(ev *route.Event) bool {
	return highRiskDomains[ev.RiskDomain] || containsAny(strings.ToLower(ev.ToolName), highRiskNameParts)
}

// routeCategory applies the category rules with the effective state.
func routeCategory(ev *route.Event, cat route.Category, auth route.AuthState) (fs []route.Finding, reasons []string) {
	add := func(code string, r route.Route, msg string) {
		fs = append(fs, route.Finding{Source: route.SourceContract, Code: code, Route: r, Blocking: true, Message: msg})
	}
	switch cat {
	case route.PublicRead:
		reasons = append(reasons, "public_read_allowed")
	case route.PrivateRead:
		if auth >= route.AuthAuthenticated {
			return nil, []string{"private_read_authenticated"}
		}
		r := route.Defer
		if auth == route.AuthUserClaimed {
			r = route.Ask
		}
		add(route.CodePrivateReadNotAuthenticated, r, "a private read needs at least authenticated authorization")
		reasons = append(reasons, "private_read_requires_authentication")
	case route.Write:
		switch {
		case auth == route.AuthConfirmed:
			reasons = append(reasons, "write_confirmed")
		case highRisk(ev):
			r := route.Ask
			if auth == route.AuthNone {
				r = route.Defer
			}
			add(route.CodeHighRiskWriteMissingExplicitConfirmation, r, "a high-risk write needs explicit confirmation")
			add(route.CodeWriteMissingExplicitConfirmation, r, "a write needs explicit confirmation before it executes")
			if auth == route.AuthUserClaimed || auth == route.AuthAuthenticated {
				add(route.CodeWriteMissingValidationOrConfirmation, r, "a write needs validation or confirmation")
			}
			reasons = append(reasons, "high_risk_write_requires_explicit_confirmation")
		case auth == route.AuthValidated:
			add(route.CodeWriteMissingExplicitConfirmation, route.Ask, "a write needs explicit confirmation before it executes")
			reasons = append(reasons, "write_requires_explicit_confirmation")
		case auth >= route.AuthUserClaimed:
			add(route.CodeWriteMissingValidationOrConfirmation, route.Ask, "a write needs validation or confirmation")
			reasons = append(reasons, "write_requires_validation_or_confirmation")
		default:
			add(route.CodeWriteMissingAuthorization, route.Defer, "a write with no authorization cannot execute")
			reasons = append(reasons, "write_requires_authorization")
		}
	default:
		add(route.CodeUnknownToolCategory, route.Defer, "an unclassified tool must be classified or reviewed before it executes")
		reasons = append(reasons, "unknown_tool_category_requires_classification")
	}
	return fs, reasons
}
