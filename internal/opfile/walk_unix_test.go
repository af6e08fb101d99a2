//go:build unix

package opfile

import (
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// A FIFO never ends, and opening one blocks until a writer comes: the walk
// refuses it without opening it.
func TestWalkRefusesFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	if _, codes := walk(t, roomy, dir); !slices.Equal(codes, []string{"read_failed"}) {
		t.Fatalf("problems %v", codes)
	}
}
