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
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrFull is returned when an append would take the spool past its size limit.
var ErrFull = errors.New("spool full")

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("spool closed")

// ErrLocked is returned by Open when another process (or another open spool
// in this one) holds the directory.
var ErrLocked = errors.New("spool directory is in use by another process")

const (
	headerSize = 8 // uint32 length + uint32 CRC32C, little endian
	// maxRecord bounds a frame's length so a torn header cannot make the
	// reader allocate gigabytes.
	maxRecord   = 16 << 20
	segPrefix   = "seg-"
	segSuffix   = ".log"
	segmentSize = 8 << 20 // rotate after this many bytes so replay frees disk in steps
	lockName    = ".lock"
	probePrefix = ".probe-"

	// A group commit takes the waiting appends up to about this many bytes
	// and frames (an append larger than that goes alone): a bounded write,
	// and a bounded wait for the first caller in it.
	groupBytes  = 1 << 20
	groupFrames = 4096
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// FrameSize is the bytes a record of n bytes takes in a segment.
func FrameSize(n int) int64 { return int64(headerSize + n) }

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

// appendReq is one Append waiting for its group commit.
type appendReq struct {
	buf    []byte // the framed records
	frames int
	res    int64      // reserved bytes the records use up
	done   chan error // buffered: the appender never waits for the caller
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

// Dir is the directory the spool holds.
func (s *Spool) Dir() string { return s.dir }

// Adopted reports whether the spool was left by another process.
func (s *Spool) Adopted() bool { return s.adopted }

func parseSeq(name string) (uint64, bool) {
	if !strings.HasPrefix(name, segPrefix) || !strings.HasSuffix(name, segSuffix) {
		return 0, false
	}
	var seq uint64
	_, err := fmt.Sscanf(strings.TrimSuffix(strings.TrimPrefix(name, segPrefix), segSuffix), "%d", &seq)
	return seq, err == nil
}

// list returns every segment path, oldest first (zero-padded names sort by sequence).
func (s *Spool) list() ([]string, error) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("read spool dir: %w", err)
	}
	var out []string
	for _, e := range ents {
		if _, ok := parseSeq(e.Name()); ok && e.Type().IsRegular() {
			out = append(out, filepath.Join(s.dir, e.Name()))
		}
	}
	slices.Sort(out)
	return out, nil
}

// Reserve promises n bytes of the size limit to a record that may be
// appended later, so that record cannot be refused as ErrFull. It reports
// false when the limit leaves no room. Release what is not appended.
func (s *Spool) Reserve(n int64) bool {
	avail, known := s.diskAvail() // before capMu: statfs may wait on the file system
	s.capMu.Lock()
	defer s.capMu.Unlock()
	if s.closed.Load() || s.adopted || (s.maxBytes > 0 && s.size.Load()+s.reserved.Load()+n > s.maxBytes) || (known && !s.diskFits(avail, n)) {
		return false
	}
	s.reserved.Add(n)
	return true
}

// diskHolds reports whether the disk has room for n more bytes beside
// what is already reserved, in whole pages: a full disk fails appends
// only when they happen, and an async record accepted before then would be
// lost, so a reservation must see the disk as it is now.
func (s *Spool) diskHolds(n int64) bool {
	avail, ok := s.diskAvail()
	return !ok || s.diskFits(avail, n)
}

// diskCacheFor is how long a statfs of the spool's file system stands in
// for the next ones. Every async record reserves room, and a statfs each
// took a system call per decision; the spool's own appends since are
// subtracted from the figure, so only other writers filling the disk within
// this window go unseen (as they can between any statfs and the append).
const diskCacheFor = 50 * time.Millisecond

// diskStat is one statfs: when, the free bytes it found, and the spool's
// size then.
type diskStat struct {
	at          time.Time
	avail, size int64
}

// diskAvail is the free space on the spool's file system: a statfs at most
// diskCacheFor old, less what the spool has written since.
func (s *Spool) diskAvail() (int64, bool) {
	if d := s.disk.Load(); d != nil && time.Since(d.at) < diskCacheFor {
		// Segments removed since make this smaller than the truth: erring
		// on the side of no room.
		return d.avail - max(0, s.size.Load()-d.size), true
	}
	size := s.size.Load()
	avail, ok := diskAvail(s.dir)
	if ok {
		s.disk.Store(&diskStat{at: time.Now(), avail: avail, size: size})
	}
	return avail, ok
}

// diskFits is diskHolds for a file system with avail bytes free.
func (s *Spool) diskFits(avail, n int64) bool {
	const page = 4096
	return avail >= s.reserved.Load()+(n+page-1)/page*page+page
}

// Release gives back reserved bytes.
func (s *Spool) Release(n int64) {
	if n != 0 {
		s.reserved.Add(-n)
	}
}

