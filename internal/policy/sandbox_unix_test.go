//go:build unix

package policy

import (
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO never ends, and opening one blocks until a writer comes: the load
// must refuse it without opening it.
func TestPolicyFileFIFORefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.rego"), 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	_, err := Load([]string{dir}, nil)
	assertProblems(t, err, "read_failed")
}
