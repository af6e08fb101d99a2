package doctor

import (
	"regexp"
	"strings"
)

// probeTools are tool names a matcher must match to count as "every tool":
// each runtime's shell and file tools, an MCP tool, and doctor's canary.
var probeTools = []string{
	"Bash", "Read", "Write", "Edit", "Glob", "Grep", "WebFetch", "Task",
	"apply_patch", "exec_command", "mcp__github__create_issue", canaryTool,
}

// exactMatcher is Claude Code's and Codex's test for a matcher of tool
// names (Bash, Edit|Write), compared whole; anything else is a regex.
var exactMatcher = regexp.MustCompile(`^[A-Za-z0-9_|]+$`)

// matchesAll reports whether a PreToolUse matcher matches every tool:
// empty and "*" do, a list of names does not, and a regex must match every
// probe (Go's RE2 standing in for the runtime's engine, which agrees on
// the patterns people write: .*, ^.*$, .+). It returns the probes missed.
func matchesAll(m string) (bool, []string) {
	if m == "" || m == "*" {
		return true, nil
	}
	var missed []string
	if exactMatcher.MatchString(m) {
		names := strings.Split(m, "|")
		for _, p := range probeTools {
			found := false
			for _, n := range names {
				found = found || n == p
			}
			if !found {
				missed = append(missed, p)
			}
		}
		return len(missed) == 0, missed
	}
	re, err := regexp.Compile(m)
	if err != nil {
		return false, []string{"any: the runtime ignores a matcher that does not compile"}
	}
	for _, p := range probeTools {
		if !re.MatchString(p) {
			missed = append(missed, p)
		}
	}
	return len(missed) == 0, missed
}
