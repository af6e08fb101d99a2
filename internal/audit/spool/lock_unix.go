//go:build unix

package spool

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// flock takes an exclusive lock on f without waiting. The kernel drops it
// when the last descriptor of that open file closes, a SIGKILL included.
func flock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrLocked
	}
	if err != nil {
		return fmt.Errorf("lock spool directory: %w", err)
	}
	return nil
}

// diskAvail is the space the file system holding dir still gives an
// unprivileged writer.
func diskAvail(dir string) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}
