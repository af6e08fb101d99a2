// Package testgated starts a real `gated serve` for tests of the things
// that call gated from outside — the Go client, hooks, MCP — so that they
// are tested against the service as users run it, never a stand-in.
package testgated

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is one running gated.
type Server struct {
	URL  string // http://127.0.0.1:port
	Addr string // 127.0.0.1:port
	cmd  *exec.Cmd
	logs *logBuffer
}

// Logs returns what gated has logged so far.
func (s *Server) Logs() string { return s.logs.String() }

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary returns the path of a gated binary: $GATED_BIN when set (make
// builds one), else one built once per test process.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("GATED_BIN"); p != "" {
		return p
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "testgated-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "gated")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/gatedhq/gated/cmd/gated").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build gated: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

var (
	hookOnce    sync.Once
	hookBinPath string
	hookErr     error
)

// HookBinary returns the path of a gated-hook binary, the small command
// hook: $GATED_HOOK_BIN when set (make builds one), else one built once per
// test process.
func HookBinary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("GATED_HOOK_BIN"); p != "" {
		return p
	}
	hookOnce.Do(func() {
		dir, err := os.MkdirTemp("", "testgated-")
		if err != nil {
			hookErr = err
			return
		}
		hookBinPath = filepath.Join(dir, "gated-hook")
		out, err := exec.Command("go", "build", "-o", hookBinPath, "github.com/gatedhq/gated/cmd/gated-hook").CombinedOutput()
		if err != nil {
			hookErr = fmt.Errorf("go build gated-hook: %v\n%s", err, out)
		}
	})
	if hookErr != nil {
		t.Fatal(hookErr)
	}
	return hookBinPath
}

// Start runs `gated serve` on a free loopback port with its own audit file
// and spool directory, plus args, and stops it when the test ends.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	dir := t.TempDir()
	return StartCommand(t, append([]string{"serve", "--addr", "127.0.0.1:0",
		"--audit-file", filepath.Join(dir, "audit.jsonl"), "--spool-dir", filepath.Join(dir, "spool")}, args...)...)
}

// StartCommand runs gated with args, a command that logs "gated listening"
// with its address (serve, mcp-proxy --http-addr), and stops it when the
// test ends.
func StartCommand(t testing.TB, args ...string) *Server {
	t.Helper()
	cmd := exec.Command(Binary(t), args...)
	cmd.Env = append(os.Environ(), "GATED_ADDR=", "GATED_TOKENS=", "GATED_DATABASE_URL=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &Server{cmd: cmd, logs: &logBuffer{}}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			s.logs.Write(append(line, '\n'))
			var entry struct{ Msg, Addr string }
			if json.Unmarshal(line, &entry) == nil && entry.Msg == "gated listening" {
				select {
				case addr <- entry.Addr:
				default:
				}
			}
		}
		close(addr)
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			t.Fatalf("gated exited before listening:\n%s", s.Logs())
		}
		s.Addr, s.URL = a, "http://"+a
	case <-time.After(60 * time.Second):
		t.Fatalf("gated did not listen within 60s:\n%s", s.Logs())
	}
	return s
}

// logBuffer collects gated's log lines for failure messages.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.TrimSpace(b.buf.String())
}
