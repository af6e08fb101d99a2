// Package bundletest serves real git repositories on loopback, through
// git's own smart-HTTP backend, so bundle tests fetch github sources the
// way production does without touching the internet.
package bundletest

import (
	"github.com/gatedhq/gated/internal/testtree"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Backend is git's smart-HTTP CGI program.
const Backend = "/usr/lib/git-core/git-http-backend"

// Server serves the repositories below its root at Base + owner/name.
type Server struct {
	Base string
	t    testing.TB
	root string
}

// NewServer starts a git server on 127.0.0.1, stopped when t ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	if _, err := os.Stat(Backend); err != nil {
		t.Fatalf("the git HTTP backend is needed to serve test repositories: %v", err)
	}
	root := t.TempDir()
	srv := httptest.NewServer(&cgi.Handler{Path: Backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}})
	t.Cleanup(srv.Close)
	return &Server{Base: srv.URL + "/", t: t, root: root}
}

// Repo is a repository the server serves, written with the git CLI.
type Repo struct {
	t   testing.TB
	dir string
}

// Repo creates the repository owner/name with an unborn main branch.
func (s *Server) Repo(name string) *Repo {
	s.t.Helper()
	r := &Repo{t: s.t, dir: filepath.Join(s.root, filepath.FromSlash(name))}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		s.t.Fatal(err)
	}
	r.git("init", "-q", "-b", "main")
	return r
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

// Root is the directory the repositories are in, owner/name below it.
func (s *Server) Root() string { return s.root }
