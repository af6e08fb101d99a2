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
)

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

// FrameSize is the bytes a record of n bytes takes in a segment.
func FrameSize(n int) int64 { return int64(headerSize + n) }

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
