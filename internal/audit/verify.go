package audit

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gatedhq/gated/internal/audit/chain"
)

// Trail collects what a store holds of its chains, read back in stored
// order (a file's line order; a table's chain and seq order), for Verify.
// It keeps one small entry per record, not the records.
type Trail struct {
	chains      map[string][]chain.Entry
	order       []string // chain ids in the order first seen
	checkpoints map[string][]chain.Checkpoint
	firstLinked time.Time // the earliest decided_at of a linked record
	newest      time.Time // the latest decided_at of any record
	unlinked    []unlinked
	seen        Occurrences
	duplicated  []string
}

type unlinked struct {
	id string
	at time.Time
}

// NewTrail is an empty trail.
func NewTrail() *Trail {
	return &Trail{chains: map[string][]chain.Entry{}, checkpoints: map[string][]chain.Checkpoint{}}
}

// Occurrences tells a correction from a second record of one decision: a
// decision id is stored once, and again only by a correction that names,
// in its own chain, the link it supersedes, stored before it. Anything
// else — a chain of copied records with a route changed, say — shadows
// the record a reader keeps for the id.
type Occurrences struct {
	links map[string][]link // by decision id
}

type link struct {
	chain string
	seq   int64
}

// Add takes the next stored record and reports whether its decision id
// is new, or repeats only as a correction of a record already added.
func (o *Occurrences) Add(rec *Record) bool {
	if o.links == nil {
		o.links = map[string][]link{}
	}
	prev, ok := o.links[rec.DecisionID]
	o.links[rec.DecisionID] = append(prev, link{rec.ChainID, rec.ChainSeq})
	if !ok {
		return true
	}
	return rec.Supersedes != 0 && rec.ChainID != "" && slices.Contains(prev, link{rec.ChainID, rec.Supersedes})
}

// Add takes the next stored record, a superseded one included.
func (t *Trail) Add(rec *Record) {
	if !t.seen.Add(rec) {
		t.duplicated = append(t.duplicated, rec.DecisionID)
	}
	if rec.DecidedAt.After(t.newest) {
		t.newest = rec.DecidedAt
	}
	if rec.ChainID == "" {
		t.unlinked = append(t.unlinked, unlinked{rec.DecisionID, rec.DecidedAt})
		return
	}
	if t.firstLinked.IsZero() || rec.DecidedAt.Before(t.firstLinked) {
		t.firstLinked = rec.DecidedAt
	}
	if _, ok := t.chains[rec.ChainID]; !ok {
		t.order = append(t.order, rec.ChainID)
	}
	t.chains[rec.ChainID] = append(t.chains[rec.ChainID], chain.Entry{
		Seq: rec.ChainSeq, Link: rec.LinkHash, Content: ContentHash(rec), DecisionID: rec.DecisionID, At: rec.DecidedAt})
}

// AddCheckpoint takes a stored checkpoint.
func (t *Trail) AddCheckpoint(c chain.Checkpoint) {
	if _, ok := t.chains[c.Chain]; !ok {
		t.chains[c.Chain] = nil
		t.order = append(t.order, c.Chain)
	}
	t.checkpoints[c.Chain] = append(t.checkpoints[c.Chain], c)
}

// Verdict is what Verify found in a whole store.
type Verdict struct {
	Chains []chain.Report
	// Unlinked are records that carry no link although decided after the
	// first linked one: inserted, or an approval's record whose link was
	// lost. Older ones predate the chain (Predating counts them).
	Unlinked  []string
	Predating int
	// Duplicated are the decision ids stored again other than by a
	// correction (see Occurrences): a reader that keeps one record per id
	// could be shown the other one.
	Duplicated []string
	// Unsigned are the chains holding records no signed checkpoint vouches
	// for, each with the earliest decided_at among those records.
	Unsigned []UnsignedTail
	// Newest is the latest decided_at of any record.
	Newest time.Time
}

// UnsignedTail is what of a chain no signed checkpoint vouches for.
type UnsignedTail struct {
	Chain   string
	Records int
	Oldest  time.Time
}

// OK reports whether every chain holds, no record is out of them and no
// decision is stored twice.
func (v Verdict) OK() bool {
	for _, c := range v.Chains {
		if c.Problem != nil {
			return false
		}
	}
	return len(v.Unlinked) == 0 && len(v.Duplicated) == 0
}

// UnsignedBeyond returns the unsigned tails that --require-signed fails
// on: every one but those whose records were all decided within grace of
// the newest record of the trail (the writers' heads, which the next
// checkpoint signs).
func (v Verdict) UnsignedBeyond(grace time.Duration) []UnsignedTail {
	var out []UnsignedTail
	for _, u := range v.Unsigned {
		if u.Oldest.Before(v.Newest.Add(-grace)) {
			out = append(out, u)
		}
	}
	return out
}

