package file

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/chain"
	"github.com/gatedhq/gated/internal/strictjson"
)

// maxLine bounds one line read back: far above any record gated writes,
// so a file that is not gated's fails rather than eats the memory.
const maxLine = 16 << 20

// Read calls fn with each line's frame, in file order, numbered from 1:
// the one reader of the file's lines (verify, receipts, replay).
func Read(path string, fn func(n int, f audit.Frame) error) error {
	fh, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open audit file: %w", err)
	}
	defer fh.Close()
	r := bufio.NewReaderSize(fh, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(r)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read audit file %s, line %d: %w", path, n, err)
		}
		if len(line) == 0 {
			continue
		}
		f := audit.Frame{Record: new(audit.Record)}
		if err := strictjson.Unmarshal(line, &f); err != nil {
			return fmt.Errorf("audit file %s, line %d: %w", path, n, err)
		}
		if err := fn(n, f); err != nil {
			return err
		}
	}
}

func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, more, err := r.ReadLine()
		if err != nil {
			if errors.Is(err, io.EOF) && len(line) > 0 {
				return line, nil
			}
			return nil, err
		}
		line = append(line, part...)
		if len(line) > maxLine {
			return nil, fmt.Errorf("a line longer than %d bytes is not an audit record", maxLine)
		}
		if !more {
			return line, nil
		}
	}
}

// ReadTrail reads the file's chains back for audit.Trail.Verify.
func ReadTrail(path string) (*audit.Trail, error) {
	t := audit.NewTrail()
	err := Read(path, func(_ int, f audit.Frame) error {
		if f.Checkpoint != nil {
			t.AddCheckpoint(*f.Checkpoint)
		} else {
			t.Add(f.Record)
		}
		return nil
	})
	return t, err
}

// Receipt builds the receipt of decision id: its last line (a correction
// supersedes the line before it) linked to the first signed checkpoint
// after it.
func Receipt(path, id string) (*audit.Receipt, error) {
	var rec *audit.Record
	if err := Read(path, func(_ int, f audit.Frame) error {
		if f.Checkpoint == nil && f.DecisionID == id {
			rec = f.Record
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, fmt.Errorf("decision %s: %w", id, audit.ErrNotFound)
	}
	var around []*audit.Record
	var cps []chain.Checkpoint
	err := Read(path, func(_ int, f audit.Frame) error {
		switch {
		case f.Checkpoint != nil:
			if f.Checkpoint.Chain == rec.ChainID {
				cps = append(cps, *f.Checkpoint)
			}
		case f.ChainID == rec.ChainID && f.ChainSeq >= rec.ChainSeq-1:
			around = append(around, f.Record)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return audit.NewReceipt(rec, around, cps)
}
