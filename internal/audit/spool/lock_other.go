//go:build !unix

package spool

import (
	"errors"
	"os"
)

// flock is unix-only; elsewhere a spool cannot prove it is the only
// writer of its directory, so it refuses to open one.
func flock(*os.File) error {
	return errors.New("spool directories need a unix file lock (flock)")
}

// diskAvail is unknown off unix: only the size limit bounds reservations.
func diskAvail(string) (int64, bool) { return 0, false }