// Room reports whether a record of n bytes would fit now.
func (s *Spool) Room(n int64) bool {
	return (s.maxBytes <= 0 || s.size.Load()+s.reserved.Load()+n <= s.maxBytes) && s.diskHolds(n)
}

// Append writes the records, together, and fsyncs before returning: once it
// returns nil, the records survive a crash. Appends waiting at the same
// time share one write and one fsync; an append that does not fit the size
// limit fails alone (ErrFull), a failed write fails every append in it. On
// a failed write the segment is cut back to its last good length and
// sealed.
func (s *Spool) Append(records ...[]byte) error { return s.AppendReserved(0, records...) }

// AppendReserved is Append for records that hold res reserved bytes: the
// reservation is used up when they are appended and kept when they are not.
//
// The caller waits for its own result on a channel, never on a lock held
// across the write: the appender goroutine does the I/O.
func (s *Spool) AppendReserved(res int64, records ...[]byte) error {
	var n int
	for _, r := range records {
		if len(r) > maxRecord {
			return fmt.Errorf("spool record of %d bytes exceeds %d", len(r), maxRecord)
		}
		n += headerSize + len(r)
	}
	buf := make([]byte, 0, n)
	for _, r := range records {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(r)))
		buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(r, castagnoli))
		buf = append(buf, r...)
	}

	if s.closed.Load() {
		return ErrClosed
	}
	if s.adopted {
		return errors.New("spool: a spool adopted from another process takes no appends")
	}
	req := &appendReq{buf: buf, frames: len(records), res: res, done: make(chan error, 1)}
	s.pendMu.Lock()
	if s.stopping {
		s.pendMu.Unlock()
		return ErrClosed
	}
	s.pending = append(s.pending, req)
	s.pendMu.Unlock()
	s.signal()
	return <-req.done
}

// signal wakes the appender; a token already there will do.
func (s *Spool) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// appendLoop group-commits the pending appends until Close, and answers
// what was pending when Close began before it returns.
func (s *Spool) appendLoop() {
	defer close(s.stopped)
	for {
		s.pendMu.Lock()
		group := s.nextGroup()
		stop := len(group) == 0 && s.stopping
		s.pendMu.Unlock()
		switch {
		case stop:
			return
		case len(group) > 0:
			s.commit(group)
		default:
			<-s.wake
		}
	}
}

// nextGroup takes the oldest pending appends, up to the group bounds; the
// first is always taken, whatever its size.
func (s *Spool) nextGroup() []*appendReq {
	var n, bytes, frames int
	for _, req := range s.pending {
		if n > 0 && (bytes+len(req.buf) > groupBytes || frames+req.frames > groupFrames) {
			break
		}
		n, bytes, frames = n+1, bytes+len(req.buf), frames+req.frames
	}
	group := slices.Clone(s.pending[:n])
	s.pending = slices.Delete(s.pending, 0, n)
	return group
}

// commit writes a group of appends with one write and one fsync, and
// answers each caller: ErrFull to those the size limit leaves no room for,
// the write's result to the others.
func (s *Spool) commit(group []*appendReq) {
	s.mu.Lock()
	in := make([]*appendReq, 0, len(group))
	var bytes, frames int
	for _, req := range group {
		if !s.take(int64(len(req.buf)), req.res) {
			req.done <- ErrFull // a capacity limit, not a disk fault: health is unchanged
			continue
		}
		in = append(in, req)
		bytes += len(req.buf)
		frames += req.frames
	}
	if len(in) == 0 {
		s.mu.Unlock()
		return
	}
	buf := in[0].buf
	if len(in) > 1 {
		buf = make([]byte, 0, bytes)
		for _, req := range in {
			buf = append(buf, req.buf...)
		}
	}
	err := s.appendLocked(buf)
	if err != nil {
		for _, req := range in {
			s.size.Add(-int64(len(req.buf)))
			s.reserved.Add(req.res)
		}
	}
	s.healthy.Store(err == nil)
	s.mu.Unlock()
	if f := s.onCommit.Load(); f != nil && err == nil {
		(*f)(frames)
	}
	for _, req := range in {
		req.done <- err
	}
}

// OnCommit has f called with the number of records each group commit
// stored (one write, one fsync). f runs on the appender goroutine before
// the commit's callers are answered: appends wait while it runs.
func (s *Spool) OnCommit(f func(frames int)) { s.onCommit.Store(&f) }

// take accounts n bytes against the limit, turning res reserved bytes into
// them.
func (s *Spool) take(n, res int64) bool {
	s.capMu.Lock()
	defer s.capMu.Unlock()
	if s.maxBytes > 0 && s.size.Load()+s.reserved.Load()-res+n > s.maxBytes {
		return false
	}
	s.size.Add(n)
	s.reserved.Add(-res)
	return true
}

