package approval

import (
	"slices"
	"strings"
)

// Identity is who a call acts for, or who answers an approval: the bearer
// token's name and the request's principals (policy.Principals).
type Identity struct {
	TokenName  string   `json:"token_name"`
	Principals []string `json:"principals"`
}

// principalSet returns principals sorted, without duplicates or empty
// strings, and never nil: principals are a set, so neither their order nor
// a repeat may change a digest or a comparison.
func principalSet(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if p != "" {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// sameIdentity reports whether a and b are the same token with the same
// principal set.
func sameIdentity(a, b Identity) bool {
	return a.TokenName == b.TokenName && slices.Equal(principalSet(a.Principals), principalSet(b.Principals))
}

// isSelf reports whether approver is, or may be, the requester. "Self"
// means either of:
//   - the same token name: one token is one caller, whoever holds it;
//   - a shared principal that names one party: any principal except a
//     group (group://…) and user://current, which every authenticated
//     user of a trusting token holds. Other shared forms (operator://bob,
//     user://alice, bot://agent-7, refs such as @acme/people/bob) count as
//     the same party, since gated cannot tell a person from a group by an
//     arbitrary ref and refusing is the safe side.
func isSelf(requester, approver Identity) bool {
	if approver.TokenName == requester.TokenName {
		return true
	}
	for _, p := range approver.Principals {
		if namesOneParty(p) && slices.Contains(requester.Principals, p) {
			return true
		}
	}
	return false
}

func namesOneParty(p string) bool {
	return p != "" && p != "user://current" && !strings.HasPrefix(p, "group://")
}

// holdsAny reports whether id holds one of required. It mirrors how policy
// grants match principals (internal/policy compiles them to Rego, so there
// is no Go matcher to reuse): exact strings, "*" matches anyone, and groups
// are not expanded — put group://… into the approver's token principals.
func holdsAny(id Identity, required []string) bool {
	for _, r := range required {
		if r == "*" || slices.Contains(id.Principals, r) {
			return true
		}
	}
	return false
}
