package bundle

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// GitRevision is a commit of a local git repository, read without a work
// tree: `gated policy diff` compares a policy as it is at two revisions
// (origin/main and HEAD, say) without checking either out.
type GitRevision struct {
	// Commit is the SHA the revision resolved to.
	Commit string
	tree   *object.Tree
	limits Limits
	read   Limits // what WriteTo has written so far, against limits
}

// OpenGitRevision resolves rev (anything go-git resolves: a branch, a remote
// branch such as origin/main, a tag, HEAD, HEAD~1, a SHA) in the git
// repository at or above dir. A linked worktree reads its main
// repository's objects. limits caps the files and bytes WriteTo writes,
// every call together (DefaultLimits' for a cap left zero).
func OpenGitRevision(dir, rev string, limits Limits) (*GitRevision, error) {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		return nil, fmt.Errorf("no git repository at or above %s: %w", dir, err)
	}
	h, err := repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return nil, fmt.Errorf("the git revision %q does not resolve in %s: %w", rev, dir, err)
	}
	commit, err := repo.CommitObject(*h)
	if err != nil {
		return nil, fmt.Errorf("the git revision %q (%s) is not a commit: %w", rev, h, err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("the tree of %s: %w", h, err)
	}
	if limits.Files <= 0 {
		limits.Files = DefaultLimits.Files
	}
	if limits.Bytes <= 0 {
		limits.Bytes = DefaultLimits.Bytes
	}
	return &GitRevision{Commit: h.String(), tree: tree, limits: limits}, nil
}

// ErrNotInRevision is returned by WriteTo for a path the revision does not
// hold.
var ErrNotInRevision = errors.New("not in the revision")

// WriteTo writes the file or folder at p (slash separated, relative to the
// repository's root) as the revision holds it to the same path below dst,
// so that relative references between written paths (a test file's
// `catalog: ../catalog`) still hold. Only regular and executable files are
// written: symlinks and submodules are not catalog or policy content.
func (r *GitRevision) WriteTo(dst, p string) error {
	clean, err := cleanPath("repository", p, true)
	if err != nil {
		return err
	}
	if clean == "" {
		return r.writeTree(dst, "", r.tree)
	}
	entry, err := r.tree.FindEntry(clean)
	if errors.Is(err, object.ErrEntryNotFound) || errors.Is(err, object.ErrDirectoryNotFound) {
		return fmt.Errorf("%s at %s: %w", p, r.Commit, ErrNotInRevision)
	}
	if err != nil {
		return fmt.Errorf("%s at %s: %w", p, r.Commit, err)
	}
	if entry.Mode == filemode.Dir {
		sub, err := r.tree.Tree(clean)
		if err != nil {
			return fmt.Errorf("%s at %s: %w", p, r.Commit, err)
		}
		return r.writeTree(dst, clean, sub)
	}
	f, err := r.tree.File(clean)
	if err != nil {
		return fmt.Errorf("%s at %s: %w", p, r.Commit, err)
	}
	return r.writeFile(dst, clean, f)
}

func (r *GitRevision) writeTree(dst, prefix string, t *object.Tree) error {
	return t.Files().ForEach(func(f *object.File) error {
		name := f.Name
		if prefix != "" {
			name = prefix + "/" + f.Name
		}
		return r.writeFile(dst, name, f)
	})
}

func (r *GitRevision) writeFile(dst, name string, f *object.File) error {
	if f.Mode != filemode.Regular && f.Mode != filemode.Executable {
		return nil
	}
	r.read.Files++
	r.read.Bytes += f.Size
	if r.read.Files > r.limits.Files {
		return fmt.Errorf("%s at %s: more than %d files", name, r.Commit, r.limits.Files)
	}
	if r.read.Bytes > r.limits.Bytes {
		return fmt.Errorf("%s at %s: more than %d bytes", name, r.Commit, r.limits.Bytes)
	}
	rd, err := f.Reader()
	if err != nil {
		return fmt.Errorf("%s at %s: %w", name, r.Commit, err)
	}
	defer rd.Close()
	out := filepath.Join(dst, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	w, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, io.LimitReader(rd, f.Size)); err != nil {
		w.Close()
		return fmt.Errorf("%s at %s: %w", name, r.Commit, err)
	}
	return w.Close()
}
