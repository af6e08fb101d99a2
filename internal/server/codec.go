package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatedhq/gated/internal/envelope"
	"github.com/gatedhq/gated/internal/eventcodec"
	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/tracing"
)

// errorBody is every error answer. It carries a route so that a client that
// reads only the route fails closed, whatever the status.
type errorBody struct {
	Route   string `json:"route"`
	Execute bool   `json:"execute"`
	Error   string `json:"error"`
	// Code, on the approvals API, names the error for programs
	// (approval_self_approval, approvals_need_tokens, …).
	Code string `json:"code,omitempty"`
}

// bodyError is a request body gated will not decide on.
type bodyError struct {
	status int
	msg    string
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body, _ = json.Marshal(errorBody{Route: route.Refuse.String(), Error: "could not encode the answer"})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// answerBuffers hold answers being written: every decision writes ~2 KB.
var answerBuffers = sync.Pool{New: func() any { return new([]byte) }}

// writeAnswer answers with a decision, as writeJSON would but without
// reflection (envelope.Answer.AppendJSON).
func writeAnswer(w http.ResponseWriter, a *envelope.Answer) {
	buf := answerBuffers.Get().(*[]byte)
	defer answerBuffers.Put(buf)
	body, err := a.AppendJSON((*buf)[:0])
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, errorBody{Route: route.Refuse.String(), Error: "could not encode the answer"})
		return
	}
	*buf = append(body, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(*buf)
}

// writeError answers with an error body; it always says refuse.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{Route: route.Refuse.String(), Error: msg})
}

// writeCodedError is writeError with a code naming the error.
func writeCodedError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, errorBody{Route: route.Refuse.String(), Error: msg, Code: code})
}

// decodeEvent reads a request body that must be one JSON object, bounded in
// size and nesting, sent as application/json.
func decodeEvent(w http.ResponseWriter, r *http.Request, maxBytes int64, maxDepth int) (map[string]any, *bodyError) {
	span := startDecode(r)
	defer span.End()
	// The decoded event copies what it keeps, so the body's buffer serves
	// the next request.
	buf := eventBuffers.Get().(*[]byte)
	body, berr := readJSONInto(w, r, maxBytes, (*buf)[:0])
	defer func() {
		if cap(body) <= maxPooledBody {
			*buf = body[:0]
			eventBuffers.Put(buf)
		}
	}()
	if berr == nil {
		obj, err := eventcodec.Decode(body, maxDepth)
		if err == nil {
			return obj, nil
		}
		berr = &bodyError{http.StatusBadRequest, err.Error()}
	}
	decodeFailed(span, berr.status)
	return nil, berr
}

// eventBuffers hold event bodies being decoded, up to maxPooledBody.
var eventBuffers = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledBody = 64 << 10

// untraced is the decode span of a request without a server span.
var untraced = trace.SpanFromContext(context.Background())

// startDecode starts the decode span of r: only under a server span
// (tracing on), with that span's provider, so untraced requests allocate
// nothing for it.
func startDecode(r *http.Request) trace.Span {
	parent := trace.SpanFromContext(r.Context())
	if !parent.SpanContext().IsValid() {
		return untraced
	}
	_, span := parent.TracerProvider().Tracer(tracing.Scope).Start(r.Context(), tracing.SpanDecode)
	return span
}

// decodeFailed marks the decode span with the status the body was refused
// with, not the message: a decoding error may quote the body.
func decodeFailed(span trace.Span, status int) {
	span.SetStatus(codes.Error, fmt.Sprintf("the body was refused with %d", status))
}

// readJSON reads a request body of at most maxBytes sent as
// application/json, as every body gated acts on is. The content type
// matters: a web page can post text/plain across sites without asking, but
// not JSON.
func readJSON(w http.ResponseWriter, r *http.Request, maxBytes int64) ([]byte, *bodyError) {
	return readJSONInto(w, r, maxBytes, nil)
}

// readJSONInto is readJSON reading into buf.
func readJSONInto(w http.ResponseWriter, r *http.Request, maxBytes int64, buf []byte) ([]byte, *bodyError) {
	if berr := declaredTooLarge(r, maxBytes); berr != nil {
		return buf, berr
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" { // the usual header needs no parsing
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return buf, &bodyError{http.StatusUnsupportedMediaType, "the body must be sent with Content-Type: application/json"}
		}
	}
	if buf == nil {
		// Sized to what the client declares, within what gated keeps: a
		// declared length is not yet a body.
		size := int64(512)
		if r.ContentLength > 0 {
			size = min(r.ContentLength+1, maxPooledBody)
		}
		buf = make([]byte, 0, size)
	}
	body, err := readAll(http.MaxBytesReader(w, r.Body, maxBytes), buf)
	if err != nil {
		if _, tooBig := errors.AsType[*http.MaxBytesError](err); tooBig {
			return body, &bodyError{http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes", maxBytes)}
		}
		return body, &bodyError{http.StatusBadRequest, "could not read the request body"}
	}
	return body, nil
}

// readAll is io.ReadAll appending to buf.
func readAll(r io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// declaredTooLarge refuses a body whose Content-Length already exceeds
// maxBytes, before anything reads it. Reading is what makes net/http answer
// "Expect: 100-continue" with "100 Continue"; the caller would then start
// sending, or hold the connection until the read timeout, for a body gated
// refuses anyway.
func declaredTooLarge(r *http.Request, maxBytes int64) *bodyError {
	if r.ContentLength > maxBytes {
		return &bodyError{http.StatusRequestEntityTooLarge,
			fmt.Sprintf("request body of %d bytes exceeds %d bytes", r.ContentLength, maxBytes)}
	}
	return nil
}
