package chain

import (
	"crypto/ed25519"
	"crypto/sha256"
	"strconv"
	"testing"
	"time"
)

// build is a chain of n links whose contents are the hashes of their
// numbers, with a head checkpoint signed by s at every seq in signAt.
func build(t *testing.T, s *Signer, n int, signAt ...int64) ([]Entry, []Checkpoint) {
	t.Helper()
	var es []Entry
	var cps []Checkpoint
	var prev Hash
	for i := int64(1); i <= int64(n); i++ {
		c := Hash(sha256.Sum256([]byte(strconv.FormatInt(i, 10))))
		prev = Link("c", i, prev, c)
		es = append(es, Entry{Seq: i, Link: prev.String(), Content: c})
		for _, at := range signAt {
			if at == i {
				cps = append(cps, s.Checkpoint(KindHead, "c", i, prev, time.Unix(1800000000, 0)))
			}
		}
	}
	return es, cps
}

func newSigner(t *testing.T) *Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return NewSigner(priv)
}

// Checkpoints are trusted only as signed by a given key: an altered one,
// one by another key and an unsigned one are each the problem.
func TestCheckpointSignatures(t *testing.T) {
	t.Parallel()
	s := newSigner(t)
	keys := NewKeys(s.Public())
	es, cps := build(t, s, 10, 5, 10)
	if r := Verify("c", es, cps, keys); r.Problem != nil || r.Signed != 10 || r.KeyID != s.KeyID() {
		t.Fatalf("the untouched chain: %+v", r)
	}
	cases := map[string]func(c *Checkpoint){
		"altered":     func(c *Checkpoint) { c.At = c.At.Add(time.Second) },
		"another key": func(c *Checkpoint) { *c = newSigner(t).Checkpoint(c.Kind, c.Chain, c.Seq, mustHash(t, c.Hash), c.At) },
		"unsigned":    func(c *Checkpoint) { c.Signature, c.KeyID = "", "" },
		"a purge forged by the store": func(c *Checkpoint) {
			*c = (*Signer)(nil).Checkpoint(KindPurge, c.Chain, c.Seq, mustHash(t, c.Hash), c.At)
		},
	}
	for name, fn := range cases {
		bad := append([]Checkpoint(nil), cps...)
		fn(&bad[0])
		if r := Verify("c", es, bad, keys); r.Problem == nil || r.Problem.Kind != BadSigning {
			t.Errorf("%s: got %+v, want a checkpoint problem", name, r.Problem)
		}
	}
	// Without keys the checkpoints are taken as stored.
	if r := Verify("c", es, cps, nil); r.Problem != nil || !r.Unchecked {
		t.Fatalf("unchecked: %+v", r)
	}
}

func mustHash(t *testing.T, s string) Hash {
	t.Helper()
	h, err := ParseHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A chain of many links and checkpoints is walked once: every checkpoint
// is met at its seq, and the last one vouches for the end.
func TestManyCheckpoints(t *testing.T) {
	t.Parallel()
	s := newSigner(t)
	var at []int64
	for i := int64(1); i <= 20000; i += 7 {
		at = append(at, i)
	}
	es, cps := build(t, s, 20000, at...)
	r := Verify("c", es, cps, NewKeys(s.Public()))
	if r.Problem != nil || r.Through != 20000 || r.Signed != at[len(at)-1] {
		t.Fatalf("got %+v", r)
	}
}
