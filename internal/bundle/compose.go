package bundle

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/gatedhq/gated/internal/opfile"
)

// Limits cap what one composition reads. AIP-26 requires a size cap; the
// file count and ref depth bound the work a manifest can ask for.
type Limits struct {
	Files    int   // files in the bundle, after overlay
	Bytes    int64 // bytes read from every source together, overwritten ones included
	RefDepth int   // code-workspaces nested through ref sources
}

// DefaultLimits are the caps gated composes with: AIP-26's own example
// size cap, and more files than any catalog or policy has.
var DefaultLimits = Limits{Files: 20_000, Bytes: 100 << 20, RefDepth: 16}

// manifestBytes caps one manifest file.
const manifestBytes = 1 << 20

// Fetcher fetches the files below a folder of a git repository at a ref.
type Fetcher interface {
	// Fetch returns the commit ref resolved to and the files below dir
	// (remote-internal, "" for the root), keyed by their path below dir.
	Fetch(repo, ref, dir string) (sha string, files map[string][]byte, err error)
}

// Options configure Compose.
type Options struct {
	Limits Limits
	// Git fetches github sources; without it a manifest with one is refused.
	Git Fetcher
	// RequirePinned refuses github sources whose ref is not a commit SHA.
	RequirePinned bool
	// PublicKey, when set, refuses a bundle without a signature by it over
	// its revision (SigPath).
	PublicKey ed25519.PublicKey
}

// Commit is what a github source resolved to: the bytes that ran can be
// found again from it whatever the branch or tag does later.
type Commit struct {
	Repo string `json:"repo"`
	Ref  string `json:"ref"`
	Path string `json:"path,omitempty"`
	SHA  string `json:"sha"`
}

// String is the commit as decision records keep it: repo@ref=sha.
func (c Commit) String() string { return c.Repo + "@" + c.Ref + "=" + c.SHA }

// Bundle is a composed bundle: its files, its revision, and the commits
// its github sources resolved to, in declaration order.
type Bundle struct {
	Files    map[string][]byte
	Revision string
	Commits  []Commit
	// Origins says where each file's bytes came from (a workspace path,
	// repo@sha:path, or the manifest that inlined it), so that a problem
	// names the file its author can edit rather than the materialised copy.
	Origins map[string]string
}

// shaRef is a full commit SHA, the only ref shape that never moves.
var shaRef = regexp.MustCompile(`^[0-9a-f]{40}$`)

// IsSHA reports whether ref is a full commit SHA.
func IsSHA(ref string) bool { return shaRef.MatchString(ref) }

// repoName is GitHub's owner/name form.
var repoName = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)

// step is one source to read, from the manifest that declared it.
type step struct {
	src  Source
	from string // the declaring manifest, workspace-relative
}

// Compose reads the manifest and composes its bundle. The manifest's
// folder is the workspace: every workspace-relative path is relative to
// it, and nothing outside it (through ".." or a symlink) is read. All
// manifests are read and every path checked first, ref cycles included;
// only then is any source read.
func Compose(manifest string, opts Options) (*Bundle, error) {
	if opts.Limits == (Limits{}) {
		opts.Limits = DefaultLimits
	}
	root, err := os.OpenRoot(filepath.Dir(manifest))
	if err != nil {
		return nil, fmt.Errorf("the workspace of %s cannot be opened: %w", manifest, err)
	}
	defer root.Close()
	c := &composer{root: root, workspace: filepath.Dir(manifest), opts: opts, files: map[string][]byte{}, origins: map[string]string{}}
	steps, err := c.plan(filepath.Base(manifest), nil)
	if err != nil {
		return nil, err
	}
	for _, s := range steps {
		if err := c.read(s); err != nil {
			return nil, fmt.Errorf("%s: %w", s.from, err)
		}
	}
	if err := checkTree(c.files); err != nil {
		return nil, err
	}
	b := &Bundle{Files: c.files, Revision: Revision(c.files), Commits: c.commits, Origins: c.origins}
	if opts.PublicKey != nil {
		if err := Verify(manifest, b.Revision, opts.PublicKey); err != nil {
			return nil, err
		}
	}
	return b, nil
}

