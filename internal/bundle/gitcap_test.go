package bundle_test

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/bundle"
	"github.com/gatedhq/gated/internal/bundle/bundletest"
	"github.com/gatedhq/gated/internal/testgated"
	"github.com/gatedhq/gated/internal/testtree"
)

// noise is n bytes that do not compress, the same every run.
func noise(n int) string {
	b := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{25}).Read(b)
	return string(b)
}

// Issue 25 §7: a github source was cloned whole, every branch, tag and
// commit, before the size cap applied, so a repository whose history once
// held a big blob cost its size to load a small catalog. Now only the
// commit needed crosses the wire: a tip, a tag and an older pinned commit
// of a repository whose history holds 2 MB that do not compress each
// cost a few kilobytes.
func TestGitFetchesOnlyTheCommitNeeded(t *testing.T) {
	srv := bundletest.NewServer(t)
	repo := srv.Repo("team/rules")
	repo.Commit(map[string]string{"big.bin": noise(2 << 20)})
	pinned := repo.Remove("big.bin")
	repo.Commit(map[string]string{"rules/POLICY.md": "one"})
	repo.Tag("v1")
	repo.Commit(map[string]string{"rules/POLICY.md": "two"})
	for _, c := range []struct{ ref, want string }{{"main", "two"}, {"v1", "one"}, {pinned, ""}} {
		before := srv.Sent()
		b := compose(t, githubManifest(t, c.ref, ""), bundle.Options{Git: &bundle.Git{Base: srv.Base, MaxBytes: 256 << 10}})
		if got := string(b.Files["rules/POLICY.md"]); got != c.want {
			t.Errorf("%s: rules/POLICY.md is %q, want %q", c.ref, got, c.want)
		}
		if sent := srv.Sent() - before; sent > 64<<10 {
			t.Errorf("%s: the server sent %d bytes for a commit of a few bytes", c.ref, sent)
		}
	}
}

// What one commit holds is capped too: a pack larger than the size cap
// stops the fetch as it arrives, and objects that inflate past it stop
// it as they are stored, so a fetch holds about twice the cap at most.
func TestGitCapsTheCommitFetched(t *testing.T) {
	srv := bundletest.NewServer(t)
	g := &bundle.Git{Base: srv.Base, MaxBytes: 256 << 10}
	srv.Repo("team/rules").Commit(map[string]string{"rules/POLICY.md": "p", "other/big.bin": noise(1 << 20)})
	composeErr(t, githubManifest(t, "main", ", path: rules"), bundle.Options{Git: g},
		"the git server sends more than 262144 bytes for one commit, the bundle size cap")
	zeros := testtree.Write(t, t.TempDir(), map[string]string{
		"manifest.yaml": "kind: code-workspace\ncode:\n  sources:\n    - github: { repo: team/zeros, ref: main, path: rules }\n",
	})
	srv.Repo("team/zeros").Commit(map[string]string{"rules/POLICY.md": "p", "other/zeros.bin": strings.Repeat("\x00", 1<<20)})
	composeErr(t, filepath.Join(zeros, "manifest.yaml"), bundle.Options{Git: g},
		"the commit's objects hold more than 262144 bytes, the bundle size cap")
}

// A pinned SHA is fetched alone, which needs a server that serves a
// commit by its SHA (GitHub does); one that does not is named as the
// reason, and its branches still load.
func TestGitPinnedSHANeedsAServerThatServesIt(t *testing.T) {
	srv := bundletest.NewServer(t)
	repo := srv.Repo("team/rules")
	sha := repo.Commit(map[string]string{"a": "one"})
	repo.Config("uploadpack.allowReachableSHA1InWant", "false")
	g := &bundle.Git{Base: srv.Base}
	composeErr(t, githubManifest(t, sha, ""), bundle.Options{Git: g}, "uploadpack.allowReachableSHA1InWant")
	assertFiles(t, compose(t, githubManifest(t, "main", ""), bundle.Options{Git: g}), map[string]string{"a": "one"})
}

