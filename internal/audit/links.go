package audit

import (
	"sync"
	"time"

	"github.com/gatedhq/gated/internal/audit/chain"
)

// DefaultCheckpointInterval is how often the writer signs its chain's head
// while records arrive, when Config.CheckpointInterval is not set.
const DefaultCheckpointInterval = time.Minute

// links is the recorder's chain: one per recorder (per writer), assigned
// in the order records are handed to storage. The writer links its
// batches; the few records stored without it (straight to the spool when
// the queue is full) link under the same lock, so seqs are unique and
// gapless whatever path a record takes.
type links struct {
	mu     sync.Mutex
	id     string
	seq    int64      // the last link handed out
	head   chain.Hash // its hash
	signer *chain.Signer
	every  time.Duration
	signed int64     // the seq of the last checkpoint handed out
	at     time.Time // when it was signed
}

// mark is the chain's state before an assignment, to undo it when nothing
// was stored.
type mark struct {
	seq, upto int64
	head      chain.Hash
	signed    int64
	at        time.Time
}

// assign links recs (their content hashed outside the lock) and, when one
// is due, returns a checkpoint of the new head to store after them; force
// asks for one whatever the interval (Close).
func (l *links) assign(recs []*Record, now time.Time, force bool) (mark, []chain.Checkpoint) {
	sums := make([]chain.Hash, len(recs))
	for i, r := range recs {
		sums[i] = ContentHash(r)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	m := mark{seq: l.seq, head: l.head, signed: l.signed, at: l.at}
	for i, r := range recs {
		l.seq++
		l.head = chain.Link(l.id, l.seq, l.head, sums[i])
		r.ChainID, r.ChainSeq, r.LinkHash = l.id, l.seq, l.head.String()
	}
	m.upto = l.seq
	if l.signer == nil || l.seq == l.signed || (!force && now.Sub(l.at) < l.every) {
		return m, nil
	}
	l.signed, l.at = l.seq, now
	return m, []chain.Checkpoint{l.signer.Checkpoint(chain.KindHead, l.id, l.seq, l.head, now)}
}

// undo takes back an assignment whose records were stored nowhere, unless
// later links were handed out meanwhile: their hashes follow these, so
// the lost seqs stay a gap verify reports (and the loss was logged).
func (l *links) undo(m mark) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seq == m.upto {
		l.seq, l.head, l.signed, l.at = m.seq, m.head, m.signed, m.at
	}
}
