// Package saved keeps on local disk the last kill list a process read from
// PostgreSQL, so that one which starts while the database is away, or
// loses it, decides from that list for a bounded time instead of refusing
// every call.
//
// The file is replaced atomically (a temporary file in the same directory,
// fsynced, renamed over it), is readable by its owner only, and carries the
// SHA-256 of its content: a torn or damaged file is refused whole, never
// half-read. The hash is no signature — whoever can write the directory
// can write a list — so the directory must be as private as the audit
// spool beside it.
package saved

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/gatedhq/gated/internal/kill"
)

// FileName is the saved list's name in its directory.
const FileName = "kill-list.json"

// maxBytes bounds the file read: far more than any kill list, and a cap on
// what a damaged file can make gated allocate.
const maxBytes = 16 << 20

// version is the content's format.
const version = 1

// skew is how far ahead of the clock a confirmation may be dated before
// the list is refused: a list from the future would stay fresh too long.
const skew = time.Minute

// ErrDamaged is wrapped by every error about a file that is there but
// cannot be used.
var ErrDamaged = errors.New("the saved kill list cannot be used")

type file struct {
	Content json.RawMessage `json:"content"`
	SHA256  string          `json:"sha256"`
}

type content struct {
	Version   int         `json:"version"`
	Confirmed time.Time   `json:"confirmed"`
	Kills     []kill.Kill `json:"kills"`
}

// Save replaces the list saved at path with kills, confirmed at confirmed.
// It keeps of each kill only what matching a call needs: its reason and
// who set it are the operator's, never told to the agents being stopped,
// and the spool directory may be one an agent can read (gated mcp, started
// by a coding agent, spools in its working directory by default).
func Save(path string, kills []kill.Kill, confirmed time.Time) error {
	kept := make([]kill.Kill, len(kills))
	for i, k := range kills {
		kept[i] = kill.Kill{ID: k.ID, Scope: k.Scope, Value: k.Value, ExpiresAt: k.ExpiresAt, LiftedAt: k.LiftedAt}
	}
	c, err := json.Marshal(content{Version: version, Confirmed: confirmed.UTC(), Kills: kept})
	if err != nil {
		return fmt.Errorf("the kill list cannot be saved: %w", err)
	}
	sum := sha256.Sum256(c)
	raw, err := json.Marshal(file{Content: c, SHA256: hex.EncodeToString(sum[:])})
	if err != nil {
		return fmt.Errorf("the kill list cannot be saved: %w", err)
	}
	if err := replace(path, raw); err != nil {
		return fmt.Errorf("the kill list cannot be saved: %w", err)
	}
	return nil
}

// replace writes raw to path atomically. By hand rather than with
// github.com/google/renameio, which does not build on Windows.
func replace(path string, raw []byte) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+FileName+"-*") // 0600
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(raw); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	// The rename is durable once the directory is; where a directory
	// cannot be synced (Windows) the rename stands as the OS keeps it.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// Load reads the list saved at path and when it was confirmed, checked
// against its hash and against now (a confirmation dated ahead of now is
// refused). An error wrapping fs.ErrNotExist when there is none, ErrDamaged
// when there is one that cannot be used.
func Load(path string, now time.Time) ([]kill.Kill, time.Time, error) {
	// Save writes a regular file: anything else there (a symlink to a list
	// saved elsewhere, a FIFO that would hold up the start) is not its.
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, time.Time{}, fmt.Errorf("%w: it is not a regular file (%s)", ErrDamaged, fi.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	switch {
	case err != nil:
		return nil, time.Time{}, fmt.Errorf("%w: %w", ErrDamaged, err)
	case len(raw) > maxBytes:
		return nil, time.Time{}, fmt.Errorf("%w: it is larger than %d bytes", ErrDamaged, maxBytes)
	}
	var fl file
	if err := json.Unmarshal(raw, &fl); err != nil {
		return nil, time.Time{}, fmt.Errorf("%w: it is not JSON: %w", ErrDamaged, err)
	}
	sum := sha256.Sum256(fl.Content)
	if want, err := hex.DecodeString(fl.SHA256); err != nil || !bytes.Equal(want, sum[:]) {
		return nil, time.Time{}, fmt.Errorf("%w: its content does not match its SHA-256", ErrDamaged)
	}
	var c content
	dec := json.NewDecoder(bytes.NewReader(fl.Content))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, time.Time{}, fmt.Errorf("%w: %w", ErrDamaged, err)
	}
	switch {
	case c.Version != version:
		return nil, time.Time{}, fmt.Errorf("%w: format %d is not %d", ErrDamaged, c.Version, version)
	case c.Confirmed.IsZero():
		return nil, time.Time{}, fmt.Errorf("%w: it says no time it was confirmed at", ErrDamaged)
	case c.Confirmed.After(now.Add(skew)):
		return nil, time.Time{}, fmt.Errorf("%w: it was confirmed at %s, ahead of the clock", ErrDamaged, c.Confirmed.Format(time.RFC3339))
	}
	for _, k := range c.Kills {
		// A scope this gated does not know could hide a kill: the whole
		// list is refused, as the store refuses such a row.
		if _, err := kill.ParseScope(string(k.Scope)); err != nil {
			return nil, time.Time{}, fmt.Errorf("%w: kill %s: %w", ErrDamaged, k.ID, err)
		}
	}
	if c.Kills == nil {
		c.Kills = []kill.Kill{}
	}
	return c.Kills, c.Confirmed, nil
}
