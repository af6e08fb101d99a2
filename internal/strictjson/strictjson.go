// Package strictjson checks that JSON text means one thing to every
// reader: gated decides on its own parse of a body, while the runtime
// that executes the call may parse the same text with another library.
// encoding/json keeps the last of a repeated member name and turns a lone
// surrogate escape into U+FFFD; other parsers keep the first name (gjson,
// cJSON) or the surrogate (JavaScript), so such text could be decided as
// one call and run as another.
package strictjson

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// DuplicateError is a member name given twice in one object.
type DuplicateError struct {
	// Pointer is the JSON Pointer of the repeated member.
	Pointer string
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("the key %s is given more than once", strconv.Quote(e.Pointer))
}

// decoder is a reusable jsontext decoder: Check runs on every decision,
// and a fresh one costs its buffers and name sets each time.
type decoder struct {
	r   bytes.Reader
	dec *jsontext.Decoder
}

var decoders = sync.Pool{New: func() any {
	d := &decoder{}
	d.dec = jsontext.NewDecoder(&d.r)
	return d
}}

// Check reports text that is not one JSON value every parser reads alike:
// a *DuplicateError for a repeated member name (escapes decoded, so
// "\u0061" repeats "a"), or an error for anything else jsontext — the
// encoding/json/v2 prototype, strict by default — refuses (invalid UTF-8,
// lone surrogates, bad syntax).
func Check(b []byte) error {
	d := decoders.Get().(*decoder)
	defer decoders.Put(d)
	d.r.Reset(b)
	d.dec.Reset(&d.r)
	defer d.r.Reset(nil) // drops the pooled reader's hold on b
	if err := d.dec.SkipValue(); err != nil {
		if serr, ok := errors.AsType[*jsontext.SyntacticError](err); ok && serr.Err == jsontext.ErrDuplicateName {
			return &DuplicateError{Pointer: string(serr.JSONPointer)}
		}
		return err
	}
	return nil
}

// Unmarshal decodes b into v as every reader reads b: what Check refuses
// is refused, and a member counts only spelled exactly as v's field names
// it. encoding/json matches names case-insensitively and passes unknown
// ones unread, so `"final_route":"accept","Final_Route":"refuse"` is
// refuse to it and accept to jq, and an unknown member rides along
// unread — in an audit line, outside what its hash covers. The
// encoding/json/v2 prototype (the module Check uses) matches exactly and
// refuses repeated and, told to, unknown members.
func Unmarshal(b []byte, v any) error {
	return json.Unmarshal(b, v, json.RejectUnknownMembers(true))
}
