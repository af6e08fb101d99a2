package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// stop ends the server with SIGTERM, which lets gated drain its audit
// queue, and kills it if it has not exited within 30 s.
func (s *server) stop() error {
	if s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		return nil
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("%s did not stop within 30 s of SIGTERM and was killed", s.name)
	}
}

// restartFresh stops a server that has a fresh directory, removes the
// directory and starts the server again; other servers are left running.
func (s *server) restartFresh(ctx context.Context) error {
	if s.fresh == "" {
		return nil
	}
	if err := s.stop(); err != nil {
		return err
	}
	if err := os.RemoveAll(s.fresh); err != nil {
		return err
	}
	return s.start(ctx)
}

// tail is the end of a server's log, for errors.
func tail(path string) string {
	raw, _ := os.ReadFile(path)
	s := strings.TrimSpace(string(raw))
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	if s == "" {
		return "(nothing in its log)"
	}
	return s
}

// createDatabases creates one fresh database per suffix next to base and
// returns their URLs, the server's version, the pid of the harness's own
// backend (whose parent is the postmaster, for the cluster's CPU) and a
// cleanup that drops them (WITH (FORCE), so a server left connected does
// not keep one alive).
func createDatabases(ctx context.Context, base string, suffixes ...string) (urls []string, version string, backend int, cleanup func(), err error) {
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return nil, "", 0, nil, fmt.Errorf("connect to PostgreSQL for the full path (set -database-url, or pass -skip-db): %w", err)
	}
	if err := conn.QueryRow(ctx, "SELECT current_setting('server_version'), pg_backend_pid()").Scan(&version, &backend); err != nil {
		_ = conn.Close(ctx)
		return nil, "", 0, nil, err
	}
	u, err := url.Parse(base)
	if err != nil {
		_ = conn.Close(ctx)
		return nil, "", 0, nil, err
	}
	var names []string
	cleanup = func() {
		// The run's context may be cancelled (Ctrl-C): drop with a fresh one.
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, n := range names {
			if _, err := conn.Exec(cctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{n}.Sanitize()+" WITH (FORCE)"); err != nil {
				fmt.Fprintf(os.Stderr, "benchhttp: could not drop database %s: %v\n", n, err)
			}
		}
		_ = conn.Close(cctx)
	}
	stamp := fmt.Sprintf("gated_bench_%d_%d", time.Now().Unix(), os.Getpid())
	for _, sfx := range suffixes {
		n := stamp + "_" + sfx
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{n}.Sanitize()); err != nil {
			cleanup()
			return nil, "", 0, nil, fmt.Errorf("create database %s: %w", n, err)
		}
		names = append(names, n)
		du := *u
		du.Path = "/" + n
		urls = append(urls, du.String())
	}
	return urls, version, backend, cleanup, nil
}

// allocBenchmarks runs the in-process benchmarks whose allocs/op the
// report quotes.
func allocBenchmarks(ctx context.Context, benchtime string) ([]benchLine, error) {
	var all []benchLine
	for _, b := range []struct{ pattern, pkg string }{
		{"BenchmarkDecide$", "./internal/gate"},
		{"BenchmarkPreToolCheck$", "./internal/server"},
	} {
		args := []string{"test", "-run", "^$", "-bench", b.pattern, "-benchmem", "-count", "1"}
		if benchtime != "" {
			args = append(args, "-benchtime", benchtime)
		}
		fmt.Fprintf(os.Stderr, "go %s %s\n", strings.Join(args, " "), b.pkg)
		out, err := exec.CommandContext(ctx, "go", append(args, b.pkg)...).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("go test -bench %s %s: %w\n%s", b.pattern, b.pkg, err, out)
		}
		ls := parseBench(string(out))
		if len(ls) == 0 {
			return nil, fmt.Errorf("go test -bench %s %s printed no benchmark lines:\n%s", b.pattern, b.pkg, out)
		}
		all = append(all, ls...)
	}
	return all, nil
}
