// Package opfile reads operator files safely: the catalog's ACTION.md,
// TOOL.md, ACTIONS.yaml and action.json, POLICY.md and custom Rego, policy
// tests. It walks directories within bounds, splits Markdown frontmatter,
// decodes YAML and JSON strictly into JSON values, validates them against
// JSON Schemas, and reports what is wrong as Problems whose fields are JSON
// Pointers (RFC 6901), the same in every kind of file.
package opfile

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Problem is one thing wrong with a file: the file, where in it, a stable
// code and a sentence. Field is a JSON Pointer into the file's structured
// content ("/grants/3/principal"), "" for the whole file; text without
// fields (Rego) is located by Line instead.
type Problem struct {
	File    string `json:"file"`
	Field   string `json:"field,omitempty"`
	Line    int    `json:"line,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// String renders the problem on one line, "file: field: code: message",
// with "-" for no field and "file:line" for a line, so that lint output
// stays one problem per line even when a parser's message spans several.
func (p Problem) String() string {
	file := p.File
	if p.Line > 0 {
		file += ":" + strconv.Itoa(p.Line)
	}
	field := p.Field
	if field == "" {
		field = "-"
	}
	return fmt.Sprintf("%s: %s: %s: %s", file, field, p.Code, strings.Join(strings.Fields(p.Message), " "))
}

// List renders problems for a person: a count ("1 problem:", "3
// problems:"), then each on its own line, as lint prints them.
func List(ps []Problem) string {
	lines := make([]string, 0, len(ps)+1)
	noun := "problems"
	if len(ps) == 1 {
		noun = "problem"
	}
	lines = append(lines, fmt.Sprintf("%d %s:", len(ps), noun))
	for _, p := range ps {
		lines = append(lines, p.String())
	}
	return strings.Join(lines, "\n")
}

// pointerEscaper escapes one reference token: "~" first, so that the "~"
// of an escaped "/" is not escaped again.
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// Pointer renders reference tokens as a JSON Pointer (RFC 6901): each token
// after a "/", with "~" written "~0" and "/" written "~1". No tokens is "",
// the whole document. Pointers concatenate: Pointer("a") + Pointer("b") is
// Pointer("a", "b").
func Pointer(tokens ...string) string {
	var sb strings.Builder
	for _, tok := range tokens {
		sb.WriteByte('/')
		sb.WriteString(pointerEscaper.Replace(tok))
	}
	return sb.String()
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
