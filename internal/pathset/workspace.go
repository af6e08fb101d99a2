package pathset

import "strings"

// Outside reports whether p leads outside the directory workspace, an
// absolute path. It is lexical: p is cleaned, not resolved, so a symlink
// inside the workspace that points out of it is not seen. A relative p is
// taken relative to the workspace and is outside when ".." climbs above
// it. A path that starts with the home directory ("~", "$HOME") or with
// any other variable ("$TMPDIR/x"), whose value gated does not know, is
// outside unless the workspace is spelled the same way. Every reading of
// p counts (see Canonical): "..\..\x" is outside. A Windows workspace
// ("C:\src\app") is compared with p's Windows reading, ignoring case as
// Windows does.
func Outside(p, workspace string) bool {
	ws, wn := readings(workspace)
	rs, n := readings(p)
	if outside(rs[0].full, ws[0].full) {
		return true
	}
	if n == 2 {
		root := ws[wn-1].full
		if outside(strings.ToLower(rs[1].full), strings.ToLower(root)) {
			return true
		}
	}
	return false
}

func outside(p, root string) bool {
	switch {
	case strings.HasPrefix(p, "$") || strings.HasPrefix(p, "%"):
		return true
	case isAbs(p) || strings.HasPrefix(p, Home):
		return p != root && !strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
	default:
		return p == ".." || strings.HasPrefix(p, "../")
	}
}

// isAbs reports whether a cleaned path is absolute: "/x", or "c:/x" on
// Windows.
func isAbs(p string) bool {
	return strings.HasPrefix(p, "/") || len(p) >= 3 && p[1] == ':' && p[2] == '/' && isLetter(p[0])
}
