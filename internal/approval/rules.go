package approval

import (
	"fmt"
	"strings"
	"time"

	"github.com/gatedhq/gated/internal/route"
)

// CanDecide reports whether approver may approve or deny a at now, as nil
// or an *Error. The approver is checked before the approval's state, so a
// party that may not decide learns nothing about it. The refusals:
//   - approval_unknown: a is nil, or has a status ParseStatus rejects;
//   - approval_approver_anonymous: the approver has no token name, so it
//     cannot be told apart from the requester;
//   - approval_self_approval: the approver is the requester (isSelf: the
//     same token, or a shared principal other than a group://… or
//     user://current);
//   - approval_approver_not_allowed: RequiredApprovers is set and the
//     approver holds none of them;
//   - approval_decided: it is approved, denied or used already;
//   - approval_expired: it is marked expired, or now is at or past
//     ExpiresAt.
func CanDecide(a *Approval, approver Identity, now time.Time) error {
	switch {
	case a == nil:
		return refuse(route.CodeApprovalUnknown, "there is no such approval")
	case approver.TokenName == "":
		return refuse(route.CodeApprovalApproverAnonymous, "an approver needs a named token: without one gated cannot tell it from the requester")
	case isSelf(a.Requester, approver):
		return refuse(route.CodeApprovalSelfApproval, "the requester cannot decide its own approval: the approver shares its token or a principal that names it")
	case len(a.RequiredApprovers) > 0 && !holdsAny(approver, a.RequiredApprovers):
		return refuse(route.CodeApprovalApproverNotAllowed, "this approval needs an approver holding one of "+strings.Join(a.RequiredApprovers, ", "))
	}
	switch a.Status {
	case StatusPending:
	case StatusExpired:
		return expired()
	case StatusApproved, StatusDenied, StatusUsed:
		return refuse(route.CodeApprovalDecided, "this approval was decided already ("+string(a.Status)+")")
	default:
		return badStatus(a.Status)
	}
	if !now.Before(a.ExpiresAt) {
		return expired()
	}
	return nil
}

// CheckUse reports whether the call with digest, made by requester at now,
// may spend approval a, as nil or an *Error. The requester is checked
// before the digest (both would differ, and "someone else's approval" is
// the clearer reason) and both before the state, so a caller learns
// nothing about an approval that is not its own. Then only an approved
// approval passes, and only before ExpiresAt. The caller marks a used
// (ConsumedBy) in the same transaction that spends it: an approval is good
// for one call.
func CheckUse(a *Approval, digest string, requester Identity, now time.Time) error {
	switch {
	case a == nil:
		return refuse(route.CodeApprovalUnknown, "there is no such approval")
	case !sameIdentity(a.Requester, requester):
		return refuse(route.CodeApprovalRequesterMismatch, "this approval was asked for by another requester")
	case a.Digest != digest:
		return refuse(route.CodeApprovalDigestMismatch, "this approval was given for a different call: the tool, arguments, requester or agent changed")
	}
	switch a.Status {
	case StatusApproved:
	case StatusPending:
		return refuse(route.CodeApprovalPending, "this approval is still waiting for a decision")
	case StatusDenied:
		return refuse(route.CodeApprovalDenied, "this approval was denied")
	case StatusUsed:
		return refuse(route.CodeApprovalUsed, "this approval was used already: it is good for one call")
	case StatusExpired:
		return expired()
	default:
		return badStatus(a.Status)
	}
	if !now.Before(a.ExpiresAt) {
		return expired()
	}
	return nil
}

// CheckApprover reports whether approver, whoever approved an approval
// (with the principals their token holds when it is used, where the caller
// knows them), holds one of approvers, the principals the catalog names as
// the tool's approvers when the approval is used, as nil or an *Error
// (approval_approver_not_allowed). The approval keeps the approvers of when
// it was asked for; checking the catalog again at use means a person taken
// off a tool's approvers, or approvers added to a tool that had none, stops
// an approval they gave from allowing a call.
func CheckApprover(approver Identity, approvers []string) error {
	if len(approvers) > 0 && !holdsAny(approver, approvers) {
		return refuse(route.CodeApprovalApproverNotAllowed, "the catalog now needs an approver holding one of "+strings.Join(approvers, ", ")+
			", and whoever approved this call holds none: ask for a new approval")
	}
	return nil
}

func expired() error {
	return refuse(route.CodeApprovalExpired, "this approval has expired")
}

// badStatus refuses an approval whose status is none of the known ones (a
// row ParseStatus would have rejected): it is treated as not there.
func badStatus(s Status) error {
	return refuse(route.CodeApprovalUnknown, fmt.Sprintf("this approval has no valid status (%q)", s))
}
