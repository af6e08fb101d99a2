// Package redistest gives tests the real Redis: the shared one named by
// GATED_TEST_REDIS_URL (default the local one) with a key prefix of their
// own, or a redis-server process of their own that they can kill and start
// again.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/gatedhq/gated/internal/testwait"
)

// DefaultURL is the local test Redis.
const DefaultURL = "redis://127.0.0.1:6379/0"

// URL is the shared test Redis.
func URL() string {
	if u := os.Getenv("GATED_TEST_REDIS_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// Prefix is a key prefix no other test uses, so tests sharing one Redis
// never count into each other's buckets. Its keys are deleted when the test
// ends.
func Prefix(t testing.TB) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	p := "gated-test-" + hex.EncodeToString(b) + ":"
	t.Cleanup(func() {
		opt, err := goredis.ParseURL(URL())
		if err != nil {
			return
		}
		c := goredis.NewClient(opt)
		defer c.Close()
		ctx := context.Background()
		keys, _ := c.Keys(ctx, "*"+p+"*").Result()
		if len(keys) > 0 {
			c.Del(ctx, keys...)
		}
	})
	return p
}

// Server is a redis-server process of the test's own on a loopback port.
type Server struct {
	URL  string
	port string
	cmd  *exec.Cmd
}

// Start runs redis-server without persistence on a free loopback port and
// stops it when the test ends. The test is skipped if redis-server is not
// installed.
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed; this test needs its own Redis to kill and restart")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	_ = ln.Close()
	s := &Server{URL: "redis://127.0.0.1:" + port + "/0", port: port}
	s.Restart(t)
	t.Cleanup(s.Kill)
	return s
}

// Restart starts the server again on the same port, empty, and waits
// until it answers.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.cmd = exec.Command("redis-server", "--port", s.port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	opt, _ := goredis.ParseURL(s.URL)
	c := goredis.NewClient(opt)
	defer c.Close()
	testwait.Until(t, "redis-server on port "+s.port, func() bool {
		return c.Ping(context.Background()).Err() == nil
	})
}

// Kill stops the server at once and waits for it to exit.
func (s *Server) Kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}
