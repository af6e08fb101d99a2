package bundle

import (
	"bytes"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/storage/memory"
)

// cappedStorage is the in-memory repository a github source is fetched
// into, with what it takes capped at limit twice over: the pack as
// received (go-git hands a storage that is a PackfileWriter the pack
// stream itself, so the cap bounds the bytes received), and the objects
// the pack inflates to. Past either, the fetch fails; so a fetch holds at
// most about twice the cap, whatever the repository holds.
type cappedStorage struct {
	*memory.Storage
	limit int64
}

// PackfileWriter takes the pack received, then stores its objects.
func (s *cappedStorage) PackfileWriter() (io.WriteCloser, error) {
	return &packWriter{s: s}, nil
}

type packWriter struct {
	s    *cappedStorage
	pack []byte
	// over: the pack passed the cap, so Close has nothing to store (go-git
	// closes the writer whatever Write said).
	over bool
}

// Write appends to the pack, growing it as append would but never past
// the cap, so the pack's memory is bounded by the cap too.
func (w *packWriter) Write(p []byte) (int, error) {
	n := int64(len(w.pack) + len(p))
	if n > w.s.limit {
		w.over, w.pack = true, nil
		return 0, fmt.Errorf("the git server sends more than %d bytes for one commit, the bundle size cap", w.s.limit)
	}
	if int(n) > cap(w.pack) {
		grown := make([]byte, len(w.pack), min(max(2*int64(cap(w.pack)), n), w.s.limit))
		copy(grown, w.pack)
		w.pack = grown
	}
	w.pack = append(w.pack, p...)
	return len(p), nil
}

// Close stores the pack's objects, counted against the cap as they are
// stored. The pack is read from memory, so deltas resolve against it
// without another copy.
func (w *packWriter) Close() error {
	if w.over || len(w.pack) == 0 {
		return nil
	}
	objects := &objectBudget{Storage: w.s.Storage, limit: w.s.limit}
	err := packfile.UpdateObjectStorage(objects, bytes.NewReader(w.pack))
	w.pack = nil
	return err
}

// objectBudget stores objects until their sizes together pass limit.
type objectBudget struct {
	*memory.Storage
	limit, used int64
}

func (b *objectBudget) SetEncodedObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
	if b.used += o.Size(); b.used > b.limit {
		return plumbing.ZeroHash, fmt.Errorf("the commit's objects hold more than %d bytes, the bundle size cap", b.limit)
	}
	return b.Storage.SetEncodedObject(o)
}