// Verify checks every chain of the trail; keys nil takes checkpoints
// as they are (see chain.Verify).
func (t *Trail) Verify(keys chain.Keys) Verdict {
	v := Verdict{Duplicated: t.duplicated, Newest: t.newest}
	for _, id := range t.order {
		rep := chain.Verify(id, t.chains[id], t.checkpoints[id], keys)
		v.Chains = append(v.Chains, rep)
		var tail UnsignedTail
		for _, e := range t.chains[id] {
			if e.Seq > rep.Signed {
				if tail.Records == 0 || e.At.Before(tail.Oldest) {
					tail.Oldest = e.At
				}
				tail.Records++
			}
		}
		if tail.Records > 0 {
			tail.Chain = id
			v.Unsigned = append(v.Unsigned, tail)
		}
	}
	for _, u := range t.unlinked {
		if !t.firstLinked.IsZero() && !u.at.Before(t.firstLinked) {
			v.Unlinked = append(v.Unlinked, u.id)
		} else {
			v.Predating++
		}
	}
	return v
}

// Receipt is one decision's record with the proof that links it to a
// signed checkpoint: the link hash before it and the content hashes of the
// links after it up to the checkpoint. It reveals no other record's
// content, and VerifyReceipt checks it with the public key alone.
type Receipt struct {
	Record     *Record          `json:"record"`
	Prev       string           `json:"prev_link_hash"`
	Following  []string         `json:"following_content_hashes"`
	Checkpoint chain.Checkpoint `json:"checkpoint"`
}

// NewReceipt builds rec's receipt from the records of its chain from the
// one before it up to the first signed head checkpoint at or after it
// (seq order or not), and that chain's checkpoints.
func NewReceipt(rec *Record, around []*Record, cps []chain.Checkpoint) (*Receipt, error) {
	if rec.ChainID == "" {
		return nil, fmt.Errorf("decision %s carries no chain link", rec.DecisionID)
	}
	var cp *chain.Checkpoint
	for i, c := range cps {
		if c.Kind == chain.KindHead && c.Signed() && c.Seq >= rec.ChainSeq && (cp == nil || c.Seq < cp.Seq) {
			cp = &cps[i]
		}
	}
	if cp == nil {
		return nil, fmt.Errorf("no signed checkpoint vouches for decision %s (chain %s, seq %d) yet", rec.DecisionID, rec.ChainID, rec.ChainSeq)
	}
	rc := &Receipt{Record: rec, Checkpoint: *cp, Following: make([]string, cp.Seq-rec.ChainSeq)}
	bySeq := map[int64]*Record{}
	for _, r := range around {
		if r.ChainID == rec.ChainID {
			bySeq[r.ChainSeq] = r
		}
	}
	switch p, ok := bySeq[rec.ChainSeq-1]; {
	case rec.ChainSeq == 1:
	case ok:
		rc.Prev = p.LinkHash
	default:
		for _, c := range cps {
			if c.Kind == chain.KindPurge && c.Seq == rec.ChainSeq-1 {
				rc.Prev = c.Hash
			}
		}
		if rc.Prev == "" {
			return nil, fmt.Errorf("the link before decision %s (seq %d of chain %s) is missing", rec.DecisionID, rec.ChainSeq-1, rec.ChainID)
		}
	}
	for i := range rc.Following {
		seq := rec.ChainSeq + 1 + int64(i)
		r, ok := bySeq[seq]
		if !ok {
			return nil, fmt.Errorf("link %d of chain %s, between decision %s and its checkpoint, is missing", seq, rec.ChainID, rec.DecisionID)
		}
		rc.Following[i] = ContentHash(r).String()
	}
	return rc, nil
}

// VerifyReceipt checks a receipt offline: the checkpoint is signed by one
// of keys, and the record's content, linked through the following content
// hashes, reaches the hash it signs.
func VerifyReceipt(rc *Receipt, keys chain.Keys) error {
	if rc.Record == nil {
		return errors.New("the receipt holds no record")
	}
	rec, cp := rc.Record, rc.Checkpoint
	if err := keys.Check(cp); err != nil {
		return err
	}
	switch {
	case cp.Kind != chain.KindHead:
		return fmt.Errorf("the receipt's checkpoint is a %s checkpoint, not a head", cp.Kind)
	case cp.Chain != rec.ChainID:
		return fmt.Errorf("the checkpoint is of chain %s, the record of chain %s", cp.Chain, rec.ChainID)
	case cp.Seq != rec.ChainSeq+int64(len(rc.Following)):
		return fmt.Errorf("the checkpoint is at seq %d, but the record (seq %d) and %d following links reach seq %d",
			cp.Seq, rec.ChainSeq, len(rc.Following), rec.ChainSeq+int64(len(rc.Following)))
	}
	var prev chain.Hash
	if rec.ChainSeq > 1 {
		p, err := chain.ParseHash(rc.Prev)
		if err != nil {
			return fmt.Errorf("the receipt's previous link: %w", err)
		}
		prev = p
	}
	link := chain.Link(rec.ChainID, rec.ChainSeq, prev, ContentHash(rec))
	if link.String() != rec.LinkHash {
		return fmt.Errorf("decision %s's content does not match its link: the record was altered", rec.DecisionID)
	}
	for i, s := range rc.Following {
		c, err := chain.ParseHash(s)
		if err != nil {
			return fmt.Errorf("following content hash %d: %w", i+1, err)
		}
		link = chain.Link(rec.ChainID, rec.ChainSeq+1+int64(i), link, c)
	}
	if link.String() != cp.Hash {
		return fmt.Errorf("the links from decision %s do not reach the hash checkpoint %d signs", rec.DecisionID, cp.Seq)
	}
	return nil
}
