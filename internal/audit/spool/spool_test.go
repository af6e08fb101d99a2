package spool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	// Full is a limit, not a disk fault: Room says it, Healthy does not.
	if !s.Healthy() || s.Room(frame) {
		t.Fatalf("full spool: healthy %v (want true), room for a record %v (want false)", s.Healthy(), s.Room(frame))
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
	t.Parallel()
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
	t.Parallel()
	s, err := Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Append(make([]byte, maxRecord+1)); err == nil {
		t.Fatal("oversize record accepted")
	}
}

// One directory, one owner: a second open of a locked directory fails
// until the first lets go. flock locks belong to an open file, so this
// holds between two spools of one process as between two processes.
func TestOpenLocksTheDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, 0); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: got %v, want ErrLocked", err)
	}
	s.Close()
	s2, err := Open(dir, 0)
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	s2.Close()
}

// Two processes with the same owner name get two subdirectories; what one
// leaves when it stops is adopted by the other and, once replayed, removed.
func TestClaimAndAdopt(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "spool")
	a, err := Claim(root, "pod-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Claim(root, "pod-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.Dir() != filepath.Join(root, "pod-1") || filepath.Dir(b.Dir()) != root || !strings.HasPrefix(filepath.Base(b.Dir()), "pod-1-") {
		t.Fatalf("claimed %s and %s", a.Dir(), b.Dir())
	}
	held := func(dir string) bool { return dir == b.Dir() }
	if got, err := Adopt(root, held); err != nil || len(got) != 0 {
		t.Fatalf("adopted %v (%v) while its owner runs", got, err)
	}
	if err := a.Append(payloads(0, 3)...); err != nil {
		t.Fatal(err)
	}
	a.Close() // stops with records left: the directory stays
	got, err := Adopt(root, held)
	if err != nil || len(got) != 1 || got[0].Dir() != a.Dir() || got[0].Size() == 0 {
		t.Fatalf("adopt after the owner stopped: %v %v", got, err)
	}
	o := got[0]
	if err := o.Append(payloads(9, 1)...); err == nil {
		t.Fatal("an adopted spool took an append")
	}
	if again, _ := Adopt(root, held); len(again) != 0 {
		t.Fatal("a spool adopted twice")
	}
	if recs := readAll(t, o); !slices.EqualFunc(recs, payloads(0, 3), slices.Equal) {
		t.Fatalf("replayed %q", recs)
	}
	o.Close()
	if _, err := os.Stat(a.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("replayed directory still there: %v", err)
	}
	// A clean stop with nothing spooled leaves nothing behind either.
	c, err := Claim(root, "pod-2", 0)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := os.Stat(c.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("empty directory kept after close: %v", err)
	}
}

// Segments an older gated left in the spool directory itself are adopted too.
func TestAdoptLegacySegments(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	old, err := Open(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Append(payloads(0, 2)...); err != nil {
		t.Fatal(err)
	}
	old.Close()
	got, err := Adopt(root, func(string) bool { return false })
	if err != nil || len(got) != 1 || got[0].Dir() != root {
		t.Fatalf("adopt: %v %v", got, err)
	}
	if recs := readAll(t, got[0]); len(recs) != 2 {
		t.Fatalf("replayed %d records, want 2", len(recs))
	}
	got[0].Close()
	if _, err := os.Stat(root); err != nil {
		t.Fatalf("the spool root itself must stay: %v", err)
	}
}

func TestOwnerNameStaysInRoot(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, owner := range []string{"../../etc", "a/b", "..", "", ".hidden", "pod name\x00"} {
		s, err := Claim(root, owner, 0)
		if err != nil {
			t.Fatalf("%q: %v", owner, err)
		}
		if filepath.Dir(s.Dir()) != root || strings.HasPrefix(filepath.Base(s.Dir()), ".") {
			t.Errorf("owner %q spools in %s", owner, s.Dir())
		}
		s.Close()
	}
}

// A reservation is room no other append can take.
func TestReserve(t *testing.T) {
	t.Parallel()
	one := payloads(0, 1)[0]
	frame := FrameSize(len(one))
	s, err := Open(t.TempDir(), 2*frame)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, want := range []bool{true, true, false} {
		if got := s.Reserve(frame); got != want {
			t.Fatalf("reservation %d: %v, want %v", i, got, want)
		}
	}
	if err := s.Append(one); !errors.Is(err, ErrFull) {
		t.Fatalf("unreserved append into reserved room: %v, want ErrFull", err)
	}
	if err := s.AppendReserved(frame, one); err != nil {
		t.Fatalf("reserved append: %v", err)
	}
	s.Release(frame)
	if err := s.Append(one); err != nil {
		t.Fatalf("append into released room: %v", err)
	}
	if s.Room(1) {
		t.Fatal("room left in a full spool")
	}
}

// A segment that grew after it was read is not removed with its new records.
func TestRemoveReplayedKeepsAGrownSegment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Append(payloads(0, 2)...); err != nil {
		t.Fatal(err)
	}
	segs, _ := s.Sealed()
	_, _, size, err := ReadSegmentSize(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(segs[0], os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte{1, 0, 0, 0, 0, 0, 0, 0, 'x'})
	f.Close()
	if removed, err := s.RemoveReplayed(segs[0], size); err != nil || removed {
		t.Fatalf("removed a grown segment: %v %v", removed, err)
	}
	if _, err := os.Stat(segs[0]); err != nil {
		t.Fatal(err)
	}
}

// A spool whose directory cannot be written is reported unhealthy by the
// probe, and healthy again once it can.
func TestProbe(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "spool")
	s, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Healthy() {
		t.Fatal("fresh spool unhealthy")
	}
	os.RemoveAll(dir)
	os.WriteFile(dir, nil, 0o600) // as root no mode bit stops a write; a file in the directory's place does
	if err := s.Probe(); err == nil || s.Healthy() {
		t.Fatalf("probe of a directory that is a file: %v, healthy %v", err, s.Healthy())
	}
	os.Remove(dir)
	os.Mkdir(dir, 0o700)
	if err := s.Probe(); err != nil || !s.Healthy() {
		t.Fatalf("probe after repair: %v, healthy %v", err, s.Healthy())
	}
}
