package actionapi

import (
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/route"
)

// scopeFindings checks every file path in the plan's input (the
// properties the catalog's input schema marks as file paths) against the
// plan's scope. Paths are workspace-relative and compared lexically after
// path.Clean: symlinks are not resolved, an absolute path or one that
// climbs out with .. is refused, and a forbidden file wins over any allow.
// Messages name the input field, never the path: it is an argument value.
func scopeFindings(p *Plan, v *catalog.View) []route.Finding {
	names := v.FileInputs()
	if len(names) == 0 {
		return nil
	}
	var sc Scope
	if p.Scope != nil {
		sc = *p.Scope
	}
	files, fok := cleanAll(sc.AllowedFiles)
	dirs, dok := cleanAll(sc.AllowedDirs)
	forbidden, xok := cleanAll(sc.ForbiddenFiles)
	if !fok || !dok || !xok {
		return []route.Finding{finding(route.CodePlanScopeInvalid, route.Refuse,
			"the plan's scope holds an empty, absolute or escaping path, so no file of action %s can be checked against it", p.ActionType)}
	}
	var out []route.Finding
	for _, name := range names {
		paths, ok := filePaths(name, p.Input[name])
		if !ok {
			out = append(out, finding(route.CodePlanPathInvalid, route.Refuse, "input/%s of action %s is neither a path nor a list of paths, so it cannot be checked against the scope", name, p.ActionType))
			continue
		}
		for _, fp := range paths {
			if f, bad := checkPath(p.ActionType, fp.field, fp.raw, files, dirs, forbidden); bad {
				out = append(out, f)
			}
		}
	}
	return out
}

// filePath is one path value and the input field it is in.
type filePath struct{ field, raw string }

// filePaths are the values of one file input: a string, or each string of
// a list; none when it is absent or null. false for any other shape (an
// object, a number, a list holding anything but strings): the input schema
// refuses those only under --argument-validation enforce, and a scope check
// that skipped them would let a path through unchecked.
func filePaths(name string, v any) ([]filePath, bool) {
	field := "input/" + name
	switch x := v.(type) {
	case nil:
		return nil, true
	case string:
		return []filePath{{field, x}}, true
	case []any:
		out := make([]filePath, 0, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, filePath{field + "/" + strconv.Itoa(i), s})
		}
		return out, true
	}
	return nil, false
}

func checkPath(action, field, raw string, files, dirs, forbidden []string) (route.Finding, bool) {
	p, ok := clean(raw)
	switch {
	case !ok && (raw == "" || strings.ContainsAny(raw, "\\\x00")):
		return finding(route.CodePlanPathInvalid, route.Refuse, "%s of action %s is empty or holds a backslash or NUL, which gated does not compare", field, action), true
	case !ok:
		return finding(route.CodePlanPathOutsideWorkspace, route.Refuse, "%s of action %s is absolute or climbs out of the workspace with ..", field, action), true
	case slices.Contains(forbidden, p):
		return finding(route.CodePlanPathForbidden, route.Refuse, "%s of action %s is one of the scope's forbiddenFiles", field, action), true
	case slices.Contains(files, p) || slices.ContainsFunc(dirs, func(d string) bool { return within(p, d) }):
		return route.Finding{}, false
	}
	return finding(route.CodePlanPathOutOfScope, route.Refuse, "%s of action %s is in neither the scope's allowedFiles nor its allowedDirs", field, action), true
}

// clean normalises a workspace-relative path; it reports false for an
// empty, absolute or escaping path, or one with a backslash or NUL (a
// Windows separator gated would compare as a plain character).
func clean(raw string) (string, bool) {
	if raw == "" || strings.ContainsAny(raw, "\\\x00") || path.IsAbs(raw) {
		return "", false
	}
	p := path.Clean(raw)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	return p, true
}

func cleanAll(raws []string) ([]string, bool) {
	out := make([]string, 0, len(raws))
	for _, r := range raws {
		p, ok := clean(r)
		if !ok {
			return nil, false
		}
		out = append(out, p)
	}
	return out, true
}

// within: p is dir or below it; "." is the whole workspace.
func within(p, dir string) bool {
	return dir == "." || p == dir || strings.HasPrefix(p, dir+"/")
}
