package mcp

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"
)

// CodeHeaderMismatch is the JSON-RPC error of a request whose MCP headers
// disagree with its body (the go-sdk's CodeHeaderMismatch).
const CodeHeaderMismatch = -32020

// standardHeaders are the headers gateways may route a request on
// (protocol 2026-07-28, SEP-2243), and whether a comma may be part of the
// value rather than separate a list: a method or a version never holds
// one, a resource URI in Mcp-Name may.
var standardHeaders = []struct {
	name         string
	commaInValue bool
}{{"Mcp-Protocol-Version", false}, {"Mcp-Method", false}, {"Mcp-Name", true}}

// Headers refuses a request that gives one of the standard MCP headers
// more than once (as two fields, or as a list in one) with values that
// differ, before anything else reads its body (the refusal reads it for the
// request's id): the go-sdk checks only the first
// copy against the body, and a gateway may route on another, so none is
// trusted. Copies that agree are one value (some clients repeat
// Mcp-Protocol-Version so), which the go-sdk then sees once. It decodes an
// Mcp-Name sent Base64-encoded (=?base64?…?=, for names not safe in a
// header), which the go-sdk v1.8 compares undecoded (go-sdk#1234), and
// refuses one that does not decode. The go-sdk checks the rest: on
// 2026-07-28, Mcp-Method and Mcp-Name must be present and equal the
// body's, and Mcp-Protocol-Version the body's _meta.
func Headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cloned := false
		for _, h := range standardHeaders {
			v, ok := single(r.Header.Values(h.name), h.commaInValue)
			if !ok {
				refuseHeaders(w, r, "the "+h.name+" header is given more than once with different values; it must say one thing, the request body's")
				return
			}
			if len(r.Header.Values(h.name)) > 1 || (v != "" && v != r.Header.Get(h.name)) {
				if !cloned {
					r, cloned = r.Clone(r.Context()), true
				}
				r.Header.Set(h.name, v)
			}
		}
		if v := r.Header.Get("Mcp-Name"); v != "" {
			name, ok := DecodeHeaderValue(v)
			if !ok {
				refuseHeaders(w, r, "the Mcp-Name header is marked Base64-encoded (=?base64?…?=) and is not valid Base64 of UTF-8 text")
				return
			}
			if name != v {
				if !cloned {
					r, cloned = r.Clone(r.Context()), true
				}
				r.Header.Set("Mcp-Name", name)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// single is the one value the copies of a header give ("" for none): each
// field, and each comma-separated item of one unless a comma may be part of
// the value, trimmed; ok is false when they differ.
func single(fields []string, commaInValue bool) (string, bool) {
	var vals []string
	for _, f := range fields {
		if commaInValue {
			vals = append(vals, strings.TrimSpace(f))
			continue
		}
		for item := range strings.SplitSeq(f, ",") {
			vals = append(vals, strings.TrimSpace(item))
		}
	}
	if len(vals) == 0 {
		return "", true
	}
	for _, v := range vals[1:] {
		if v != vals[0] {
			return "", false
		}
	}
	return vals[0], true
}

// DecodeHeaderValue is an MCP header's value as sent, or decoded when it is
// marked Base64-encoded (=?base64?…?=, 2026-07-28, SEP-2243); ok is false
// for a marked value that is not Base64 of UTF-8 text.
func DecodeHeaderValue(v string) (string, bool) {
	if !strings.HasPrefix(v, base64Prefix) || !strings.HasSuffix(v, base64Suffix) || len(v) < len(base64Prefix)+len(base64Suffix) {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(v[len(base64Prefix) : len(v)-len(base64Suffix)])
	if err != nil || !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}

// The marks of a Base64-encoded header value (2026-07-28, SEP-2243).
const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

// refuseHeaders refuses r for its headers, for the id of its body when
// that reads as one JSON-RPC request within idReadLimit bytes, as the
// go-sdk's own -32020 refusals do (null otherwise, a batch say).
func refuseHeaders(w http.ResponseWriter, r *http.Request, msg string) {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	if r.Body != nil {
		body, err := io.ReadAll(io.LimitReader(r.Body, idReadLimit+1))
		if err != nil || len(body) > idReadLimit || json.Unmarshal(body, &req) != nil {
			req.ID = nil
		}
	}
	RefuseHeaders(w, req.ID, msg)
}

// idReadLimit bounds what a refusal reads of a body to find its id: the
// request is refused whatever it holds, so a larger one is answered with a
// null id rather than read further.
const idReadLimit = 1 << 20

// RefuseHeaders answers a request whose MCP headers disagree with its body:
// HTTP 400 and JSON-RPC error -32020, for the request id when it is known.
func RefuseHeaders(w http.ResponseWriter, id json.RawMessage, msg string) {
	var rid any
	if len(id) > 0 {
		rid = id
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rid,
		"error": map[string]any{"code": CodeHeaderMismatch, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(append(body, '\n'))
}
