// Package bundletest serves real git repositories on loopback, through
// git's own smart-HTTP backend, so bundle tests fetch github sources the
// way production does without touching the internet.
package bundletest

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gatedhq/gated/internal/testtree"
)

// Backend is git's smart-HTTP CGI program.
const Backend = "/usr/lib/git-core/git-http-backend"

// Server serves the repositories below its root at Base + owner/name.
type Server struct {
	Base string
	t    testing.TB
	root string
	sent atomic.Int64
}

// NewServer starts a git server on 127.0.0.1, stopped when t ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	if _, err := os.Stat(Backend); err != nil {
		t.Fatalf("the git HTTP backend is needed to serve test repositories: %v", err)
	}
	s := &Server{t: t, root: t.TempDir()}
	backend := &cgi.Handler{Path: Backend, Env: []string{"GIT_PROJECT_ROOT=" + s.root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		backend.ServeHTTP(counting{w, &s.sent}, r)
	}))
	t.Cleanup(srv.Close)
	s.Base = srv.URL + "/"
	return s
}

// Sent is how many bytes of response bodies the server has sent.
func (s *Server) Sent() int64 { return s.sent.Load() }

// counting counts the body bytes written through it.
type counting struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c counting) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// Repo is a repository the server serves, written with the git CLI.
type Repo struct {
	t   testing.TB
	dir string
}

// Repo creates the repository owner/name with an unborn main branch. It
// serves a commit by its SHA, as GitHub does.
func (s *Server) Repo(name string) *Repo {
	s.t.Helper()
	r := &Repo{t: s.t, dir: filepath.Join(s.root, filepath.FromSlash(name))}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		s.t.Fatal(err)
	}
	r.git("init", "-q", "-b", "main")
	r.Config("uploadpack.allowReachableSHA1InWant", "true")
	return r
}

// Config sets a git configuration value of the repository.
func (r *Repo) Config(key, value string) {
	r.t.Helper()
	r.git("config", key, value)
}

// Commit writes files (slash paths), commits them all on the current
// branch and returns the commit's SHA.
func (r *Repo) Commit(files map[string]string) string {
	r.t.Helper()
	testtree.Write(r.t, r.dir, files)
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", "test commit")
	return r.git("rev-parse", "HEAD")
}

// Tag tags HEAD with an annotated tag, moving it if it exists.
func (r *Repo) Tag(name string) {
	r.t.Helper()
	r.git("tag", "-f", "-a", "-m", name, name)
}

func (r *Repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=gated test", "-c", "user.email=test@gated.invalid", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}, args...)...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+r.dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// Dir is the repository's folder, for tests that read it in place.
func (r *Repo) Dir() string { return r.dir }

// Root is the directory the repositories are in, owner/name below it.
func (s *Server) Root() string { return s.root }

// Remove deletes files (slash paths), commits and returns the commit's SHA.
func (r *Repo) Remove(paths ...string) string {
	r.t.Helper()
	r.git(append([]string{"rm", "-q", "--"}, paths...)...)
	r.git("commit", "-q", "-m", "test removal")
	return r.git("rev-parse", "HEAD")
}
