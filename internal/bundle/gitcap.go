package bundle

import (
	"fmt"
	"io"
	"os"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
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
// capped at limit (go-git hands a storage that is a PackfileWriter the
// pack stream itself, so the cap bounds the bytes received and written).
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

// PackfileWriter takes the pack received, up to the cap.
func (s *cappedStorage) PackfileWriter() (io.WriteCloser, error) {
	w, err := s.Storage.PackfileWriter()
	if err != nil {
		return nil, err
	}
	return &packWriter{WriteCloser: w, limit: s.limit}, nil
}

type packWriter struct {
	io.WriteCloser
	limit, written int64
}

func (w *packWriter) Write(p []byte) (int, error) {
	if w.written += int64(len(p)); w.written > w.limit {
		return 0, fmt.Errorf("the git server sends more than %d bytes for one commit, the bundle size cap", w.limit)
	}
	return w.WriteCloser.Write(p)
}

// checkSize sums the sizes of the trees and blobs of tree, each object
// once, from their headers alone, and fails past limit: what one commit
// holds is capped whatever its pack compressed it to, before a file is
// read.
func checkSize(st *cappedStorage, tree plumbing.Hash, limit int64) error {
	seen := map[plumbing.Hash]bool{}
	var total int64
	var walk func(h plumbing.Hash, isTree bool) error
	walk = func(h plumbing.Hash, isTree bool) error {
		if seen[h] {
			return nil
		}
		seen[h] = true
		size, err := st.EncodedObjectSize(h)
		if err != nil {
			return fmt.Errorf("object %s: %w", h, err)
		}
		if total += size; total > limit {
			return fmt.Errorf("the commit's objects hold more than %d bytes, the bundle size cap", limit)
		}
		if !isTree {
			return nil
		}
		t, err := object.GetTree(st, h)
		if err != nil {
			return err
		}
		for _, e := range t.Entries {
			if e.Mode == filemode.Submodule {
				continue // a commit of another repository, not fetched
			}
			if err := walk(e.Hash, e.Mode == filemode.Dir); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(tree, true)
}
