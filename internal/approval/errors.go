package approval

// Error is a refused decision or use of an approval. Code is stable, for
// blockers, metrics and clients; Message explains it to a person.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

// The codes an Error carries.
const (
	CodeUnknown            = "approval_unknown"
	CodePending            = "approval_pending"
	CodeDecided            = "approval_decided"
	CodeDenied             = "approval_denied"
	CodeExpired            = "approval_expired"
	CodeUsed               = "approval_used"
	CodeDigestMismatch     = "approval_digest_mismatch"
	CodeRequesterMismatch  = "approval_requester_mismatch"
	CodeApproverAnonymous  = "approval_approver_anonymous"
	CodeSelfApproval       = "approval_self_approval"
	CodeApproverNotAllowed = "approval_approver_not_allowed"
)

func refuse(code, message string) error {
	return &Error{Code: code, Message: message}
}
