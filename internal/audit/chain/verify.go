package chain

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Entry is one stored link as a verifier reads it back: the seq and link
// hash stored with the record, and the content hash recomputed from what
// is stored now.
type Entry struct {
	Seq        int64
	Link       string // as stored
	Content    Hash   // recomputed
	DecisionID string
	At         time.Time // the record's decided_at
}

// Problem kinds: what happened to the first record found out of place.
const (
	Deleted    = "deleted"
	Modified   = "modified"
	Reordered  = "reordered"
	Inserted   = "inserted"
	BadSigning = "checkpoint"
)

// Problem is the first record that breaks a chain.
type Problem struct {
	Kind       string
	Seq        int64  // the link seq where the chain breaks
	DecisionID string // the record it concerns, when there is one
	Detail     string
}

func (p *Problem) Error() string {
	s := fmt.Sprintf("seq %d", p.Seq)
	if p.DecisionID != "" {
		s += " (decision " + p.DecisionID + ")"
	}
	return p.Kind + " at " + s + ": " + p.Detail
}

// Report is what Verify found in one chain.
type Report struct {
	Chain    string
	Records  int   // links read
	From     int64 // the first seq the chain holds (after a purge point)
	Through  int64 // the last seq that links up unbroken from From
	Signed   int64 // the last seq a trusted signed checkpoint vouches for; 0 if none
	SignedAt time.Time
	KeyID    string
	// Unchecked is set when no public keys were given: checkpoints were
	// taken as they are, so the chain is only as good as the store.
	Unchecked bool
	Problem   *Problem
}

// window bounds how far past a break Verify looks for the record that
// belongs there, and span how many links on it follows the chain to tell a
// reordering from an insertion: far enough for any batch, and a break
// costs at most window×span hashes, never a pass per record.
const (
	window = 4096
	span   = 64
)

// Verify walks one chain's entries in stored order (for a file its line
// order; for a table, ordered by seq) and reports the first one deleted,
// modified, reordered or inserted, and how far signed checkpoints vouch
// for it. keys nil takes checkpoints unchecked; otherwise a checkpoint
// whose signature does not verify is itself the problem.
func Verify(id string, es []Entry, cps []Checkpoint, keys Keys) Report {
	rep := Report{Chain: id, Records: len(es), Unchecked: keys == nil}
	var heads []Checkpoint
	var purge *Checkpoint
	for _, c := range cps {
		if keys != nil {
			if err := keys.Check(c); err != nil {
				rep.Problem = &Problem{Kind: BadSigning, Seq: c.Seq, Detail: err.Error()}
				return rep
			}
		}
		switch c.Kind {
		case KindHead:
			heads = append(heads, c)
		case KindPurge:
			if purge == nil || c.Seq > purge.Seq {
				purge = &c
			}
		}
	}
	slices.SortFunc(heads, func(a, b Checkpoint) int { return cmp.Compare(a.Seq, b.Seq) })

	var prev Hash
	next := int64(1)
	if purge != nil {
		h, err := ParseHash(purge.Hash)
		if err != nil {
			rep.Problem = &Problem{Kind: BadSigning, Seq: purge.Seq, Detail: "the purge checkpoint's hash: " + err.Error()}
			return rep
		}
		prev, next = h, purge.Seq+1
		// Retention dropped every link up to the purge point (its leftovers
		// in the next day too): a record there was put back or made up, and
		// readers other than this one would show it.
		if i := slices.IndexFunc(es, func(e Entry) bool { return e.Seq <= purge.Seq }); i >= 0 {
			rep.From, rep.Through = next, next-1
			rep.Problem = &Problem{Kind: Inserted, Seq: es[i].Seq, DecisionID: es[i].DecisionID,
				Detail: fmt.Sprintf("a record claims seq %d, at or before the purge point (seq %d) retention signed: those links were dropped", es[i].Seq, purge.Seq)}
			return rep
		}
	}
	rep.From, rep.Through = next, next-1
	for len(heads) > 0 && heads[0].Seq < next {
		heads = heads[1:] // purged with their links
	}
	w := walk{id: id, es: es}
	for i := 0; i < len(es); i++ {
		e := es[i]
		if e.Seq == next && w.fits(e, next, prev) {
			if p := w.twin(i, prev); p != nil {
				rep.Problem = p
				return rep
			}
			prev, next = w.link(e), next+1
			rep.Through = e.Seq
			for ; len(heads) > 0 && heads[0].Seq == e.Seq; heads = heads[1:] {
				if p := rep.vouch(heads[0], prev); p != nil {
					rep.Problem = p
					return rep
				}
			}
			continue
		}
		rep.Problem = w.diagnose(i, next, prev)
		return rep
	}
	if len(heads) > 0 {
		c := heads[len(heads)-1]
		rep.Problem = &Problem{Kind: Deleted, Seq: rep.Through + 1,
			Detail: fmt.Sprintf("a checkpoint signed at %s vouches for links through seq %d, but the chain ends at seq %d: the records after it were deleted",
				c.At.Format(time.RFC3339), c.Seq, rep.Through)}
	}
	return rep
}

