// Package problem is the shape in which gated reports what is wrong with an
// operator's files (catalogs, policies): one problem a line, precise enough
// to fix without reading gated's code.
package problem

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Problem is one thing wrong with a file: the file, the field inside it
// ("" for the whole file), a stable code and a sentence.
type Problem struct {
	File    string `json:"file"`
	Field   string `json:"field,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// String renders the problem on one line: "file: field: code: message".
func (p Problem) String() string {
	field := p.Field
	if field == "" {
		field = "-"
	}
	return fmt.Sprintf("%s: %s: %s: %s", p.File, field, p.Code, strings.Join(strings.Fields(p.Message), " "))
}

// Lister is a load error that lists the problems behind it.
type Lister interface {
	error
	ProblemList() []Problem
}

// ReloadError is a failed reload, reported beside the last good value that
// stays in use.
type ReloadError struct {
	At       time.Time `json:"at"`
	Message  string    `json:"message"`
	Problems []Problem `json:"problems,omitempty"`
}

// NewReloadError describes err, the failure of reloading what ("catalog",
// "policy") at at; nil when err is nil.
func NewReloadError(err error, at time.Time, what string) *ReloadError {
	if err == nil {
		return nil
	}
	re := &ReloadError{At: at, Message: err.Error()}
	var l Lister
	if errors.As(err, &l) {
		re.Message = "the " + what + " on disk is invalid; the last good " + what + " stays in use"
		re.Problems = l.ProblemList()
	}
	return re
}
