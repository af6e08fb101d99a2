// Package file is the audit sink of a gated without a database: records
// appended to a JSON-lines file, one audit.Frame per line.
package file

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/gatedhq/gated/internal/audit"
)

// Sink appends records as JSON lines. With sync each batch is fsynced
// before it is acknowledged; without it the OS flushes it.
type Sink struct {
	mu   sync.Mutex
	f    *os.File
	sync bool
}

// Open opens path for appending, creating it (mode 0600) if need be. sync
// is audit.Sync durability.
func Open(path string, sync bool) (*Sink, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit file: %w", err)
	}
	return &Sink{f: f, sync: sync}, nil
}

// Name is audit.SinkFile.
func (s *Sink) Name() string { return audit.SinkFile }

// Write appends records, then corrections, then checkpoints: a line with
// "correction": true supersedes the earlier line of the same decision_id
// (the caller was refused while that line may say otherwise), which stays
// in the file with its link; a line with "checkpoint" vouches for the
// chain up to the lines before it.
func (s *Sink) Write(_ context.Context, batch audit.Batch) error {
	frames := batch.Frames()
	for i := range frames {
		frames[i].Superseded = nil // its own line is in the file already
	}
	buf, err := jsonLines(frames, "audit record")
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.f.Write(buf); err != nil {
		return fmt.Errorf("write audit file: %w", err)
	}
	if s.sync {
		if err := s.f.Sync(); err != nil {
			return fmt.Errorf("fsync audit file: %w", err)
		}
	}
	return nil
}

// Close fsyncs and closes the file.
func (s *Sink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.f.Sync(); err != nil {
		s.f.Close()
		return fmt.Errorf("fsync audit file: %w", err)
	}
	if err := s.f.Close(); err != nil {
		return fmt.Errorf("close audit file: %w", err)
	}
	return nil
}

// jsonLines encodes items as JSON lines, for one append.
func jsonLines[T any](items []T, what string) ([]byte, error) {
	var buf []byte
	for _, it := range items {
		b, err := json.Marshal(it)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", what, err)
		}
		buf = append(append(buf, b...), '\n')
	}
	return buf, nil
}
