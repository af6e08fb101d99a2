package bundle

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// inMemoryObjectBytes is the largest object go-git reads into memory, and
// the size of its object cache: larger objects are streamed from the pack
// on disk, so what a fetch holds in memory is the files read, not the
// pack and every object it inflates to (go-git's in-memory storage kept
// both, 7–8 times the cap in RSS).
const inMemoryObjectBytes = 1 << 20

// cappedStorage is the on-disk repository, in a private temporary
// directory, that a github source is fetched into, with the pack received
// capped at limit twice over: the pack as received (go-git hands a storage
// that is a PackfileWriter the pack stream itself, so the cap bounds the
// bytes received and written), and what its objects inflate to.
type cappedStorage struct {
	*filesystem.Storage
	dir   string
	limit int64
}

// newCappedStorage creates the repository in a new temporary directory,
// which Close removes.
func newCappedStorage(limit int64) (*cappedStorage, error) {
	dir, err := os.MkdirTemp("", "gated-git-")
	if err != nil {
		return nil, fmt.Errorf("a temporary directory to fetch into cannot be created: %w", err)
	}
	st := filesystem.NewStorageWithOptions(osfs.New(dir), cache.NewObjectLRU(inMemoryObjectBytes),
		filesystem.Options{ExclusiveAccess: true, LargeObjectThreshold: inMemoryObjectBytes})
	return &cappedStorage{Storage: st, dir: dir, limit: limit}, nil
}

// Close closes the repository and removes it from disk.
func (s *cappedStorage) Close() error {
	cerr := s.Storage.Close()
	if err := os.RemoveAll(s.dir); err != nil {
		return err
	}
	return cerr
}

// PackfileWriter takes the pack received, up to the cap, into a file of
// its own; Close hands it to go-git once checkInflated passed it. go-git
// inflates each object into memory as it indexes a pack, so what the
// objects inflate to is checked first, from their headers alone.
func (s *cappedStorage) PackfileWriter() (io.WriteCloser, error) {
	f, err := os.CreateTemp(s.dir, "received-*.pack")
	if err != nil {
		return nil, err
	}
	return &packWriter{s: s, file: f}, nil
}

type packWriter struct {
	s       *cappedStorage
	file    *os.File
	written int64
	// over: the pack passed the cap, so Close has nothing to store (go-git
	// closes the writer whatever Write said).
	over bool
}

func (w *packWriter) Write(p []byte) (int, error) {
	if w.written += int64(len(p)); w.written > w.s.limit {
		w.over = true
		return 0, fmt.Errorf("the git server sends more than %d bytes for one commit, the bundle size cap", w.s.limit)
	}
	return w.file.Write(p)
}

func (w *packWriter) Close() (err error) {
	defer func() {
		if cerr := w.file.Close(); err == nil {
			err = cerr
		}
	}()
	if w.over || w.written == 0 {
		return nil
	}
	if _, err := w.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := checkInflated(w.file, w.s.limit); err != nil {
		return err
	}
	if _, err := w.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	pw, err := w.s.Storage.PackfileWriter()
	if err != nil {
		return err
	}
	if _, err := io.Copy(pw, w.file); err != nil {
		_ = pw.Close()
		return err
	}
	return pw.Close()
}

// checkInflated sums what the pack's objects inflate to — a whole
// object's size from its header, a delta's from the target size its
// instructions begin with — and fails past limit. Objects are inflated to
// be read past, but into nothing: the check holds no object in memory.
func checkInflated(pack io.Reader, limit int64) error {
	sc := packfile.NewScanner(pack)
	_, count, err := sc.Header()
	if err != nil {
		return err
	}
	var total int64
	for range count {
		h, err := sc.NextObjectHeader()
		if err != nil {
			return err
		}
		size := h.Length
		if h.Type.IsDelta() {
			var d deltaHead
			if _, _, err := sc.NextObject(&d); err != nil {
				return err
			}
			if size, err = d.targetSize(); err != nil {
				return err
			}
		}
		if total += size; total > limit {
			return fmt.Errorf("the commit's objects hold more than %d bytes, the bundle size cap", limit)
		}
	}
	return nil
}

// deltaHead keeps the start of a delta, where its base's and its target's
// sizes are, and discards the rest.
type deltaHead struct{ b []byte }

// deltaHeadBytes holds two sizes of up to 10 bytes each.
const deltaHeadBytes = 20

func (d *deltaHead) Write(p []byte) (int, error) {
	if n := deltaHeadBytes - len(d.b); n > 0 {
		d.b = append(d.b, p[:min(n, len(p))]...)
	}
	return len(p), nil
}

// targetSize decodes the second of the delta's two leading sizes, each
// seven bits a byte, least significant first, the top bit saying more
// follow.
func (d *deltaHead) targetSize() (int64, error) {
	r := bytes.NewReader(d.b)
	if _, err := binary.ReadUvarint(r); err != nil {
		return 0, fmt.Errorf("a delta in the pack has no base size: %w", err)
	}
	n, err := binary.ReadUvarint(r)
	if err != nil || n > math.MaxInt64 {
		return 0, fmt.Errorf("a delta in the pack has no valid target size")
	}
	return int64(n), nil
}
