package catalog

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// EnvVar is one entry of an ACTIONS.yaml `env` block as a view shows it:
// the variable's name and how it must be provided. It has no value field on
// purpose. A `default` (the only value the RFC lets a file hold) is dropped
// at load for every variable, secret or not: a field that is merely never
// serialised would still be one %+v, log line or json tag away from
// GET /v1/catalog, the decision envelope or the audit store. gated decides
// and never executes, so it never needs the value.
type EnvVar struct {
	Name     string `json:"name"`
	Secret   bool   `json:"secret,omitempty"`
	Required bool   `json:"required,omitempty"`
}

// envDoc is what gated decodes of an env entry; description and default
// are validated by the schema and then left undecoded.
type envDoc struct {
	Secret   bool `json:"secret"`
	Required bool `json:"required"`
}

// envVars lists a file's env block by name, or nil when it has none.
func envVars(env map[string]envDoc) []EnvVar {
	var out []EnvVar
	for _, name := range slices.Sorted(maps.Keys(env)) {
		out = append(out, EnvVar{Name: name, Secret: env[name].Secret, Required: env[name].Required})
	}
	return out
}

// checkCommand enforces RFC-001's template rules on one action's command
// (a string or an argv of strings, as the schema has checked). A client
// substitutes `{{name}}` with an input's value as a single argument, so:
//
//   - a string command may hold no `{{` at all: the RFC requires clients to
//     reject it, since a shell would split or interpret the value;
//   - in an argv, every `{{` must open a well-formed template, `{{name}}`,
//     whose name has no braces or white space: a client cannot be trusted
//     to read `{{ url }}`, `{{}}` or `{{a{{b}}}}` the way gated does, and
//     the RFC has no escape for a literal `{{`;
//   - when the input schema compiled (props != nil), each name must be a
//     property it declares, or the client would substitute an empty string
//     for an argument nobody can set.
//
// A lone `}}` is not a template and stays literal (a jq filter has them).
func (l *loader) checkCommand(f file, field string, cmd any, props map[string]any) {
	field += "/command"
	switch cmd := cmd.(type) {
	case string:
		if strings.Contains(cmd, "{{") {
			l.ps.add(f.path, field, "command_template_in_string",
				"a string command cannot hold {{…}} templates; RFC-001 requires the array form, so that each value stays one argument")
		}
	case []any:
		for k, arg := range cmd {
			arg, _ := arg.(string)
			argField := field + "/" + strconv.Itoa(k)
			names, problem := templates(arg)
			if problem != "" {
				l.ps.add(f.path, argField, "command_template_malformed", "%s", problem)
				continue
			}
			if props == nil {
				continue // the input schema did not compile, and its problem says so
			}
			for _, name := range names {
				if _, ok := props[name]; !ok {
					l.ps.add(f.path, argField, "command_template_unknown_input",
						"template {{%s}} names no property of inputSchema.properties (%s)", name, declared(props))
				}
			}
		}
	}
}

// templates returns the names of the `{{name}}` templates in one argument,
// or what is wrong with the first malformed one.
func templates(arg string) (names []string, problem string) {
	for {
		_, rest, ok := strings.Cut(arg, "{{")
		if !ok {
			return names, ""
		}
		name, after, ok := strings.Cut(rest, "}}")
		switch {
		case !ok:
			return nil, "a {{ is never closed by }}"
		case name == "":
			return nil, "a template {{}} names nothing"
		case strings.ContainsAny(name, "{}"):
			return nil, "templates cannot nest or hold braces"
		case strings.IndexFunc(name, unicode.IsSpace) >= 0:
			return nil, "a template name cannot hold white space"
		}
		names = append(names, name)
		arg = after
	}
}

// declared lists an input schema's property names for a problem message.
func declared(props map[string]any) string {
	if len(props) == 0 {
		return "it declares none"
	}
	return "declared: " + strings.Join(slices.Sorted(maps.Keys(props)), ", ")
}

// inputProperties returns an input schema's top-level properties: the
// names a command template may use. A schema without them declares none.
func inputProperties(inputSchema any) map[string]any {
	s, _ := inputSchema.(map[string]any)
	props, _ := s["properties"].(map[string]any)
	if props == nil {
		return map[string]any{}
	}
	return props
}
