// Package spool is a durable local queue of opaque records: append-only
// segment files, each record framed with its length and a CRC32C, fsynced
// before Append returns. The audit writer parks records here while
// PostgreSQL is away and replays the sealed segments, oldest first, when it
// comes back; a segment is removed only after its records are committed.
package spool

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// ErrFull is returned when an append would take the spool past its size limit.
var ErrFull = errors.New("spool full")

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("spool closed")

const (
	headerSize = 8 // uint32 length + uint32 CRC32C, little endian
	// maxRecord bounds a frame's length so a torn header cannot make the
	// reader allocate gigabytes.
	maxRecord   = 16 << 20
	segPrefix   = "seg-"
	segSuffix   = ".log"
	segmentSize = 8 << 20 // rotate after this many bytes so replay frees disk in steps
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Spool is safe for concurrent use.
type Spool struct {
	dir      string
	maxBytes int64

	mu       sync.Mutex
	active   *os.File // nil until the next append
	activeN  int64
	nextSeq  uint64
	size     int64 // bytes in all segments, sealed and active
	closed   bool
	appendOK bool
}

// Open opens (creating if needed) the spool in dir. Segments left by an
// earlier process are sealed: they are replayed, never appended to, so a
// torn tail from a crash never sits in front of new records. maxBytes <= 0
// means no limit.
func Open(dir string, maxBytes int64) (*Spool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create spool dir: %w", err)
	}
	s := &Spool{dir: dir, maxBytes: maxBytes, appendOK: true}
	segs, err := s.list()
	if err != nil {
		return nil, err
	}
	for _, p := range segs {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("stat spool segment: %w", err)
		}
		s.size += st.Size()
		if seq, ok := parseSeq(filepath.Base(p)); ok && seq >= s.nextSeq {
			s.nextSeq = seq + 1
		}
	}
	return s, nil
}

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

// Append writes the records as one write and fsyncs before returning: once
// it returns nil, the records survive a crash. On a failed write the segment
// is cut back to its last good length and sealed.
func (s *Spool) Append(records ...[]byte) error {
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

	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.appendLocked(buf)
	s.appendOK = err == nil
	return err
}

func (s *Spool) appendLocked(buf []byte) error {
	if s.closed {
		return ErrClosed
	}
	if s.maxBytes > 0 && s.size+int64(len(buf)) > s.maxBytes {
		return ErrFull
	}
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
	s.size += int64(len(buf))
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
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("stat spool segment: %w", err)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove spool segment: %w", err)
	}
	s.size -= st.Size()
	return syncDir(s.dir)
}

// Size returns the bytes held in all segments.
func (s *Spool) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.size
}

// Healthy reports whether the last append succeeded (true before any).
func (s *Spool) Healthy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendOK && !s.closed
}

// Close seals the active segment; later appends fail with ErrClosed.
func (s *Spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return s.sealLocked()
}

// ReadSegment returns the records of one segment in order. It stops at the
// first frame that is short or fails its checksum — the torn tail a crash
// mid-append leaves — and reports how many bytes it skipped there.
func ReadSegment(path string) (records [][]byte, skipped int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("open spool segment: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("stat spool segment: %w", err)
	}
	r := bufio.NewReader(f)
	var off int64
	hdr := make([]byte, headerSize)
	for {
		_, err := io.ReadFull(r, hdr)
		switch {
		case errors.Is(err, io.EOF):
			return records, 0, nil
		case errors.Is(err, io.ErrUnexpectedEOF):
			return records, st.Size() - off, nil
		case err != nil:
			return records, 0, fmt.Errorf("read spool segment: %w", err)
		}
		n := binary.LittleEndian.Uint32(hdr[:4])
		sum := binary.LittleEndian.Uint32(hdr[4:])
		if n > maxRecord {
			return records, st.Size() - off, nil
		}
		rec := make([]byte, n)
		_, err = io.ReadFull(r, rec)
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return records, st.Size() - off, nil
		case err != nil:
			return records, 0, fmt.Errorf("read spool segment: %w", err)
		case crc32.Checksum(rec, castagnoli) != sum:
			return records, st.Size() - off, nil
		}
		records = append(records, rec)
		off += headerSize + int64(n)
	}
}
