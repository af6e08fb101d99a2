package spool

import (
	"time"
)

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