// The issue's own reproduction at scale, behind make test-e2e (it writes
// and compresses 240 MB), measured as the peak RSS of a real gated process
// (`gated catalog lint`, its maxrss as the kernel counts it) against a 32
// MiB cap: a repository whose history held a 40 MiB blob, one whose
// current commit holds a 30 MiB blob beside the folder wanted, one whose
// folder wanted holds it, one whose current commit holds 40 MiB, and one
// whose current commit holds 128 MiB of zeros (a pack of a few hundred
// kilobytes). Each stays under twice the cap above a lint of a local
// catalog; before, the pack and the objects it inflated to were all held
// in memory, 7–8 times the cap, and the zeros were inflated before they
// were counted.
func TestGitBigBlobRSS(t *testing.T) {
	if os.Getenv("GATED_BIG_BLOB_TEST") == "" {
		t.Skip("writes 240 MB of repositories: run with GATED_BIG_BLOB_TEST=1 (make test-bundle-big)")
	}
	const limit = 32 << 20
	action := "---\nschema: action/v1\nid: team:read\ndescription: d\nrisk_level: 1\n---\n"
	srv := bundletest.NewServer(t)
	history := srv.Repo("team/history")
	history.Commit(map[string]string{"big.bin": noise(40 << 20)})
	history.Remove("big.bin")
	history.Commit(map[string]string{"rules/read/ACTION.md": action})
	srv.Repo("team/beside").Commit(map[string]string{"rules/read/ACTION.md": action, "other/big.bin": noise(30 << 20)})
	srv.Repo("team/inside").Commit(map[string]string{"rules/read/ACTION.md": action, "rules/big.bin": noise(30 << 20)})
	srv.Repo("team/over").Commit(map[string]string{"rules/read/ACTION.md": action, "other/big.bin": noise(40 << 20)})
	srv.Repo("team/zeros").Commit(map[string]string{"rules/read/ACTION.md": action, "other/zeros.bin": strings.Repeat("\x00", 128<<20)})

	// GNU time forks gated: the maxrss os/exec reports would be this test
	// process's own, which a vfork'd child inherits across exec.
	const timeBin = "/usr/bin/time"
	if _, err := os.Stat(timeBin); err != nil {
		t.Fatalf("GNU time is needed to measure gated's peak RSS: %v", err)
	}
	bin, rssFile := testgated.Binary(t), filepath.Join(t.TempDir(), "maxrss")
	lint := func(catalog string) (rss int64, out string, err error) {
		b, err := exec.Command(timeBin, "-f", "%M", "-o", rssFile, bin, "catalog", "lint",
			"--bundle-git-base", srv.Base, "--bundle-max-bytes", strconv.Itoa(limit), catalog).CombinedOutput()
		kib, rerr := os.ReadFile(rssFile)
		if rerr != nil {
			t.Fatal(rerr)
		}
		// time -o appends a "Command exited with non-zero status" line.
		lines := strings.Fields(string(kib))
		n, perr := strconv.ParseInt(lines[len(lines)-1], 10, 64)
		if perr != nil {
			t.Fatalf("GNU time wrote %q: %v", kib, perr)
		}
		return n << 10, string(b), err
	}
	local := testtree.Write(t, t.TempDir(), map[string]string{"read/ACTION.md": action})
	baseline, out, err := lint(local)
	if err != nil {
		t.Fatalf("lint of a local catalog: %v\n%s", err, out)
	}
	t.Logf("baseline: a local catalog, maxrss %d MiB", baseline>>20)
	for _, c := range []struct {
		repo, refused string
		within        int64
	}{
		{"team/history", "", limit / 4},
		{"team/beside", "", 2 * limit},
		{"team/inside", "", 2 * limit},
		{"team/over", "bundle size cap", 2 * limit},
		{"team/zeros", "bundle size cap", limit / 4},
	} {
		m := testtree.Write(t, t.TempDir(), map[string]string{
			"manifest.yaml": "kind: code-workspace\ncode:\n  sources:\n    - github: { repo: " + c.repo + ", ref: main, path: rules, as: . }\n",
		})
		rss, out, err := lint(filepath.Join(m, "manifest.yaml"))
		t.Logf("%s: maxrss %d MiB, %d MiB above the baseline", c.repo, rss>>20, (rss-baseline)>>20)
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("%s: lint failed: %v\n%s", c.repo, err, out)
		case c.refused != "" && !strings.Contains(out, c.refused):
			t.Errorf("%s: lint said %q, want it refused for %q", c.repo, out, c.refused)
		}
		if rss-baseline > c.within {
			t.Errorf("%s: maxrss %d bytes is more than %d above a local lint's %d", c.repo, rss, c.within, baseline)
		}
	}
}

// The repository a commit is fetched into is on disk only while it is
// read: neither a fetch nor a refused one leaves it behind.
func TestGitFetchLeavesNothingOnDisk(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	srv := bundletest.NewServer(t)
	srv.Repo("team/rules").Commit(map[string]string{"rules/POLICY.md": "p", "other/big.bin": noise(1 << 20)})
	g := &bundle.Git{Base: srv.Base, MaxBytes: 2 << 20}
	assertFiles(t, compose(t, githubManifest(t, "main", ", path: rules"), bundle.Options{Git: g}), map[string]string{"rules/POLICY.md": "p"})
	small := &bundle.Git{Base: srv.Base, MaxBytes: 256 << 10} // not the cache of g
	composeErr(t, githubManifest(t, "main", ", path: rules"), bundle.Options{Git: small}, "bundle size cap")
	if left, err := os.ReadDir(tmp); err != nil || len(left) != 0 {
		t.Errorf("the fetches left %v in TMPDIR (%v)", left, err)
	}
}
