// Package eventcodec decodes the JSON text of an event, the one way every
// surface does: the HTTP API and hooks, /mcp and gated mcp, the MCP proxy
// and gated check. The text must be UTF-8, nested at most so deep, and one
// JSON object with nothing after it; numbers stay exact. Bounding its size
// is the reader's: each surface reads its own way (an HTTP body, a stdio
// line, a JSON-RPC message).
package eventcodec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/gatedhq/gated/internal/strictjson"
)

// DefaultMaxDepth bounds the nesting of arrays and objects in an event.
const DefaultMaxDepth = 64

// Decode parses body as one JSON object nested at most maxDepth deep.
// Numbers stay json.Number so nothing is rounded before the argument
// fingerprint and schema checks.
func Decode(body []byte, maxDepth int) (map[string]any, error) {
	return DecodeAs(body, maxDepth, "the body")
}

// DecodeAs is Decode for text its refusals call what ("the arguments"), as
// the caller knows it: an MCP client sent tool arguments, not a body.
func DecodeAs(body []byte, maxDepth int, what string) (map[string]any, error) {
	// Every decision decodes its event: one pass reads what passes every
	// check, and decodeChecked, the checks one by one, words what it refuses.
	if obj, ok := parseObject(body, maxDepth); ok {
		return obj, nil
	}
	return decodeChecked(body, maxDepth, what)
}

// decodeChecked is DecodeAs as separate checks and encoding/json, each
// refusal in its own words.
func decodeChecked(body []byte, maxDepth int, what string) (map[string]any, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, fmt.Errorf("%s %s empty; expected a JSON object", what, be(what))
	}
	if err := checkText(body, maxDepth, what); err != nil {
		return nil, err
	}
	// A repeated key or a lone surrogate is text encoding/json reads one
	// way and the runtime's parser may read another.
	strict := strictjson.Check(body)
	if derr, ok := errors.AsType[*strictjson.DuplicateError](strict); ok {
		return nil, fmt.Errorf("%s %s ambiguous: %v, which another JSON reader (the sender's, or the tool's) may read otherwise than gated does", what, be(what), derr)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("malformed JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("malformed JSON: unexpected data after the top-level value")
	}
	if strict != nil {
		return nil, fmt.Errorf("malformed JSON: %w", strict)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s must be a JSON object, not %s", what, jsonKind(v))
	}
	return obj, nil
}

// CheckText refuses text that is not UTF-8 or is nested more than maxDepth
// deep, before any decoder reads it: the checks of Decode that JSON text
// decoded into a type of its own needs too.
func CheckText(body []byte, maxDepth int) error {
	return checkText(body, maxDepth, "the body")
}

func checkText(body []byte, maxDepth int, what string) error {
	if !utf8.Valid(body) {
		// encoding/json would replace the bad bytes and gated would decide on
		// text the caller never sent.
		return fmt.Errorf("%s %s not valid UTF-8 (RFC 8259 requires UTF-8 JSON text)", what, be(what))
	}
	if depth, ok := nestingWithin(body, maxDepth); !ok {
		return fmt.Errorf("JSON nesting exceeds %d levels (reached %d)", maxDepth, depth)
	}
	return nil
}

// nestingWithin scans b for the depth of nested arrays and objects, without
// decoding, and stops as soon as it passes limit: a deep body is rejected in
// time linear in its size before any decoder recurses into it.
func nestingWithin(b []byte, limit int) (int, bool) {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			if depth > limit {
				return depth, false
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return depth, true
}

// be is the verb for what: "the arguments are", "the body is".
func be(what string) string {
	if strings.HasSuffix(what, "s") {
		return "are"
	}
	return "is"
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "an unexpected value"
}
