package wire

import (
	"encoding/json"
	"errors"
)

// Amp: a permission rule with "action": "delegate" runs the program named
// in "to" before the tool, with the tool's name in AGENT_TOOL_NAME (and the
// thread in AMP_THREAD_ID), its arguments as JSON on stdin, and reads only
// the exit code: 0 allows, 1 asks the operator, 2 or more rejects with
// stderr shown to the model. The command wraps the name, the arguments,
// the thread and its working directory into one input ({tool_name,
// tool_input, thread_id, cwd}), which is what /v1/hooks/amp reads.
var Amp = register(&Codec{
	ID: "amp", Name: "Amp", failExit: 2,
	asks: map[string]bool{"": true},
	wrap: func(getenv func(string) string, cwd string, stdin []byte) ([]byte, error) {
		tool := getenv("AGENT_TOOL_NAME")
		if tool == "" {
			return nil, errors.New("AGENT_TOOL_NAME is not set: the amp hook runs as the program of an Amp permission rule with \"action\": \"delegate\"")
		}
		var args map[string]any
		if err := json.Unmarshal(stdin, &args); err != nil || args == nil {
			return nil, errors.New("the tool's arguments on stdin are not a JSON object")
		}
		return json.Marshal(AmpInput{ToolName: tool, ToolInput: json.RawMessage(stdin), ThreadID: getenv("AMP_THREAD_ID"), Cwd: cwd})
	},
	parse: func(doc map[string]any) (*Call, error) {
		var c Call
		err := strs(doc, []field{{"tool_name", &c.Tool}, {"thread_id", &c.Session}, {"cwd", &c.Cwd}})
		if err != nil {
			return nil, err
		}
		if c.Input, err = object(doc, "tool_input"); err != nil {
			return nil, err
		}
		c.Tool, c.Input, err = ampTools.Map(c.Tool, c.Input)
		return &c, err
	},
	encode: func(v Verdict, reason, event string) Reply {
		r := exitCoded(v, reason, event)
		if v == Ask {
			r.Exit = 1
		}
		return r
	},
	read: decisionReader(Allow, Ask, Deny),
})

// AmpInput is the input /v1/hooks/amp reads: what Amp gives its delegate
// program, in one object.
type AmpInput struct {
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	ThreadID  string          `json:"thread_id,omitempty"`
	Cwd       string          `json:"cwd,omitempty"`
}

// ampTools maps Amp's built-in tools onto the catalog's; Bash runs in cwd
// when given one.
var ampTools = Tools{
	"bash":          {Name: "Bash", Args: map[string][]string{argCommand: {"cmd"}}, Workdir: []string{"cwd"}},
	"read":          {Name: "Read", Args: map[string][]string{argFilePath: {"path"}}},
	"create_file":   {Name: "Write", Args: map[string][]string{argFilePath: {"path"}, argContent: {"content"}}},
	"edit_file":     {Name: "Edit", Args: map[string][]string{argFilePath: {"path"}, argOld: {"old_str"}, argNew: {"new_str"}}},
	"grep":          {Name: "Grep", Args: map[string][]string{argPattern: {"pattern"}, argPath: {"path"}}},
	"glob":          {Name: "Glob", Args: map[string][]string{argPattern: {"filePattern"}}},
	"read_web_page": {Name: "WebFetch", Args: map[string][]string{"url": {"url"}}},
	"web_search":    {Name: "WebSearch", Args: map[string][]string{"query": {"query"}}},
}