type composer struct {
	root      *os.Root
	workspace string // the folder root opened, as given
	opts      Options
	files     map[string][]byte
	origins   map[string]string
	bytesRead int64
	commits   []Commit
}

// plan reads the manifest at rel and returns its sources with every ref
// expanded in place, depth first. stack holds the manifests that led here:
// meeting one again is a cycle, refused before it is read a second time
// and before any source is read.
func (c *composer) plan(rel string, stack []string) ([]step, error) {
	if i := slices.Index(stack, rel); i >= 0 {
		return nil, fmt.Errorf("the ref sources form a cycle: %s", strings.Join(append(stack[i:], rel), " → "))
	}
	if len(stack) > c.opts.Limits.RefDepth {
		return nil, fmt.Errorf("%s: ref sources nest deeper than %d code-workspaces", rel, c.opts.Limits.RefDepth)
	}
	data, err := c.readManifest(rel)
	if err != nil {
		return nil, err
	}
	sources, err := parseManifest(rel, data)
	if err != nil {
		return nil, err
	}
	stack = append(stack, rel)
	var steps []step
	for i, s := range sources {
		if err := c.check(&s); err != nil {
			return nil, fmt.Errorf("%s: source %d: %w", rel, i+1, err)
		}
		if s.Ref == nil {
			steps = append(steps, step{src: s, from: rel})
			continue
		}
		target, err := c.refManifest(s.Ref.Path)
		if err != nil {
			return nil, fmt.Errorf("%s: source %d: %w", rel, i+1, err)
		}
		sub, err := c.plan(target, stack)
		if err != nil {
			return nil, err
		}
		steps = append(steps, sub...)
	}
	return steps, nil
}

func (c *composer) readManifest(rel string) ([]byte, error) {
	fi, err := c.root.Stat(rel)
	if err != nil {
		return nil, fmt.Errorf("the manifest %s cannot be read: %w", rel, err)
	}
	if !fi.Mode().IsRegular() || fi.Size() > manifestBytes {
		return nil, fmt.Errorf("the manifest %s is not a regular file of at most %d bytes", rel, manifestBytes)
	}
	return c.root.ReadFile(rel)
}

// refManifest finds the manifest a ref names: the file itself, or the
// first of manifestNames in the folder.
func (c *composer) refManifest(p string) (string, error) {
	if IsManifest(p) {
		return p, nil
	}
	for _, n := range manifestNames {
		m := path.Join(p, n)
		if fi, err := c.root.Stat(m); err == nil && fi.Mode().IsRegular() {
			return m, nil
		}
	}
	return "", fmt.Errorf("the ref %s holds no code-workspace manifest (%s)", p, strings.Join(manifestNames, ", "))
}

// check validates a source's paths and refs, cleaning them in place.
func (c *composer) check(s *Source) error {
	var err error
	switch {
	case s.Inline != nil:
		if s.Inline.Path, err = cleanPath("bundle-internal", s.Inline.Path, false); err != nil {
			return err
		}
		if strings.ContainsRune(s.Inline.Content, 0) {
			return fmt.Errorf("the inline content of %s holds a null byte", s.Inline.Path)
		}
	case s.Local != nil:
		if s.Local.Path, err = cleanPath("workspace-relative", s.Local.Path, false); err != nil {
			return err
		}
		s.Local.asRoot = isRoot(s.Local.As)
		if s.Local.As, err = cleanPath("bundle-internal", s.Local.As, true); err != nil {
			return err
		}
		if s.Local.Glob != "" && !doublestar.ValidatePattern(s.Local.Glob) {
			return fmt.Errorf("the glob %q is not a valid pattern", s.Local.Glob)
		}
	case s.GitHub != nil:
		g := s.GitHub
		if !repoName.MatchString(g.Repo) || strings.Contains(g.Repo, "..") {
			return fmt.Errorf("the github repo %q is not of the form owner/name", g.Repo)
		}
		if g.Ref == "" {
			return fmt.Errorf("the github source %s names no ref", g.Repo)
		}
		if c.opts.RequirePinned && !IsSHA(g.Ref) {
			return fmt.Errorf("the github source %s is at ref %q, and --require-pinned accepts only a 40-hex commit SHA", g.Repo, g.Ref)
		}
		if g.Path, err = cleanPath("remote-internal", g.Path, true); err != nil {
			return err
		}
		g.asRoot = isRoot(g.As)
		if g.As, err = cleanPath("bundle-internal", g.As, true); err != nil {
			return err
		}
		if c.opts.Git == nil {
			return fmt.Errorf("the github source %s cannot be fetched: no git fetcher is configured", g.Repo)
		}
	case s.Ref != nil:
		if s.Ref.Path, err = cleanPath("workspace-relative", s.Ref.Path, true); err != nil {
			return err
		}
	}
	return nil
}

