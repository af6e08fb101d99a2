//go:build unix

package testcpu

import (
	"syscall"
	"testing"
	"time"
)

// Time is the user and system CPU time this process has used.
func Time(tb testing.TB) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
