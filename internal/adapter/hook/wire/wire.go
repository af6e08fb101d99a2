// Package wire holds each coding agent's pre-tool hook format: reading its
// input into one neutral call (with its tool and argument names mapped to
// the catalog's), writing allow, ask or deny into its answer, and how the
// runtime is made to block when gated fails. It imports only the standard
// library, so a small hook client can link it without the decision engine.
package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"reflect"
	"slices"
	"strings"
)

// Call is one pre-tool hook call, in the catalog's terms.
type Call struct {
	Event     string         // the runtime's hook event, as it named it
	Tool      string         // the catalog's tool name (the runtime's when no table maps it)
	Input     map[string]any // the arguments, under the catalog's names
	Cwd       string         // the working directory, the workspace of the call
	Session   string         // the runtime's session or conversation id
	ToolUseID string         // the runtime's id of this call, if it has one
}

// Verdict is what a hook answer tells the runtime.
type Verdict string

// MaxInputBytes bounds a hook input, on the command's stdin and in a POST
// to gated. Hook inputs carry whole file contents (Write, Edit), so they get
// more room than an event; the values are fingerprinted, never stored.
const MaxInputBytes = 1 << 20

// The three verdicts every runtime's answer can carry in some form.
const (
	Allow Verdict = "allow"
	Ask   Verdict = "ask"
	Deny  Verdict = "deny"
)

// Reply is what the command hook prints and how it exits; the HTTP hook
// sends Body with status 200.
type Reply struct {
	Body   any    // the JSON answer, which the HTTP hook sends and the command prints
	Quiet  bool   // the command prints nothing: the runtime reads the exit code and stderr only
	Exit   int    // the command's exit code
	Stderr string // what the command writes on stderr
}

// Codec is one runtime's hook format.
type Codec struct {
	ID   string // in paths and evidence source ids: gemini-cli
	Name string // in sentences: Gemini CLI

	parse func(doc map[string]any) (*Call, error)
	// wrap builds the hook input from what the command was given, for a
	// runtime that passes part of the call outside stdin (Amp: the tool
	// name in the environment); nil where stdin is the whole input.
	wrap func(getenv func(string) string, cwd string, stdin []byte) ([]byte, error)
	// encode writes a verdict with its reason for the event answered.
	encode func(v Verdict, reason, event string) Reply
	// asks is the set of events whose answer can ask the person at the
	// keyboard; nil for a runtime that cannot ask at all.
	asks map[string]bool
	// read reads the verdict and reason out of an answer gated sent over
	// HTTP: anything else is no answer, and blocks.
	read func(raw []byte) (Verdict, string, error)

	// failExit is the exit code that makes the runtime block the tool when
	// gated fails: 2 where the runtime blocks on it, 0 where only a deny
	// printed on stdout blocks.
	failExit int
	// failPrints says whether a failure prints the deny answer on stdout
	// too: always where failExit is 0.
	failPrints bool
	// rebase, where set, moves a shell call whose cwd lies outside the
	// workspace the hook runs in onto that workspace (Rebase).
	rebase func(doc map[string]any, workspace string) bool
}

// Parse reads one hook input, already decoded from JSON. It accepts only
// the pre-tool events the runtime documents, naming a tool: anything else
// cannot be decided and the caller must deny it.
func (c *Codec) Parse(doc map[string]any) (*Call, error) {
	call, err := c.parse(doc)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(call.Tool) == "" {
		return nil, errors.New("the hook input names no tool")
	}
	if call.Input == nil {
		call.Input = map[string]any{}
	}
	return call, nil
}

// Wrap turns what the command hook was given (its environment, working
// directory and stdin) into the hook input gated reads, the body of a POST
// to /v1/hooks/<runtime>. For most runtimes that is stdin as it came.
func (c *Codec) Wrap(getenv func(string) string, cwd string, stdin []byte) ([]byte, error) {
	if c.wrap == nil {
		return stdin, nil
	}
	return c.wrap(getenv, cwd, stdin)
}

