package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatedhq/gated/internal/adapter/mcp"
)

// On 2026-07-28 a tool may name arguments (x-mcp-header in its input
// schema) that a client also sends as Mcp-Param-<Name> headers, for
// gateways to route on; a server must refuse a call whose headers are not
// its arguments. The go-sdk checks this only for the tools a server
// registers itself, and the proxy's are the upstream's: the proxy checks
// them against the upstream's schema, before anything is decided.

// paramBinding is one argument a tool mirrors into a header.
type paramBinding struct {
	path   []string
	header string
}

// paramCheck checks a 2026-07-28 tools/call request's Mcp-Param-* headers
// against the upstream's tools as it lists them at the call. When the
// upstream cannot list them (it is down, say), the last list it gave is
// used, so a dead upstream still fails the call as a tool error, not as a
// protocol error; before any list at all, the call is refused.
type paramCheck struct {
	up           *sdk.ClientSession
	maxBodyBytes int64
	mu           sync.Mutex
	last         map[string]*sdk.Tool // nil until a list succeeded
}

// tool is the upstream's tool of that name (nil when it has none), and
// false when no list of its tools was ever had.
func (c *paramCheck) tool(ctx context.Context, name string) (*sdk.Tool, bool) {
	tools := map[string]*sdk.Tool{}
	for t, err := range c.up.Tools(ctx, nil) {
		if err != nil {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.last[name], c.last != nil
		}
		tools[t.Name] = t
	}
	c.mu.Lock()
	c.last = tools
	c.mu.Unlock()
	return tools[name], true
}

// check reads the body (and puts it back); a body that is no tools/call it
// can read is left to the go-sdk to refuse. It answers the request itself
// when it refuses it.
func (c *paramCheck) check(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Method") != "tools/call" {
		return r, true
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, c.maxBodyBytes+1))
	_ = r.Body.Close()
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil || int64(len(body)) > c.maxBodyBytes {
		return r, true
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string                     `json:"name"`
			Arguments map[string]json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" {
		return r, true
	}
	tool, listed := c.tool(r.Context(), msg.Params.Name)
	if !listed {
		mcp.RefuseHeaders(w, msg.ID, "gated mcp-proxy cannot check the Mcp-Param headers: the upstream MCP server did not list its tools")
		return r, false
	}
	if tool == nil {
		return r, true
	}
	if err := checkParams(r.Header, tool, msg.Params.Arguments); err != nil {
		mcp.RefuseHeaders(w, msg.ID, err.Error())
		return r, false
	}
	return r, true
}

// checkParams is the go-sdk's rule for its own tools: an argument the tool
// mirrors, when given and not null, needs its header, equal to it (decoded;
// integers by value); a header for an argument not given is refused too.
func checkParams(h http.Header, tool *sdk.Tool, args map[string]json.RawMessage) error {
	for _, b := range paramBindings(tool) {
		name := "Mcp-Param-" + b.header
		if len(h.Values(name)) > 1 {
			return fmt.Errorf("the %s header is given more than once", name)
		}
		v := h.Get(name)
		arg, given := lookup(args, b.path)
		if !given || string(arg) == "null" {
			if v != "" {
				return fmt.Errorf("the %s header is given for the argument %s, which the call does not give", name, strings.Join(b.path, "."))
			}
			continue
		}
		if v == "" {
			return fmt.Errorf("the %s header is missing for the argument %s", name, strings.Join(b.path, "."))
		}
		decoded, ok := mcp.DecodeHeaderValue(v)
		if !ok || !sameValue(decoded, arg) {
			return fmt.Errorf("the %s header is not the argument %s", name, strings.Join(b.path, "."))
		}
	}
	return nil
}

// paramBindings reads a tool's x-mcp-header annotations, at any depth.
func paramBindings(tool *sdk.Tool) []paramBinding {
	raw, err := json.Marshal(tool.InputSchema)
	if err != nil {
		return nil
	}
	type prop struct {
		Header     string          `json:"x-mcp-header"`
		Properties map[string]prop `json:"properties"`
	}
	var schema prop
	if json.Unmarshal(raw, &schema) != nil {
		return nil
	}
	var out []paramBinding
	var walk func(props map[string]prop, path []string)
	walk = func(props map[string]prop, path []string) {
		for name, p := range props {
			at := append(append([]string(nil), path...), name)
			if p.Header != "" {
				out = append(out, paramBinding{path: at, header: p.Header})
			}
			walk(p.Properties, at)
		}
	}
	walk(schema.Properties, nil)
	return out
}

func lookup(args map[string]json.RawMessage, path []string) (json.RawMessage, bool) {
	cur, ok := args[path[0]]
	for _, part := range path[1:] {
		var obj map[string]json.RawMessage
		if !ok || json.Unmarshal(cur, &obj) != nil {
			return nil, false
		}
		cur, ok = obj[part]
	}
	return cur, ok
}

// sameValue: a string is the header's text, a boolean true or false, an
// integer (within JSON's safe range) the same number however written;
// anything else cannot be mirrored, so no header equals it.
func sameValue(header string, arg json.RawMessage) bool {
	var v any
	d := json.NewDecoder(bytes.NewReader(arg))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return false
	}
	switch v := v.(type) {
	case string:
		return header == v
	case bool:
		return header == strconv.FormatBool(v)
	case json.Number:
		body, err1 := v.Float64()
		got, err2 := strconv.ParseFloat(header, 64)
		const safe = 1<<53 - 1
		return err1 == nil && err2 == nil && body == math.Trunc(body) && math.Abs(body) <= safe && got == body
	}
	return false
}
