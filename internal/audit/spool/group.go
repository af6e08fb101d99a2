package spool

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
)

// A group commit takes the waiting appends up to about this many bytes
// and frames (an append larger than that goes alone): a bounded write,
// and a bounded wait for the first caller in it.
const (
	groupBytes  = 1 << 20
	groupFrames = 4096
)

// appendReq is one Append waiting for its group commit.
type appendReq struct {
	buf    []byte // the framed records
	frames int
	res    int64      // reserved bytes the records use up
	done   chan error // buffered: the appender never waits for the caller
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