// CanAsk reports whether the runtime's answer to event can ask the person
// at the keyboard. Where it cannot, gated's ask and defer become a deny
// whose reason says a person must approve, since an answer the runtime does
// not support is a failed hook, and most runtimes run the tool on those.
func (c *Codec) CanAsk(event string) bool { return c.asks[event] }

// Answer is the reply to a decided call.
func (c *Codec) Answer(v Verdict, reason, event string) Reply {
	if v == Ask && !c.CanAsk(event) {
		v = Deny // callers word the reason; this only guards the wire
	}
	return c.encode(v, reason, event)
}

// Fail is the reply to a call gated could not decide: it blocks in the
// runtime's own way.
func (c *Codec) Fail(why, event string) Reply {
	r := c.encode(Deny, "gated could not check this call, so it is blocked: "+why, event)
	r.Exit, r.Quiet = c.failExit, r.Quiet || !c.failPrints
	r.Stderr = "hook blocked the tool call: " + why
	return r
}

// Rebase is for a runtime whose input's cwd is where the agent chose to
// run a shell command (Codex: exec_command's workdir), not the workspace:
// the hook command runs in the session's folder, which it passes as
// workspace. A shell call whose cwd lies outside it is rewritten, in the
// runtime's own input, to run there from the workspace (cd '<cwd>' && …,
// never a read). It reports whether doc changed; other runtimes never do.
func (c *Codec) Rebase(doc map[string]any, workspace string) bool {
	return c.rebase != nil && workspace != "" && c.rebase(doc, workspace)
}

