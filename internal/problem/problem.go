// Package problem is the shape in which gated reports what is wrong with an
// operator's files (catalogs, policies): one problem a line, precise enough
// to fix without reading gated's code.
package problem

import (
	"fmt"
	"strings"
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