func (s *Spool) appendLocked(buf []byte) error {
	if s.active == nil || s.activeN >= segmentSize {
		if err := s.rotateLocked(); err != nil {
			return err
		}
	}
	if _, err := s.active.Write(buf); err != nil {
		s.abandonLocked()
		return fmt.Errorf("write spool segment: %w", err)
	}
	if err := s.active.Sync(); err != nil {
		s.abandonLocked()
		return fmt.Errorf("fsync spool segment: %w", err)
	}
	s.activeN += int64(len(buf))
	return nil
}

// abandonLocked cuts a failed write off the active segment and seals it; if
// the cut fails the reader's checksum still stops at the torn frame.
func (s *Spool) abandonLocked() {
	_ = s.active.Truncate(s.activeN)
	_ = s.active.Close()
	s.active, s.activeN = nil, 0
}

func (s *Spool) rotateLocked() error {
	if err := s.sealLocked(); err != nil {
		return err
	}
	p := filepath.Join(s.dir, fmt.Sprintf("%s%020d%s", segPrefix, s.nextSeq, segSuffix))
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("create spool segment: %w", err)
	}
	s.nextSeq++
	// The new name must be durable too, or a crash could lose a segment
	// whose records were acknowledged.
	if err := syncDir(s.dir); err != nil {
		_ = f.Close()
		_ = os.Remove(p)
		return err
	}
	s.active, s.activeN = f, 0
	return nil
}

func (s *Spool) sealLocked() error {
	if s.active == nil {
		return nil
	}
	err := s.active.Close()
	s.active, s.activeN = nil, 0
	if err != nil {
		return fmt.Errorf("close spool segment: %w", err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open spool dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync spool dir: %w", err)
	}
	return nil
}

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

// Sealed returns the segments ready for replay, oldest first. It seals the
// active segment only when no sealed one is waiting, so retries against a
// database that is still down do not cut the spool into tiny files.
func (s *Spool) Sealed() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	segs, err := s.list()
	if err != nil {
		return nil, err
	}
	if s.active == nil {
		return segs, nil
	}
	if active := s.active.Name(); len(segs) > 1 || (len(segs) == 1 && segs[0] != active) {
		return slices.DeleteFunc(segs, func(p string) bool { return p == active }), nil
	}
	if err := s.sealLocked(); err != nil {
		return nil, err
	}
	return segs, nil
}

// Remove deletes a replayed segment. Call it only after every record in it
// is committed elsewhere.
func (s *Spool) Remove(path string) error {
	_, err := s.RemoveReplayed(path, -1)
	return err
}

// RemoveReplayed deletes a replayed segment if it still has the size it
// had when it was read (size < 0: whatever its size). A segment that grew
// was appended to after the read — by a gated too old to lock its spool —
// and is kept for the next replay rather than lose the new records.
func (s *Spool) RemoveReplayed(path string, size int64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := os.Stat(path)
	if err != nil {
		return false, fmt.Errorf("stat spool segment: %w", err)
	}
	if size >= 0 && st.Size() != size {
		return false, nil
	}
	if err := os.Remove(path); err != nil {
		return false, fmt.Errorf("remove spool segment: %w", err)
	}
	s.size.Add(-st.Size())
	return true, syncDir(s.dir)
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

// ReadSegment returns the records of one segment in order. It stops at the
// first frame that is short or fails its checksum — the torn tail a crash
// mid-append leaves — and reports how many bytes it skipped there.
func ReadSegment(path string) (records [][]byte, skipped int64, err error) {
	records, skipped, _, err = ReadSegmentSize(path)
	return records, skipped, err
}

// ReadSegmentSize is ReadSegment that also returns the segment's size when
// it was read, for RemoveReplayed.
func ReadSegmentSize(path string) (records [][]byte, skipped, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("open spool segment: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, 0, fmt.Errorf("stat spool segment: %w", err)
	}
	size = st.Size()
	r := bufio.NewReader(io.LimitReader(f, size))
	var off int64
	hdr := make([]byte, headerSize)
	for {
		_, err := io.ReadFull(r, hdr)
		switch {
		case errors.Is(err, io.EOF):
			return records, 0, size, nil
		case errors.Is(err, io.ErrUnexpectedEOF):
			return records, size - off, size, nil
		case err != nil:
			return records, 0, size, fmt.Errorf("read spool segment: %w", err)
		}
		n := binary.LittleEndian.Uint32(hdr[:4])
		sum := binary.LittleEndian.Uint32(hdr[4:])
		if n > maxRecord {
			return records, size - off, size, nil
		}
		rec := make([]byte, n)
		_, err = io.ReadFull(r, rec)
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return records, size - off, size, nil
		case err != nil:
			return records, 0, size, fmt.Errorf("read spool segment: %w", err)
		case crc32.Checksum(rec, castagnoli) != sum:
			return records, size - off, size, nil
		}
		records = append(records, rec)
		off += headerSize + int64(n)
	}
}