// RebaseBody is Rebase on a hook input still in JSON text, as a command
// forwards it to gated: the text is passed on as it came unless the call
// moves, and then a text that repeats a key is refused rather than
// re-encoded into one gated would read otherwise than the runtime did.
func (c *Codec) RebaseBody(body []byte, workspace string) ([]byte, error) {
	if c.rebase == nil || workspace == "" {
		return body, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil || doc == nil {
		return body, nil // gated refuses it, in the runtime's words
	}
	if !c.Rebase(doc, workspace) {
		return body, nil
	}
	if err := noRepeatedKeys(string(body)); err != nil {
		return nil, fmt.Errorf("the hook input is ambiguous: %v", err)
	}
	return json.Marshal(doc)
}

// within reports whether dir is root or lies under it, lexically.
func within(dir, root string) bool {
	dir, root = path.Clean(dir), path.Clean(root)
	return dir == root || root == "/" || strings.HasPrefix(dir, root+"/")
}

// inDir rewrites a shell command to run in dir.
func inDir(dir, cmd string) string {
	return "cd " + shellQuote(dir) + " && " + cmd
}

// Verdict reads the verdict and reason out of an answer gated's /v1/hooks
// endpoint sent for this runtime.
func (c *Codec) Verdict(raw []byte) (Verdict, string, error) { return c.read(raw) }

// Read turns an answer gated's /v1/hooks endpoint sent for this runtime
// into the command's reply, keeping only what the runtime reads. The
// endpoint has already turned an ask the runtime cannot take into a deny;
// an ask to a runtime that can never ask (Codex, Droid: a gated of another
// version) is a deny here too, since the runtime would run the tool on it.
func (c *Codec) Read(raw []byte) (Reply, error) {
	v, reason, err := c.read(raw)
	if err != nil {
		return Reply{}, err
	}
	if v == Ask && len(c.asks) == 0 {
		v = Deny
	}
	return c.encode(v, reason, ""), nil
}

// Named is a runtime that no hook wire reaches (the MCP proxy): it only
// names the runtime in events and reasons, and says whether it can ask.
func Named(id, name string, canAsk bool) *Codec {
	c := &Codec{ID: id, Name: name}
	if canAsk {
		c.asks = map[string]bool{"": true}
	}
	return c
}

// Codecs are the runtimes gated answers, by id.
var Codecs = map[string]*Codec{}

func register(c *Codec) *Codec {
	if c.failExit == 0 && (!c.failPrints || c.encode(Deny, "", "").Quiet) {
		panic("wire: " + c.ID + " would fail open") // a programming error, caught by any test
	}
	Codecs[c.ID] = c
	return c
}

// Lookup returns the codec of runtime id.
func Lookup(id string) (*Codec, bool) {
	c, ok := Codecs[id]
	return c, ok
}

// str reads a string field; a field of another type is an error, since a
// runtime that sends one is not the runtime this codec knows.
func str(doc map[string]any, key string) (string, error) {
	v, ok := doc[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("the hook input's %s has the wrong type (want a string)", key)
	}
	return s, nil
}

// field is a string field of a hook input and the place its value goes.
type field struct {
	key string
	dst *string
}

// strs reads string fields, as str does, into their places.
func strs(doc map[string]any, fields []field) error {
	for _, f := range fields {
		var err error
		if *f.dst, err = str(doc, f.key); err != nil {
			return err
		}
	}
	return nil
}

// snakeFields are the common fields of the snake_case input Claude Code
// started and others copy, read into c.
func snakeFields(c *Call) []field {
	return []field{{"hook_event_name", &c.Event}, {"tool_name", &c.Tool}, {"session_id", &c.Session}, {"cwd", &c.Cwd}, {"tool_use_id", &c.ToolUseID}}
}

// object reads an arguments field: an object, or a string holding one (as
// Copilot CLI's toolArgs and Cursor's MCP tool_input are). Absent is empty;
// anything else is an error, since a call whose arguments cannot be read
// cannot be checked.
func object(doc map[string]any, key string) (map[string]any, error) {
	v, ok := doc[key]
	if !ok || v == nil {
		return map[string]any{}, nil
	}
	switch x := v.(type) {
	case map[string]any:
		return x, nil
	case string:
		if strings.TrimSpace(x) == "" {
			return map[string]any{}, nil
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(x), &m); err != nil || m == nil {
			return nil, fmt.Errorf("the hook input's %s is a string that is not a JSON object", key)
		}
		// The body's repeated keys are refused before any codec reads it;
		// this text is JSON too, which the runtime parses on its own.
		if err := noRepeatedKeys(x); err != nil {
			return nil, fmt.Errorf("the hook input's %s is ambiguous: %v", key, err)
		}
		return m, nil
	}
	return nil, fmt.Errorf("the hook input's %s has the wrong type (want an object, or a JSON string of one)", key)
}

// noRepeatedKeys refuses JSON text (already known to be valid) in which
// an object gives one key twice: encoding/json keeps the last, and a
// runtime's parser may keep the first.
func noRepeatedKeys(text string) error {
	dec := json.NewDecoder(strings.NewReader(text))
	type frame struct {
		keys  map[string]bool
		isObj bool
		atKey bool // in an object, the next token is a key
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // the end: Unmarshal has already read the text whole
		}
		top := len(stack) - 1
		if top >= 0 && stack[top].isObj {
			if stack[top].atKey {
				if k, ok := tok.(string); ok {
					if stack[top].keys[k] {
						return fmt.Errorf("the key %q is given more than once", k)
					}
					stack[top].keys[k] = true
					stack[top].atKey = false
					continue
				}
			} else {
				stack[top].atKey = true // this token is the value
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{keys: map[string]bool{}, isObj: true, atKey: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}

// Tool maps one runtime tool onto the catalog's.
type Tool struct {
	Name string // the catalog's name
	// Args maps each of the catalog's argument names to the runtime's
	// names for it; two present (or one and the catalog's own name) with
	// different values make the call unreadable.
	Args map[string][]string
	// Workdir names the runtime's working-directory arguments of a shell
	// tool: a command run elsewhere than the workspace is rewritten to
	// start with cd, which the command rules never take for a read.
	Workdir []string
	// Single names the runtime's arguments that take a string or a list of
	// strings (Copilot CLI's grep and glob paths) where the catalog's take
	// one: a list of one is that string, an empty list is absent, and a
	// longer list is refused, as no rule would see its other entries.
	Single []string
}

// Tools is one runtime's table, keyed by its tool names in lower case, so
// a spelling in another case maps the same way.
type Tools map[string]Tool

// Map renames a tool and its arguments to the catalog's. A tool the table
// does not know passes through by its own name, with its arguments as they
// are: the catalog decides it, or declares it unknown.
func (t Tools) Map(name string, args map[string]any) (string, map[string]any, error) {
	m, ok := t[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return name, args, nil
	}
	args, err := single(name, args, m.Single)
	if err != nil {
		return "", nil, err
	}
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[k] = v
	}
	for canon, from := range m.Args {
		var val any
		found := false
		// The catalog's own name counts too: a call giving it beside the
		// runtime's name, with another value, is ambiguous, not overruled.
		for _, k := range append(slices.Clone(from), canon) {
			v, ok := args[k]
			if !ok {
				continue
			}
			if found && !reflect.DeepEqual(v, val) {
				return "", nil, fmt.Errorf("the %s call gives %s twice with different values", name, canon)
			}
			val, found = v, true
			delete(out, k)
		}
		if found {
			out[canon] = val
		}
	}
	for _, k := range m.Workdir {
		v, ok := args[k]
		if !ok || v == nil {
			continue
		}
		dir, isStr := v.(string)
		if !isStr {
			return "", nil, fmt.Errorf("the %s call's %s has the wrong type (want a string)", name, k)
		}
		delete(out, k)
		if dir == "" || dir == "." {
			continue
		}
		cmd, _ := out["command"].(string)
		out["command"] = inDir(dir, cmd)
	}
	return m.Name, out, nil
}

// single gives a copy of args with each of keys that holds a list of
// strings reduced to its one string.
func single(name string, args map[string]any, keys []string) (map[string]any, error) {
	if len(keys) == 0 {
		return args, nil
	}
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[k] = v
	}
	for _, k := range keys {
		list, ok := args[k].([]any)
		if !ok {
			continue
		}
		switch len(list) {
		case 0:
			delete(out, k)
		case 1:
			s, isStr := list[0].(string)
			if !isStr {
				return nil, fmt.Errorf("the %s call's %s has the wrong type (want a string or a list of strings)", name, k)
			}
			out[k] = s
		default:
			return nil, fmt.Errorf("the %s call gives %d %s, and gated decides one at a time: make one call per path", name, len(list), k)
		}
	}
	return out, nil
}

// shellQuote quotes s as one POSIX shell word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// decodeAnswer reads an answer into v and refuses one that is not a JSON
// object.
func decodeAnswer(raw []byte, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("gated's hook answer is not the runtime's JSON: %w", err)
	}
	return nil
}

// checkVerdict accepts the verdict words a runtime's answer may carry.
func checkVerdict(got string, want ...Verdict) (Verdict, error) {
	for _, w := range want {
		if Verdict(got) == w {
			return w, nil
		}
	}
	return "", fmt.Errorf("gated's hook answer has no known decision (got %q)", got)
}

// exitCoded is the reply of a runtime that reads only the exit code and
// stderr: 0 runs the tool, 2 blocks it with stderr as the reason. Over
// HTTP the verdict travels as {decision, reason}, which the command reads
// back into the exit code.
func exitCoded(v Verdict, reason, _ string) Reply {
	r := Reply{Body: DecisionOutput{Decision: string(v), Reason: reason}, Quiet: true}
	if v != Allow {
		r.Exit, r.Stderr = 2, reason
	}
	return r
}