// read expands one source into the bundle, overwriting what earlier
// sources put at the same paths.
func (c *composer) read(s step) error {
	switch src := s.src; {
	case src.Inline != nil:
		return c.put(src.Inline.Path, []byte(src.Inline.Content), filepath.Join(c.workspace, filepath.FromSlash(s.from))+" (inline "+src.Inline.Path+")")
	case src.Local != nil:
		return c.readLocal(src.Local)
	case src.GitHub != nil:
		g := src.GitHub
		sha, files, err := c.opts.Git.Fetch(g.Repo, g.Ref, g.Path)
		if err != nil {
			return err
		}
		c.commits = append(c.commits, Commit{Repo: g.Repo, Ref: g.Ref, Path: g.Path, SHA: sha})
		as := g.As
		if as == "" && !g.asRoot {
			as = g.Path
		}
		return c.putAll(files, as, func(rel string) string { return g.Repo + "@" + sha + ":" + path.Join(g.Path, rel) })
	}
	return errors.New("a source with no variant") // plan expands every ref
}

// putAll places files under as, in a stable order so that the caps trip
// on the same file.
func (c *composer) putAll(files map[string][]byte, as string, origin func(rel string) string) error {
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		if err := c.put(path.Join(as, rel), files[rel], origin(rel)); err != nil {
			return err
		}
	}
	return nil
}

func (c *composer) put(p string, data []byte, origin string) error {
	if !fs.ValidPath(p) || p == "." {
		return fmt.Errorf("the bundle path %q is not a relative path without \"..\"", p)
	}
	c.bytesRead += int64(len(data))
	if c.bytesRead > c.opts.Limits.Bytes {
		return fmt.Errorf("the sources hold more than %d bytes, the bundle size cap", c.opts.Limits.Bytes)
	}
	c.files[p], c.origins[p] = data, origin
	if len(c.files) > c.opts.Limits.Files {
		return fmt.Errorf("the bundle holds more than %d files, the file-count cap", c.opts.Limits.Files)
	}
	return nil
}

// readLocal reads a workspace file, a directory (recursively, filtered by
// glob) or the files a glob path matches. The workspace is an os.Root, so
// a symlink that points out of it fails to read instead of escaping.
func (c *composer) readLocal(l *Local) error {
	fsys := c.root.FS()
	if strings.ContainsAny(l.Path, "*?[{") {
		matches, err := doublestar.Glob(fsys, l.Path, doublestar.WithFilesOnly())
		if err != nil {
			return fmt.Errorf("the local glob %s cannot be expanded: %w", l.Path, err)
		}
		for _, m := range matches {
			if err := c.readFile(m, path.Join(l.As, m)); err != nil {
				return err
			}
		}
		return nil
	}
	fi, err := c.root.Stat(l.Path)
	if err != nil {
		return fmt.Errorf("the local source %s cannot be read: %w", l.Path, err)
	}
	as := l.As
	if as == "" && !l.asRoot {
		as = l.Path
	}
	if !fi.IsDir() {
		return c.readFile(l.Path, as)
	}
	return fs.WalkDir(fsys, l.Path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("the local source %s cannot be read: %w", l.Path, err)
		}
		if d.IsDir() {
			return nil
		}
		rel := strings.TrimPrefix(p, l.Path+"/")
		if l.Glob != "" && !globMatch(l.Glob, rel) {
			return nil
		}
		return c.readFile(p, path.Join(as, rel))
	})
}