// vouch checks a head checkpoint against the link computed at its seq.
func (r *Report) vouch(c Checkpoint, link Hash) *Problem {
	if c.Hash != link.String() {
		return &Problem{Kind: Modified, Seq: c.Seq,
			Detail: fmt.Sprintf("the chain no longer matches the checkpoint signed at %s: a record after seq %d was changed and the links after it recomputed to hide it",
				c.At.Format(time.RFC3339), r.Signed)}
	}
	if c.Signed() {
		r.Signed, r.SignedAt, r.KeyID = c.Seq, c.At, c.KeyID
	}
	return nil
}

type walk struct {
	id string
	es []Entry
}

func (w walk) fits(e Entry, seq int64, prev Hash) bool {
	return Link(w.id, seq, prev, e.Content).String() == e.Link
}

// link is an entry's stored link hash, known to be well formed once fits.
func (w walk) link(e Entry) Hash {
	h, _ := ParseHash(e.Link)
	return h
}

// twin looks among the records right after es[i] that claim its seq too
// for one that links in as well (a forgery whose link was computed): the
// one the next link continues from is the chain's, the other inserted.
// Only neighbours: a claimant further on is caught as a second record
// when the walk reaches it.
func (w walk) twin(i int, prev Hash) *Problem {
	e := w.es[i]
	for _, f := range w.es[i+1:] {
		if f.Seq != e.Seq {
			return nil
		}
		if !w.fits(f, e.Seq, prev) {
			continue
		}
		forged := f
		if k := slices.IndexFunc(w.es[i+1:], func(g Entry) bool { return g.Seq == e.Seq+1 }); k >= 0 && !w.fits(w.es[i+1+k], e.Seq+1, w.link(e)) {
			forged = e
		}
		return &Problem{Kind: Inserted, Seq: e.Seq, DecisionID: forged.DecisionID,
			Detail: fmt.Sprintf("two records claim seq %d and the chain goes on from the other one", e.Seq)}
	}
	return nil
}

// diagnose names what happened at es[i], where link seq next, following
// prev, was expected and es[i] is not it.
func (w walk) diagnose(i int, next int64, prev Hash) *Problem {
	e := w.es[i]
	end := min(len(w.es), i+window)
	if e.Seq < next {
		return &Problem{Kind: Inserted, Seq: e.Seq, DecisionID: e.DecisionID,
			Detail: fmt.Sprintf("a second record claims seq %d, which the chain already has", e.Seq)}
	}
	// The record that belongs at next, found further on.
	j := slices.IndexFunc(w.es[i+1:end], func(f Entry) bool { return w.fits(f, next, prev) })
	if j < 0 {
		if e.Seq > next {
			return &Problem{Kind: Deleted, Seq: next,
				Detail: fmt.Sprintf("the chain goes from seq %d to seq %d (decision %s): %d record(s) are missing", next-1, e.Seq, e.DecisionID, e.Seq-next)}
		}
		return &Problem{Kind: Modified, Seq: next, DecisionID: e.DecisionID,
			Detail: "the record's content no longer matches its link"}
	}
	f := w.es[i+1+j]
	// e is out of place if it links in after the records up to f.
	after, seq := w.link(f), next+1
	for range min(span, end-i) {
		if w.fits(e, seq, after) {
			return &Problem{Kind: Reordered, Seq: next, DecisionID: f.DecisionID,
				Detail: fmt.Sprintf("the record that links in at seq %d is stored after decision %s, which links in at seq %d", next, e.DecisionID, seq)}
		}
		g := slices.IndexFunc(w.es[i+1:end], func(g Entry) bool { return w.fits(g, seq, after) })
		if g < 0 {
			break
		}
		after, seq = w.link(w.es[i+1+g]), seq+1
	}
	return &Problem{Kind: Inserted, Seq: next, DecisionID: e.DecisionID,
		Detail: fmt.Sprintf("the record stored at seq %d is not a link of the chain: the chain goes on from the one before it to decision %s", e.Seq, f.DecisionID)}
}
