// Package testtree writes trees of files for tests: catalogs, policies,
// bundle workspaces and repositories, each given as slash paths and their
// contents.
package testtree

import (
	"os"
	"path/filepath"
	"testing"
)

// Write writes files (slash paths relative to dir, each with its
// content) below dir, creating folders as needed, and returns dir.
func Write(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
