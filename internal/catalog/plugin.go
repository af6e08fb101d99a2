package catalog

import (
	"slices"
	"strings"

	"github.com/gatedhq/gated/internal/route"
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
	writeLike            bool // pluginWriteLike
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

// The permissions an action.json may declare that gated understands, and
// their values. The LTS shows filesystem "workspace"; "none" is the absence
// of it. network is not in the LTS: gated knows only "none" there, so an
// action that may reach the network is write-like.
var knownPermissions = map[string][]string{
	"commands":   nil, // checked against verification commands, any list
	"filesystem": {"none", "workspace"},
	"network":    {"none"},
}

// pluginWriteLike derives from what an action.json declares whether it may
// change anything, failing closed: it does when it names anything it
// mutates, when its permissions hold a key or a value gated does not know
// (a misspelt "filesytem", "None", "read-only"), when it may reach the
// network, or when it is R1 or above (or of no known tier) and does not
// declare filesystem "none". An R0 is the LTS's read-only diagnostics: its
// workspace access reads.
func pluginWriteLike(tier string, mutates []string, permissions any) bool {
	if len(mutates) > 0 {
		return true
	}
	perms, _ := permissions.(map[string]any)
	for key, val := range perms {
		values, known := knownPermissions[key]
		if !known {
			return true
		}
		if values == nil {
			continue
		}
		if s, ok := val.(string); !ok || !slices.Contains(values, s) {
			return true
		}
	}
	return tier != "R0" && perms["filesystem"] != "none"
}

// WriteLike reports whether a call of the tool may change anything: for an
// action.json what it declares (pluginWriteLike; its R4 never executes and
// counts as write-like too), for any other tool the catalog's write
// category. The Action API's rollback and verification rules apply to
// write-like actions.
func (v *View) WriteLike() bool {
	if v.plugin != nil {
		return v.plugin.writeLike || v.NeverExecute
	}
	return v.Category() == route.Write
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
