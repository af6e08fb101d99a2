package approval

import (
	"errors"

	"github.com/gatedhq/gated/internal/route"
)

// Error is a refused decision or use of an approval. Code, one of
// route.CodeApproval*, is stable, for blockers, metrics and clients;
// Message explains it to a person.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

func refuse(code, message string) error {
	return &Error{Code: code, Message: message}
}

// ErrNotFound is a store's answer for an approval that is not stored, and
// for an id no stored approval can have. It is the approval_unknown
// refusal, so a caller that maps *Error to its answer needs no case of its
// own for it.
var ErrNotFound error = &Error{Code: route.CodeApprovalUnknown, Message: "there is no such approval"}

// ErrBadFilter is wrapped by a store's errors about the arguments of a
// listing: an unknown status, a negative limit, a cursor it did not issue.
var ErrBadFilter = errors.New("the approval listing cannot be made")
