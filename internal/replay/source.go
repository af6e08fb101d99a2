package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/file"
)

// Window is the span of decision times replayed: Since inclusive, Until
// exclusive, as GET /v1/decisions reads them.
type Window struct {
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
}

func (w Window) check() error {
	if w.Since.IsZero() || w.Until.IsZero() {
		return errors.New("a replay window needs both its since and its until")
	}
	if !w.Until.After(w.Since) {
		return fmt.Errorf("the replay window's until %s is not after its since %s",
			w.Until.Format(time.RFC3339), w.Since.Format(time.RFC3339))
	}
	return nil
}

func (w Window) holds(t time.Time) bool { return !t.Before(w.Since) && t.Before(w.Until) }

// Source yields the recorded decisions of a window, each once, as its
// latest stored form (a correction supersedes the line it corrects).
type Source interface {
	Each(ctx context.Context, w Window, fn func(*audit.Record) error) error
}

// Store is the Source of the PostgreSQL audit store, read page by page.
func Store(s audit.Store) Source { return storeSource{s} }

type storeSource struct{ s audit.Store }

func (s storeSource) Each(ctx context.Context, w Window, fn func(*audit.Record) error) error {
	f := audit.Filter{Since: w.Since, Until: w.Until, Limit: audit.MaxLimit}
	seen := map[string]bool{}
	for {
		p, err := s.s.List(ctx, f)
		if err != nil {
			return fmt.Errorf("read recorded decisions: %w", err)
		}
		for _, r := range p.Records {
			// The table keeps a correction in its record's row, so an id
			// read twice is two rows (another decided_at): refused, as the
			// file's are.
			if seen[r.DecisionID] {
				return fmt.Errorf("decision %s is stored twice in the window; run `gated audit verify` on the database", r.DecisionID)
			}
			seen[r.DecisionID] = true
			if err := fn(r); err != nil {
				return err
			}
		}
		if p.NextCursor == "" {
			return nil
		}
		f.Cursor = p.NextCursor
	}
}

// File is the Source of a JSON-lines audit file (internal/audit/file).
// A correction may come any number of lines after the record it
// supersedes, so the file is read twice: once to find the line of each
// decision's latest form, keeping only its line number, and once to
// decide those lines. Memory grows with the window's decisions, not with
// their records.
func File(path string) Source { return fileSource(path) }

type fileSource string

func (p fileSource) Each(ctx context.Context, w Window, fn func(*audit.Record) error) error {
	latest := map[string]int{} // decision id → the line of its latest form
	var seen audit.Occurrences
	err := file.Read(string(p), func(n int, fr audit.Frame) error {
		if fr.Checkpoint != nil {
			return nil // the chain's, not a decision
		}
		if fr.DecisionID == "" {
			return fmt.Errorf("audit file %s, line %d: no decision_id", p, n)
		}
		if !seen.Add(fr.Record) {
			// Which line is the decision's cannot be told here: the one
			// kept last could be a forgery shadowing a signed record.
			return fmt.Errorf("audit file %s, line %d: decision %s is stored again, not as a correction of its record; run `gated audit verify` on the file", p, n, fr.DecisionID)
		}
		if w.holds(fr.DecidedAt) {
			latest[fr.DecisionID] = n // a correction's line comes after the line it corrects
		}
		if n%1024 == 0 {
			return ctx.Err()
		}
		return nil
	})
	if err != nil {
		return err
	}
	found := 0
	err = file.Read(string(p), func(n int, fr audit.Frame) error {
		if fr.Checkpoint != nil || latest[fr.DecisionID] != n {
			return nil
		}
		found++
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return fn(fr.Record)
	})
	if err == nil && found != len(latest) {
		err = fmt.Errorf("audit file %s changed while replay read it (%d of the window's %d decisions found again): replay a copy, or one that is only appended to", p, found, len(latest))
	}
	return err
}
