package file

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/gatedhq/gated/internal/audit"
)

// CandidatesPath is where the candidate's rows go beside the audit file
// at path: a file of their own, so that every line of the audit file
// stays one audit.Frame.
func CandidatesPath(path string) string { return path + ".candidates" }

// Candidates appends the candidate's rows as JSON lines, one
// audit.Candidate per line. The candidate writes best effort: no fsync.
type Candidates struct {
	mu sync.Mutex
	f  *os.File
}

// OpenCandidates opens path for appending, creating it (mode 0600) if need be.
func OpenCandidates(path string) (*Candidates, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open candidate file: %w", err)
	}
	return &Candidates{f: f}, nil
}

// WriteCandidates appends cs in one write.
func (c *Candidates) WriteCandidates(_ context.Context, cs []*audit.Candidate) error {
	buf, err := jsonLines(cs, "candidate decision")
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.f.Write(buf); err != nil {
		return fmt.Errorf("write candidate file: %w", err)
	}
	return nil
}

// Close closes the file.
func (c *Candidates) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.f.Close()
}
