package file_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/audittest"
	"github.com/gatedhq/gated/internal/audit/file"
)

// openRecorder starts a recorder on the file sink, as gated does without a
// database.
func openRecorder(t *testing.T, path string, mode audit.Durability) audit.Recorder {
	t.Helper()
	sink, err := file.Open(path, mode == audit.Sync)
	if err != nil {
		t.Fatal(err)
	}
	r, err := audit.NewRecorder(context.Background(), sink, audit.Config{Durability: mode})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func closeRec(t *testing.T, r audit.Recorder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestFileSink(t *testing.T) {
	t.Parallel()
	for _, mode := range []audit.Durability{audit.Async, audit.Sync} {
		t.Run(mode.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			r := openRecorder(t, path, mode)
			want := map[audit.Result]bool{{Sink: audit.SinkFile, Status: audit.StatusQueued}: mode == audit.Async, {Sink: audit.SinkFile, Status: audit.StatusWritten}: mode == audit.Sync}
			for i := range 100 {
				res, err := r.Record(context.Background(), audittest.Record(i, time.Now()))
				if err != nil || !want[res] {
					t.Fatalf("record: %+v %v", res, err)
				}
			}
			if !r.Ready() {
				t.Fatal("file sink not ready")
			}
			closeRec(t, r)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			n := 0
			for sc.Scan() {
				var rec audit.Record
				if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
					t.Fatalf("line %d: %v", n, err)
				}
				n++
			}
			if n != 100 {
				t.Fatalf("%d lines, want 100", n)
			}
		})
	}
}

func TestOpenRejectsBadConfig(t *testing.T) {
	t.Parallel()
	if _, err := file.Open(filepath.Join(t.TempDir(), "missing", "dir", "a.jsonl"), false); err == nil {
		t.Error("file: accepted")
	}
}

// A line that reads one way to gated and another to jq — a member name
// repeated in another case, one in capitals alone, or one gated does not
// know (outside what the line's hash covers) — is refused, not decoded.
func TestReadRefusesAmbiguousLines(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		`{"decision_id":"d1","final_route":"accept","Final_Route":"refuse"}`,
		`{"decision_id":"d1","FINAL_ROUTE":"refuse"}`,
		`{"decision_id":"d1","final_route":"accept","approved_by":"alice"}`,
		`{"decision_id":"d1","final_route":"accept","final_route":"refuse"}`,
	} {
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		if err := os.WriteFile(path, []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		err := file.Read(path, func(int, audit.Frame) error { return nil })
		if err == nil {
			t.Errorf("Read took %s", line)
		}
	}
}
