package saved

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/kill"
)

var t0 = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

func TestSaveLoad(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "spool", FileName)
	if _, _, err := Load(path, t0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no file: Load = %v, want fs.ErrNotExist", err)
	}
	ks := []kill.Kill{{ID: "k1", Scope: kill.ScopeAgent, Value: "bot-7", Reason: "loops", CreatedBy: "oncall", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}}
	if err := Save(path, ks, t0); err != nil {
		t.Fatal(err)
	}
	got, confirmed, err := Load(path, t0)
	if err != nil || !confirmed.Equal(t0) || len(got) != 1 || got[0].ID != "k1" || got[0].Value != "bot-7" || !got[0].ExpiresAt.Equal(ks[0].ExpiresAt) {
		t.Fatalf("Load = %+v, %v, %v", got, confirmed, err)
	}
	// The reason and who set the kill are the operator's: the file, which
	// may sit where an agent reads, has the kill's match and id alone.
	if raw, err := os.ReadFile(path); err != nil || bytes.Contains(raw, []byte("loops")) || bytes.Contains(raw, []byte("oncall")) {
		t.Fatalf("the saved list holds the reason or the operator (%v): %s", err, raw)
	}
	if !got[0].Matches(kill.Target{AgentID: "Bot-7"}, t0) {
		t.Fatalf("the saved kill %+v does not stop its agent", got[0])
	}
	if runtime.GOOS != "windows" {
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v, %v; want 0600", st.Mode().Perm(), err)
		}
	}
	// Saved again, empty: replaced whole, and no temporary file is left.
	if err := Save(path, nil, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got, confirmed, err := Load(path, t0.Add(time.Minute)); err != nil || len(got) != 0 || !confirmed.Equal(t0.Add(time.Minute)) {
		t.Fatalf("Load after an empty save = %v, %v, %v", got, confirmed, err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Fatalf("the directory holds %d entries, want the list alone", len(ents))
	}
}

func TestLoadRefusesDamage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	if err := Save(good, []kill.Kill{{ID: "k1", Scope: kill.ScopeAll, Reason: "incident"}}, t0); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(good)
	future := filepath.Join(dir, "future")
	if err := Save(future, nil, t0.Add(2*skew)); err != nil {
		t.Fatal(err)
	}
	unknown := filepath.Join(dir, "unknown")
	if err := Save(unknown, []kill.Kill{{ID: "k2", Scope: "team", Value: "x"}}, t0); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{
		// A kill of every call turned into one of no one, hash unchanged.
		"altered":   bytes.Replace(raw, []byte(`"scope":"all"`), []byte(`"scope":"agent"`), 1),
		"torn":      raw[:len(raw)/2],
		"not json":  []byte("kill list"),
		"too large": bytes.Repeat([]byte(" "), maxBytes+1),
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(p, body, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Load(p, t0); !errors.Is(err, ErrDamaged) {
			t.Errorf("%s: Load = %v, want ErrDamaged", name, err)
		}
	}
	if !bytes.Contains(raw, []byte(`"scope":"all"`)) {
		t.Fatalf("the test's alteration does not apply to %s", raw)
	}
	// A symlink to a good list elsewhere, and a directory, are not the file
	// Save writes.
	if runtime.GOOS != "windows" {
		link := filepath.Join(dir, "link")
		if err := os.Symlink(good, link); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Load(link, t0); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("a symlink: Load = %v, want ErrDamaged", err)
		}
	}
	if _, _, err := Load(dir, t0); !errors.Is(err, ErrDamaged) {
		t.Errorf("a directory: Load = %v, want ErrDamaged", err)
	}
	if _, _, err := Load(future, t0); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "ahead of the clock") {
		t.Errorf("a list confirmed ahead of the clock: %v", err)
	}
	if _, _, err := Load(unknown, t0); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "team") {
		t.Errorf("a list with an unknown scope: %v", err)
	}
}
