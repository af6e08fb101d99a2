package doctor

import (
	"path/filepath"
	goruntime "runtime"
)

// claudeManaged is where an administrator's managed Claude Code settings
// live.
func claudeManaged() []string {
	switch goruntime.GOOS {
	case "darwin":
		return []string{"/Library/Application Support/ClaudeCode/managed-settings.json"}
	case "windows":
		return []string{`C:\Program Files\ClaudeCode\managed-settings.json`}
	}
	return []string{"/etc/claude-code/managed-settings.json"}
}

// claudeCodeFiles are Claude Code's settings as it merges them: managed
// settings, then the user's (~/.claude or $CLAUDE_CONFIG_DIR), the
// project's .claude/settings.json and .claude/settings.local.json.
func claudeCodeFiles(o *Options) []settingsFile {
	managed := o.Managed
	if managed == nil {
		managed = claudeManaged()
	}
	userDir := o.getenv("CLAUDE_CONFIG_DIR")
	if userDir == "" {
		userDir = filepath.Join(o.getenv("HOME"), ".claude")
	}
	var files []settingsFile
	for _, p := range managed {
		files = append(files, settingsFile{p, true})
	}
	return append(files,
		settingsFile{path: filepath.Join(userDir, "settings.json")},
		settingsFile{path: filepath.Join(o.Dir, ".claude", "settings.json")},
		settingsFile{path: filepath.Join(o.Dir, ".claude", "settings.local.json")})
}
