package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"
)

// fileSink appends records as JSON lines. In sync mode each batch is
// fsynced before it is acknowledged; in async mode the OS flushes it.
type fileSink struct {
	mu   sync.Mutex
	f    *os.File
	sync bool
}

func openFileSink(path string, sync bool) (*fileSink, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit file: %w", err)
	}
	return &fileSink{f: f, sync: sync}, nil
}

// write appends records, then corrections: a line with "correction": true
// supersedes the earlier line of the same decision_id (the caller was
// refused while that line may say otherwise).
func (s *fileSink) write(_ context.Context, recs, fixes []*Record) error {
	var buf []byte
	for i, r := range slices.Concat(recs, fixes) {
		b, err := json.Marshal(frame{Record: r, Correction: i >= len(recs)})
		if err != nil {
			return fmt.Errorf("encode audit record: %w", err)
		}
		buf = append(append(buf, b...), '\n')
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

func (s *fileSink) close() error {
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
