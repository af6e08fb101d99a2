package catalog

import (
	"slices"
	"strings"
)

// FormatFilePath is the JSON Schema format that marks an action.json input
// property as a workspace file path, checked against an Action API plan's
// scope. JSON Schema leaves unknown formats as annotations, so the schema
// stays valid elsewhere.
const FormatFilePath = "file-path"

// plugin is what an action.json declares beyond its tier and input schema:
// the Action API checks plans against it.
type plugin struct {
	commands             [][]string // permissions.commands, split into argv
	fileInputs           []string   // input properties that are file paths
	verificationRequired bool
	rollbackRequired     bool
}

// PluginCommandAllowed reports whether argv is exactly one of the
// action.json's permissions.commands; a view of any other format allows
// none.
func (v *View) PluginCommandAllowed(argv []string) bool {
	if v == nil || v.plugin == nil {
		return false
	}
	return slices.ContainsFunc(v.plugin.commands, func(c []string) bool { return slices.Equal(c, argv) })
}

// FileInputs are the names of the action.json input properties that hold
// file paths (FormatFilePath), sorted.
func (v *View) FileInputs() []string {
	if v == nil || v.plugin == nil {
		return nil
	}
	return v.plugin.fileInputs
}

// PluginRequires reports the action.json's verification.required and
// rollback.required (false for a view of any other format).
func (v *View) PluginRequires() (verification, rollback bool) {
	if v == nil || v.plugin == nil {
		return false, false
	}
	return v.plugin.verificationRequired, v.plugin.rollbackRequired
}

// Argv splits a command into its arguments at white space. No shell
// quoting is interpreted: commands compare as exact argument lists.
func Argv(command string) []string { return strings.Fields(command) }

func argvs(commands []string) [][]string {
	out := make([][]string, 0, len(commands))
	for _, c := range commands {
		out = append(out, Argv(c))
	}
	return out
}

// fileProperties names the top-level properties of an input schema that
// are a file path or a list of them.
func fileProperties(schema any) []string {
	doc, _ := schema.(map[string]any)
	props, _ := doc["properties"].(map[string]any)
	var out []string
	for name, p := range props {
		ps, _ := p.(map[string]any)
		items, _ := ps["items"].(map[string]any)
		if ps["format"] == FormatFilePath || items["format"] == FormatFilePath {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
