package approval

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
