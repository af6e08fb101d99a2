package bundle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// DefaultGitBase is where github sources are fetched from: the repo's
// owner/name is appended to it.
const DefaultGitBase = "https://github.com/"

// TagTTL is how long a tag's files are kept before the tag is resolved
// again: AIP-26 caches vN.N.N tags for 24 hours, since a tag can move.
const TagTTL = 24 * time.Hour

// DefaultGitTimeout bounds one fetch of a github source.
const DefaultGitTimeout = 2 * time.Minute

// tagRef is AIP-26's tag shape (v1, v1.2.3); other non-SHA refs are
// branches, resolved on every composition.
var tagRef = regexp.MustCompile(`^v[0-9]+(\.[0-9]+)*$`)

// Git fetches github sources with go-git over smart HTTP, one commit at a
// time (fetchTree), and caches them by (repo, ref, path): a commit SHA
// forever, a tag for TagTTL, and a branch only as long as it still
// resolves to the same commit (it is resolved again on every fetch, with
// one ls-remote). It is safe for concurrent use.
type Git struct {
	// Base is the URL the repo's owner/name is appended to; DefaultGitBase
	// when empty.
	Base string
	// MaxBytes caps the pack fetched for one commit, and the sizes of
	// the commit's objects together (each); DefaultLimits.Bytes when
	// zero.
	MaxBytes int64
	// Now is the clock tag expiry is measured with; time.Now when nil.
	Now func() time.Time
	// Timeout bounds one fetch (ls-remote and fetch), so that a server
	// that stops answering cannot stall reloads; DefaultGitTimeout when
	// zero.
	Timeout time.Duration

	mu    sync.Mutex
	cache map[gitKey]gitEntry
}

type gitKey struct{ repo, ref, path string }

type gitEntry struct {
	sha   string
	files map[string][]byte
	at    time.Time
}

func (g *Git) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

func (g *Git) url(repo string) string {
	base := g.Base
	if base == "" {
		base = DefaultGitBase
	}
	return strings.TrimSuffix(base, "/") + "/" + repo
}

// Fetch implements Fetcher.
func (g *Git) Fetch(repo, ref, dir string) (string, map[string][]byte, error) {
	k := gitKey{repo, ref, dir}
	g.mu.Lock()
	e, cached := g.cache[k]
	g.mu.Unlock()
	if cached && (IsSHA(ref) || tagRef.MatchString(ref) && g.now().Sub(e.at) < TagTTL) {
		return e.sha, e.files, nil
	}
	timeout := g.Timeout
	if timeout <= 0 {
		timeout = DefaultGitTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	url := g.url(repo)
	want, name := ref, ""
	if !IsSHA(ref) {
		tip, refName, err := lsRemote(ctx, url, ref)
		if err != nil {
			return "", nil, fmt.Errorf("the github source %s@%s cannot be resolved: %w", repo, ref, err)
		}
		want, name = tip, refName
	}
	// A branch or tag still at the cached commit has the same files.
	if cached && want == e.sha {
		g.store(k, e.sha, e.files)
		return e.sha, e.files, nil
	}
	sha, files, err := g.fetchTree(ctx, url, want, name, dir)
	if err != nil {
		return "", nil, fmt.Errorf("the github source %s@%s cannot be fetched: %w", repo, ref, err)
	}
	g.store(k, sha, files)
	return sha, files, nil
}

func (g *Git) store(k gitKey, sha string, files map[string][]byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cache == nil {
		g.cache = map[gitKey]gitEntry{}
	}
	g.cache[k] = gitEntry{sha: sha, files: files, at: g.now()}
}

// lsRemote resolves a branch or tag name to the commit it points at (an
// annotated tag peeled to its commit, as the server advertises it), and
// names the reference it found.
func lsRemote(ctx context.Context, url, ref string) (hash, name string, err error) {
	r := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{url}})
	refs, err := r.ListContext(ctx, &git.ListOptions{PeelingOption: git.AppendPeeled})
	if err != nil {
		return "", "", err
	}
	found := map[plumbing.ReferenceName]string{}
	for _, rf := range refs {
		found[rf.Name()] = rf.Hash().String()
	}
	for _, name := range []string{"refs/tags/" + ref, "refs/heads/" + ref} {
		if h, ok := found[plumbing.ReferenceName(name+"^{}")]; ok {
			return h, name, nil
		}
		if h, ok := found[plumbing.ReferenceName(name)]; ok {
			return h, name, nil
		}
	}
	return "", "", fmt.Errorf("no branch or tag %q", ref)
}

// wantRef is where the fetched commit is kept in the fetch's repository.
const wantRef = "refs/gated/want"

// fetchTree fetches the one commit needed into a temporary repository on
// disk, and reads the files below dir at it. Only that commit comes: depth
// 1, no tags, one refspec — the reference name for a branch or tag (any
// server serves it), the hash itself for a pinned SHA (the server must
// allow a reachable SHA in a want, as GitHub does). So what history once
// held is never transferred; the pack received and the objects of the
// commit are capped too (cappedStorage), and only the files
// below dir are read into memory. A branch that moved since ls-remote
// gives its new commit, and the hash returned is the one read.
func (g *Git) fetchTree(ctx context.Context, url, hash, name, dir string) (_ string, _ map[string][]byte, err error) {
	limit := g.MaxBytes
	if limit == 0 {
		limit = DefaultLimits.Bytes
	}
	st, err := newCappedStorage(limit)
	if err != nil {
		return "", nil, err
	}
	defer func() {
		if cerr := st.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("the fetched repository cannot be removed: %w", cerr)
		}
	}()
	repo, err := git.Init(st, nil)
	if err != nil {
		return "", nil, err
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{url}}); err != nil {
		return "", nil, err
	}
	src := hash
	if name != "" {
		src = name
	}
	err = repo.FetchContext(ctx, &git.FetchOptions{RemoteName: "origin", Depth: 1, Tags: git.NoTags,
		RefSpecs: []config.RefSpec{config.RefSpec("+" + src + ":" + wantRef)}})
	if errors.Is(err, git.ErrExactSHA1NotSupported) {
		return "", nil, fmt.Errorf("the git server does not serve a commit by its SHA (uploadpack.allowReachableSHA1InWant), so %s cannot be fetched alone", hash)
	}
	if err != nil {
		return "", nil, err
	}
	got, err := repo.Reference(wantRef, false)
	if err != nil {
		return "", nil, err
	}
	h := got.Hash()
	commit, err := repo.CommitObject(h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		if tag, terr := repo.TagObject(h); terr == nil {
			commit, err = tag.Commit()
		}
	}
	if err != nil {
		return "", nil, fmt.Errorf("commit %s: %w", h, err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return "", nil, err
	}
	if dir != "" {
		if tree, err = tree.Tree(dir); err != nil {
			return "", nil, fmt.Errorf("the folder %s at commit %s: %w", dir, commit.Hash, err)
		}
	}
	files := map[string][]byte{}
	err = tree.Files().ForEach(func(f *object.File) error {
		if f.Mode != filemode.Regular && f.Mode != filemode.Executable {
			return nil // symlinks and submodules are not bundle content
		}
		r, err := f.Reader()
		if err != nil {
			return err
		}
		defer r.Close()
		// checkInflated bounded f.Size; reading into a buffer of that size
		// keeps a large file from being held twice while it grows.
		data := make([]byte, f.Size)
		if _, err := io.ReadFull(r, data); err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
		files[f.Name] = data
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	return commit.Hash.String(), files, nil
}
