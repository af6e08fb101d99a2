// Package spool is a durable local queue of opaque records: append-only
// segment files, each record framed with its length and a CRC32C, fsynced
// before Append returns. The audit writer parks records here while
// PostgreSQL is away and replays the sealed segments, oldest first, when it
// comes back; a segment is removed only after its records are committed.
//
// A spool directory belongs to one process at a time: Open takes an OS file
// lock on it, held until Close. Processes sharing one --spool-dir each Claim
// a subdirectory of it, and Adopt the subdirectories whose owner is gone
// (their lock is free) to replay what those left behind.
//
// Appends are group-committed: one goroutine per spool writes every append
// waiting at that moment with one write and one fsync, so concurrent callers
// share the fsync instead of queueing behind each other's.
package spool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// ErrFull is returned when an append would take the spool past its size limit.
var ErrFull = errors.New("spool full")

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("spool closed")

// ErrLocked is returned by Open when another process (or another open spool
// in this one) holds the directory.
var ErrLocked = errors.New("spool directory is in use by another process")

const probePrefix = ".probe-"

// Spool is safe for concurrent use.
type Spool struct {
	dir       string
	maxBytes  int64
	lock      *os.File // holds the directory's flock until Close
	adopted   bool     // left by a process that is gone: replayed, never appended to
	removable bool     // a per-process subdirectory: removed on Close once empty

	// capMu makes the size limit check and its accounting one step; it is
	// never held across I/O, so Reserve on the hot path does not wait for an
	// fsync (nor for statfs).
	capMu    sync.Mutex
	size     atomic.Int64 // bytes in all segments, sealed and active
	reserved atomic.Int64 // bytes promised to records not yet appended
	healthy  atomic.Bool  // the last append or probe reached the disk
	disk     atomic.Pointer[diskStat]
	closed   atomic.Bool

	mu      sync.Mutex // the files; held across their I/O, so never by an appending caller
	active  *os.File   // nil until the next append
	activeN int64
	nextSeq uint64

	// Appends wait in pending for the appender goroutine (appendLoop);
	// pendMu is held only to add or take them.
	pendMu   sync.Mutex
	pending  []*appendReq
	stopping bool          // Close has begun: no more appends are taken
	wake     chan struct{} // one token: pending may hold appends
	stopped  chan struct{} // closed when appendLoop returns; nil for an adopted spool
	onCommit atomic.Pointer[func(frames int)]
}

// Open opens (creating if needed) the spool in dir and locks it. Segments
// left by an earlier process are sealed: they are replayed, never appended
// to, so a torn tail from a crash never sits in front of new records.
// maxBytes <= 0 means no limit. Whether the directory can be written is
// probed now (see Healthy) but does not fail Open: a disk that is full or
// read-only at start may recover, and the caller decides what to do meanwhile.
func Open(dir string, maxBytes int64) (*Spool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create spool dir: %w", err)
	}
	s, err := openLocked(dir, maxBytes, true)
	if err != nil {
		return nil, err
	}
	_ = s.Probe()
	s.wake, s.stopped = make(chan struct{}, 1), make(chan struct{})
	go s.appendLoop()
	return s, nil
}

func openLocked(dir string, maxBytes int64, create bool) (*Spool, error) {
	lock, err := lockDir(dir, create)
	if err != nil {
		return nil, err
	}
	s := &Spool{dir: dir, maxBytes: maxBytes, lock: lock}
	s.healthy.Store(true)
	segs, err := s.list()
	if err != nil {
		_ = lock.Close()
		return nil, err
	}
	var size int64
	for _, p := range segs {
		st, err := os.Stat(p)
		if err != nil {
			_ = lock.Close()
			return nil, fmt.Errorf("stat spool segment: %w", err)
		}
		size += st.Size()
		if seq, ok := parseSeq(filepath.Base(p)); ok && seq >= s.nextSeq {
			s.nextSeq = seq + 1
		}
	}
	s.size.Store(size)
	return s, nil
}

// Dir is the directory the spool holds.
func (s *Spool) Dir() string { return s.dir }

// Adopted reports whether the spool was left by another process.
func (s *Spool) Adopted() bool { return s.adopted }

// Probe checks that the directory takes a durable write (a small file
// created, fsynced and removed) and records the answer in Healthy. A spool
// whose appends failed uses it to notice that the disk is back.
func (s *Spool) Probe() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.probeLocked()
	s.healthy.Store(err == nil)
	return err
}

func (s *Spool) probeLocked() error {
	if s.closed.Load() {
		return ErrClosed
	}
	f, err := os.CreateTemp(s.dir, probePrefix)
	if err != nil {
		return fmt.Errorf("spool probe: %w", err)
	}
	name := f.Name()
	defer os.Remove(name)
	_, err = f.Write([]byte{0})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Remove(name)
	}
	if err == nil {
		err = syncDir(s.dir)
	}
	if err != nil {
		return fmt.Errorf("spool probe: %w", err)
	}
	return nil
}

// Size returns the bytes held in all segments.
func (s *Spool) Size() int64 { return s.size.Load() }

// Healthy reports whether the last append or probe reached the disk (true
// before any). A full spool is still healthy: see Room and Reserve.
func (s *Spool) Healthy() bool { return s.healthy.Load() && !s.closed.Load() }

// Close seals the active segment and lets go of the directory. A
// subdirectory that Claim or Adopt opened and that holds no segment any
// more is removed: the lock file goes first, so a process that opened it
// just before sees a lock on nothing and moves on.
func (s *Spool) Close() error {
	if s.stopped != nil {
		// Appends already taken are written; later ones fail as ErrClosed.
		s.pendMu.Lock()
		s.stopping = true
		s.pendMu.Unlock()
		s.signal()
		<-s.stopped
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Swap(true) {
		return nil
	}
	err := s.sealLocked()
	if s.removable {
		if segs, lerr := s.list(); lerr == nil && len(segs) == 0 {
			probes, _ := filepath.Glob(filepath.Join(s.dir, probePrefix+"*")) // left by a crash mid-probe
			for _, p := range probes {
				_ = os.Remove(p)
			}
			_ = os.Remove(filepath.Join(s.dir, lockName))
			_ = os.Remove(s.dir) // fails harmlessly if a new owner has moved in
		}
	}
	if cerr := s.lock.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("release spool lock: %w", cerr)
	}
	return err
}
