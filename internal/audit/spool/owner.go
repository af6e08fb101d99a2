package spool

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

const lockName = ".lock"

// lockDir takes the directory's lock without waiting. flock locks belong to
// an open file description, so two spools in one process exclude each other
// as two processes do, and a killed process's lock goes with it.
func lockDir(dir string, create bool) (*os.File, error) {
	p := filepath.Join(dir, lockName)
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(p, flags, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open spool lock: %w", err)
	}
	if err := flock(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	// A process retiring the directory unlinks the lock file before it lets
	// go of it; a lock taken on that unlinked file guards nothing.
	held, err1 := f.Stat()
	now, err2 := os.Stat(p)
	if err1 != nil || err2 != nil || !os.SameFile(held, now) {
		_ = f.Close()
		return nil, ErrLocked
	}
	return f, nil
}

// ownerName turns an owner (a pod or host name) into one safe path element.
func ownerName(owner string) string {
	b := []byte(owner)
	for i, c := range b {
		ok := c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !ok {
			b[i] = '_'
		}
	}
	name := strings.TrimLeft(string(b), ".") // no ".", "..", or hidden names
	if len(name) > 100 {
		name = name[:100]
	}
	if name == "" {
		name = "gated"
	}
	return name
}

// Claim opens this process's own spool under root: the subdirectory named
// after owner (a stable pod or host name, so a restarted process finds what
// it left), or, while another live process holds that one, the name with a
// random suffix.
func Claim(root, owner string, maxBytes int64) (*Spool, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("create spool dir: %w", err)
	}
	name := ownerName(owner)
	for range 8 {
		s, err := Open(filepath.Join(root, name), maxBytes)
		if err == nil {
			s.removable = true
			return s, nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			continue // a process retiring that directory removed it under us: try again
		}
		if !errors.Is(err, ErrLocked) {
			return nil, err
		}
		var suffix [4]byte
		_, _ = rand.Read(suffix[:])
		name = ownerName(owner) + "-" + hex.EncodeToString(suffix[:])
	}
	return nil, fmt.Errorf("claim a spool directory under %s: %w", root, ErrLocked)
}

// Adopt locks, and returns for replay, the spools under root whose owner is
// gone: subdirectories whose lock is free, and segments an older gated left
// in root itself. held reports directories this process already has open.
// A directory another live process holds is skipped.
func Adopt(root string, held func(dir string) bool) ([]*Spool, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("read spool dir: %w", err)
	}
	var out []*Spool
	var errs []error
	try := func(dir string, sub bool) {
		if held(dir) {
			return
		}
		s, err := openLocked(dir, 0, !sub) // a subdirectory without a lock file is no spool
		switch {
		case err == nil:
			s.adopted, s.removable = true, sub
			if segs, lerr := s.list(); lerr == nil && len(segs) == 0 {
				_ = s.Close() // nothing to replay: just tidy the directory away
				return
			}
			out = append(out, s)
		case errors.Is(err, ErrLocked), errors.Is(err, fs.ErrNotExist):
			// alive elsewhere, or not a spool (no lock file), or retired just now
		default:
			errs = append(errs, err)
		}
	}
	legacy := false
	for _, e := range ents {
		switch {
		case e.IsDir() && !strings.HasPrefix(e.Name(), "."):
			try(filepath.Join(root, e.Name()), true)
		case e.Type().IsRegular():
			if _, ok := parseSeq(e.Name()); ok {
				legacy = true
			}
		}
	}
	if legacy {
		try(root, false)
	}
	return out, errors.Join(errs...)
}
