package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stdio is the MCP SDK's stdio transport (gated mcp, gated mcp-proxy)
// behind a line filter. The SDK ends the session on the first line that is
// over its length limit or is no JSON-RPC message, and every request still
// waiting loses its answer with it. The filter answers such a line itself
// with a JSON-RPC error (the request's id when its first bytes name one)
// and passes on the lines after it: one bad message costs only itself.
// A JSON-RPC batch is answered so too: no revision gated speaks on stdio
// needs one, and the SDK ends a session on protocols that forbid them.
func Stdio(stdin io.Reader, stdout io.Writer, maxLine int) *sdk.IOTransport {
	out := &lineWriter{w: stdout}
	pr, pw := io.Pipe()
	go func() { _ = pw.CloseWithError(filterLines(stdin, pw, out, maxLine)) }()
	// The SDK's own limit stays as a backstop: every line it reads is
	// within maxLine already.
	return &sdk.IOTransport{Reader: pr, Writer: out, MaxLineLength: maxLine + 2}
}

// lineWriter writes each Write whole under one lock, so the filter's
// error lines never land inside a line of the SDK's (it writes each
// message and its newline in one Write).
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close leaves stdout open: it is the process's, not the session's.
func (l *lineWriter) Close() error { return nil }

// JSON-RPC's error codes for a message that is not JSON and one that is
// no valid request.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// filterLines copies the lines of in that are JSON-RPC messages to pass,
// answering the others on out, until in ends.
func filterLines(in io.Reader, pass io.Writer, out io.Writer, maxLine int) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, over, err := readLine(r, maxLine)
		// The SDK is handed each message trimmed and alone on its line:
		// it ends the session on anything after a message but its line
		// ending, and counts blank lines before a message into that
		// message's length limit.
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 || over {
			if msg := judgeLine(line, over, maxLine); msg != nil {
				if _, werr := out.Write(msg); werr != nil {
					return werr
				}
			} else if _, werr := pass.Write(append(trimmed, '\n')); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads one line without its line ending, keeping at most
// maxLine bytes of it: over reports a longer line, whose first maxLine
// bytes are returned and whose rest is read and dropped.
func readLine(r *bufio.Reader, maxLine int) (line []byte, over bool, err error) {
	for {
		var chunk []byte
		chunk, err = r.ReadSlice('\n')
		chunk = bytes.TrimSuffix(chunk, []byte("\n"))
		if len(line)+len(chunk) > maxLine {
			over, chunk = true, chunk[:max(0, maxLine-len(line))]
		}
		line = append(line, chunk...) // a copy: ReadSlice reuses its buffer
		if !errors.Is(err, bufio.ErrBufferFull) {
			return bytes.TrimSuffix(line, []byte("\r")), over, err
		}
	}
}

// judgeLine returns the error line that answers line, or nil when it is a
// JSON-RPC message to pass on.
func judgeLine(line []byte, over bool, maxLine int) []byte {
	if over {
		return errorLine(idOf(line), codeInvalidRequest, fmt.Sprintf("the message is longer than %d bytes, the most gated reads as one line on stdio; it was not read", maxLine))
	}
	trimmed := bytes.TrimSpace(line)
	if !json.Valid(trimmed) {
		return errorLine(idOf(trimmed), codeParseError, "the message is not JSON: each line on stdio must be one JSON-RPC message")
	}
	if trimmed[0] == '[' {
		return errorLine(nil, codeInvalidRequest, "gated does not take JSON-RPC batches on stdio: send each message on its own line")
	}
	if _, err := jsonrpc.DecodeMessage(trimmed); err != nil {
		return errorLine(idOf(trimmed), codeInvalidRequest, "the message is no JSON-RPC request, notification or response")
	}
	return nil
}

// idOf is the id a message's first bytes give at its top level, a number
// or a string, or nil: enough of a cut or broken line to tell the client
// which of its requests failed.
func idOf(prefix []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		if key == "id" {
			var id json.RawMessage
			if err := dec.Decode(&id); err != nil {
				return nil
			}
			if len(id) > 0 && id[0] == '"' {
				// Written again, as the SDK writes ids: invalid UTF-8
				// echoed raw made the answer a line a strict client
				// cannot decode.
				var str string
				if json.Unmarshal(id, &str) != nil {
					return nil
				}
				b, _ := json.Marshal(str)
				return b
			}
			// A number running to the end of a cut line may be another
			// request's id cut short (12 of 123).
			if len(id) > 0 && (id[0] == '-' || '0' <= id[0] && id[0] <= '9') && dec.InputOffset() < int64(len(prefix)) {
				return id
			}
			return nil
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil
		}
	}
	return nil
}

// errorLine is a JSON-RPC error response, newline-terminated.
func errorLine(id json.RawMessage, code int, message string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{code, message}})
	return append(b, '\n')
}
