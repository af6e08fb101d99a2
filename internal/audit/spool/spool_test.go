package spool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func payloads(from, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = fmt.Appendf(nil, `{"decision_id":"d-%05d"}`, from+i)
	}
	return out
}

// readAll replays the spool the way the audit writer does: read the sealed
// segments, remove them, repeat until nothing is left.
func readAll(t *testing.T, s *Spool) [][]byte {
	t.Helper()
	var all [][]byte
	for {
		segs, err := s.Sealed()
		if err != nil {
			t.Fatal(err)
		}
		if len(segs) == 0 {
			return all
		}
		for _, p := range segs {
			recs, skipped, err := ReadSegment(p)
			if err != nil {
				t.Fatal(err)
			}
			if skipped != 0 {
				t.Fatalf("segment %s: %d bytes skipped in a clean spool", p, skipped)
			}
			all = append(all, recs...)
			if err := s.Remove(p); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestAppendReplayInOrderAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(payloads(0, 3)...); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sealed(); err != nil { // seals; the next append opens a new segment
		t.Fatal(err)
	}
	if err := s.Append(payloads(3, 2)...); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(payloads(9, 1)...); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: got %v, want ErrClosed", err)
	}

	s2, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := s2.Append(payloads(5, 1)...); err != nil {
		t.Fatal(err)
	}
	// The active segment waits while older ones are pending.
	segs, err := s2.Sealed()
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) != 2 {
		t.Fatalf("sealed %v, want the two segments of the first process", segs)
	}
	got := readAll(t, s2)
	if want := payloads(0, 6); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("replay order:\n got %q\nwant %q", got, want)
	}
	if s2.Size() != 0 {
		t.Fatalf("size %d after replaying everything", s2.Size())
	}
}

func TestTornTailIsSkipped(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(payloads(0, 4)...); err != nil {
		t.Fatal(err)
	}
	segs, err := s.Sealed()
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	p := segs[0]
	st, _ := os.Stat(p)
	frame := int64(headerSize + len(payloads(3, 1)[0]))

	cases := map[string]func(){
		// a crash mid-append leaves half a frame
		"short frame": func() { os.Truncate(p, st.Size()-3) },
		// or a frame whose bytes never reached the disk intact
		"bad checksum": func() {
			f, _ := os.OpenFile(p, os.O_RDWR, 0)
			f.WriteAt([]byte{'X'}, st.Size()-2)
			f.Close()
		},
		"half a header": func() { os.Truncate(p, st.Size()-frame+4) },
	}
	orig, _ := os.ReadFile(p)
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			os.WriteFile(p, orig, 0o600)
			damage()
			recs, skipped, err := ReadSegment(p)
			if err != nil {
				t.Fatal(err)
			}
			if want := payloads(0, 3); !slices.EqualFunc(recs, want, slices.Equal) {
				t.Fatalf("got %q, want the three intact records", recs)
			}
			if skipped == 0 {
				t.Fatal("torn tail not reported")
			}
		})
	}
}

func TestFullAndRemove(t *testing.T) {
	dir := t.TempDir()
	one := payloads(0, 1)[0]
	frame := int64(headerSize + len(one))
	s, err := Open(dir, 2*frame)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Append(payloads(0, 2)...); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(one); !errors.Is(err, ErrFull) {
		t.Fatalf("got %v, want ErrFull", err)
	}
	if s.Healthy() {
		t.Fatal("healthy after a refused append")
	}
	segs, err := s.Sealed()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range segs {
		if err := s.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	if s.Size() != 0 {
		t.Fatalf("size %d after removing every segment", s.Size())
	}
	if err := s.Append(one); err != nil {
		t.Fatalf("append after freeing space: %v", err)
	}
	if !s.Healthy() {
		t.Fatal("not healthy after a successful append")
	}
}

func TestDiskErrorIsReported(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A spool dir that vanished (unmounted, deleted) must fail the append, not ack it.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(payloads(0, 1)...); err == nil {
		t.Fatal("append into a removed directory succeeded")
	}
	if _, _, err := ReadSegment(filepath.Join(dir, "seg-00000000000000000000.log")); err == nil {
		t.Fatal("reading a missing segment succeeded")
	}
}

func TestOversizeRecordRejected(t *testing.T) {
	s, err := Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Append(make([]byte, maxRecord+1)); err == nil {
		t.Fatal("oversize record accepted")
	}
}
