package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatedhq/gated/internal/pgtest"
)

// gatedProcess is gated running as a child process.
type gatedProcess struct {
	cmd  *exec.Cmd
	base string
	logs *syncBuffer
}

func startProcess(t *testing.T, args ...string) *gatedProcess {
	t.Helper()
	addr := freeAddr(t)
	p := &gatedProcess{base: "http://" + addr, logs: &syncBuffer{}}
	p.cmd = exec.Command(os.Args[0], append([]string{"serve", "--addr", addr}, args...)...)
	p.cmd.Env = append(os.Environ(), asGated+"=1")
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); _ = p.cmd.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(p.base + "/healthz"); err == nil {
			resp.Body.Close()
			return p
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("gated did not start:\n%s", p.logs)
	return nil
}

// load posts events from several clients until stop is closed and returns
// the decision ids gated answered, and how many of those it spooled.
func load(base string, stop <-chan struct{}, clients int) (ids []string, spooled int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 10 * time.Second}
	ev := `{"tool_name":"search_docs","tool_category":"public_read","authorization_state":"none","evidence_refs":[],` +
		`"risk_domain":"research","proposed_arguments":{"query":"x"},"recommended_route":"accept"}`
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := client.Post(base+"/pre-tool-check", "application/json", strings.NewReader(ev))
				if err != nil {
					time.Sleep(5 * time.Millisecond) // killed: keep trying until told to stop
					continue
				}
				var d map[string]any
				decodeErr := json.NewDecoder(resp.Body).Decode(&d)
				resp.Body.Close()
				if decodeErr == nil && resp.StatusCode == http.StatusOK {
					if a, _ := d["audit"].(map[string]any); a["status"] == "written" || a["status"] == "spooled" {
						mu.Lock()
						ids = append(ids, d["decision_id"].(string))
						if a["status"] == "spooled" {
							spooled++
						}
						mu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	return ids, spooled
}

// TestSIGKILLMidLoadLosesNoAnsweredDecision runs gated in sync mode, makes
// its database refuse connections mid-load so records go to the spool, kills
// the process with SIGKILL, restores the database, restarts gated on the
// same spool, and proves every decision it answered is stored exactly once.
func TestSIGKILLMidLoadLosesNoAnsweredDecision(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("process-level crash test")
	}
	name, dbURL := pgtest.Fresh(t)
	dir := t.TempDir()
	args := []string{"--database-url", dbURL, "--audit-hmac-key", testHMACKey, "--audit-durability", "sync",
		"--spool-dir", filepath.Join(dir, "spool"), "--log-level", "warn"}
	first := startProcess(t, args...)

	stop := make(chan struct{})
	type result struct {
		ids     []string
		spooled int
	}
	resc := make(chan result)
	go func() {
		ids, spooled := load(first.base, stop, 4)
		resc <- result{ids, spooled}
	}()
	time.Sleep(500 * time.Millisecond) // records committed straight to PostgreSQL
	pgtest.Exec(t, "ALTER DATABASE "+name+" ALLOW_CONNECTIONS false")
	pgtest.Exec(t, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name)
	time.Sleep(1500 * time.Millisecond) // records fsynced to the spool
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()
	close(stop)
	res := <-resc
	ids := res.ids
	if len(ids) < 20 || res.spooled == 0 || res.spooled == len(ids) {
		t.Fatalf("%d decisions answered before the kill, %d of them spooled: the test needs both paths\n%s", len(ids), res.spooled, first.logs)
	}
	t.Logf("%d decisions answered before SIGKILL, %d of them spooled while the database refused connections", len(ids), res.spooled)

	pgtest.Exec(t, "ALTER DATABASE "+name+" ALLOW_CONNECTIONS true")
	second := startProcess(t, args...)
	defer func() { _ = second.cmd.Process.Signal(os.Interrupt) }()

	waitStored(t, dbURL, ids, second.logs)
}

// countStored counts how many of ids are stored, and how many stored more
// than once.
func countStored(t *testing.T, ctx context.Context, dbURL string, ids []string) (stored, dup int) {
	t.Helper()
	c, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	err = c.QueryRow(ctx, `SELECT count(DISTINCT decision_id), count(*) - count(DISTINCT decision_id)
		FROM audit_decisions WHERE decision_id = ANY($1)`, ids).Scan(&stored, &dup)
	if err != nil {
		t.Fatal(err)
	}
	return stored, dup
}
