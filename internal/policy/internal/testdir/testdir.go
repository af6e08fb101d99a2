// Package testdir writes file trees for the policy packages' tests.
package testdir

import (
	"os"
	"path/filepath"
	"testing"
)

// Write writes files (relative path -> content) into a fresh temporary
// directory and returns it.
func Write(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