// globMatch matches a pattern without "/" against the file's name, and
// one with "/" against its path below the directory.
func globMatch(pattern, rel string) bool {
	if !strings.Contains(pattern, "/") {
		rel = path.Base(rel)
	}
	ok, _ := doublestar.Match(pattern, rel)
	return ok
}

// readFile reads one workspace file (through a symlink inside the
// workspace too) if it is a regular file within the remaining size cap.
func (c *composer) readFile(src, target string) error {
	fi, err := c.root.Stat(src)
	if err != nil {
		return fmt.Errorf("the local file %s cannot be read: %w", src, err)
	}
	if !fi.Mode().IsRegular() {
		return nil // a symlinked directory, a FIFO, a device: not bundle content
	}
	if c.bytesRead+fi.Size() > c.opts.Limits.Bytes {
		return fmt.Errorf("the sources hold more than %d bytes, the bundle size cap", c.opts.Limits.Bytes)
	}
	data, err := c.root.ReadFile(src)
	if err != nil {
		return fmt.Errorf("the local file %s cannot be read: %w", src, err)
	}
	return c.put(target, data, filepath.Join(c.workspace, filepath.FromSlash(src)))
}

// checkTree refuses a bundle where one path is a file and a folder of
// another, which no directory can hold.
func checkTree(files map[string][]byte) error {
	for p := range files {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if _, ok := files[d]; ok {
				return fmt.Errorf("the bundle path %s is a file, and %s needs it to be a folder", d, p)
			}
		}
	}
	return nil
}

// Revision is the bundle's content hash: sha256 over every path, in
// sorted order, with its bytes, each length-prefixed. It depends only on
// the files, not on the sources or their order that produced them.
func Revision(files map[string][]byte) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range slices.Sorted(maps.Keys(files)) {
		for _, part := range [][]byte{[]byte(p), files[p]} {
			binary.BigEndian.PutUint64(n[:], uint64(len(part)))
			h.Write(n[:])
			h.Write(part)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Materialise writes the bundle into a new private directory and calls
// load with it; the directory is removed afterwards, so load must read
// everything it keeps. The problems of a load error name each file by its
// origin, not by the copy that is gone by the time anyone reads them.
func Materialise[T any](b *Bundle, load func(dir string) (T, error)) (T, error) {
	var zero T
	dir, err := os.MkdirTemp("", "gated-bundle-")
	if err != nil {
		return zero, fmt.Errorf("the bundle cannot be written out: %w", err)
	}
	defer os.RemoveAll(dir)
	for _, p := range slices.Sorted(maps.Keys(b.Files)) {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			return zero, fmt.Errorf("the bundle cannot be written out: %w", err)
		}
		if err := os.WriteFile(full, b.Files[p], 0o600); err != nil {
			return zero, fmt.Errorf("the bundle cannot be written out: %w", err)
		}
	}
	v, err := load(dir)
	var l opfile.Lister
	if errors.As(err, &l) {
		// ProblemList shares the error's slice: renaming in place renames
		// the problems the error prints.
		ps := l.ProblemList()
		for i := range ps {
			ps[i].File = b.origin(dir, ps[i].File)
		}
	}
	return v, err
}

// origin names the file a materialised path was written from.
func (b *Bundle) origin(dir, file string) string {
	rel, err := filepath.Rel(dir, file)
	if err != nil || !filepath.IsLocal(rel) {
		return file
	}
	if o, ok := b.Origins[filepath.ToSlash(rel)]; ok {
		return o
	}
	return "bundle:" + filepath.ToSlash(rel) // a folder, or a file the bundle does not hold
}

// Origin is where a loaded catalog or policy came from when a manifest
// composed it: GET /v1/catalog and /v1/policy show it, and every decision
// records its commits.
type Origin struct {
	Manifest string   `json:"manifest"`
	Revision string   `json:"revision"`
	Commits  []Commit `json:"commits"`
}

// Origin describes b as composed from manifest.
func (b *Bundle) Origin(manifest string) *Origin {
	return &Origin{Manifest: manifest, Revision: b.Revision, Commits: append([]Commit{}, b.Commits...)}
}
