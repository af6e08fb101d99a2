package reload

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsnotify/fsnotify"
)

// watchSet keeps the watches on the configured directories current. A
// directory reached through a symlink (git-sync's "current" link, a path
// through a ConfigMap's "..data") is watched where the link points now; the
// directories holding those links are watched too, so that when a new link
// is renamed over an old one the watches move to the new target. Watching
// only the old target would miss every later change.
type watchSet struct {
	w       *fsnotify.Watcher
	dirs    []string // as configured
	roots   []string // each dir resolved, as watched ("" while unresolvable)
	holders []string // directories holding a symlink on the way to a root
	onError func(error)
}

func newWatchSet(w *fsnotify.Watcher, dirs []string, onError func(error)) (*watchSet, error) {
	ws := &watchSet{w: w, dirs: dirs, roots: make([]string, len(dirs)), onError: onError}
	for i, d := range dirs {
		root, err := filepath.EvalSymlinks(d)
		if err != nil {
			return nil, fmt.Errorf("reload: watch %s: %w", d, err)
		}
		if err := watchTree(w, root); err != nil {
			return nil, err
		}
		ws.roots[i] = root
	}
	ws.watchHolders()
	return ws, nil
}

// handle takes one watcher event and reports whether it may change what a
// build reads.
func (ws *watchSet) handle(ev fsnotify.Event) bool {
	moved := ws.follow()
	if ws.under(ev.Name) {
		if ev.Has(fsnotify.Create) {
			ws.watchNewDir(ev.Name)
		}
		return true
	}
	// Beside a symlinked root, only a swap that moved the root matters.
	return moved
}

// follow re-resolves every directory and moves the watches of one whose
// symlink now points elsewhere. It reports whether any root moved or stopped
// resolving.
func (ws *watchSet) follow() bool {
	moved := false
	for i, d := range ws.dirs {
		root, err := filepath.EvalSymlinks(d)
		if err != nil {
			root = ""
		}
		if root == ws.roots[i] {
			continue
		}
		moved = true
		old := ws.roots[i]
		ws.roots[i] = root
		if old != "" {
			ws.unwatchTree(old)
		}
		if root != "" {
			if err := watchTree(ws.w, root); err != nil {
				ws.report(err)
			}
		}
	}
	if moved {
		ws.watchHolders()
	}
	return moved
}

// watchHolders watches, non-recursively, each directory that holds a
// symlink on the way to a configured directory: the swap of that link shows
// up there and nowhere else.
func (ws *watchSet) watchHolders() {
	var holders []string
	for _, d := range ws.dirs {
		holders = append(holders, linkHolders(d)...)
	}
	slices.Sort(holders)
	holders = slices.Compact(holders)
	for _, h := range holders {
		if !slices.Contains(ws.holders, h) {
			if err := ws.w.Add(h); err != nil {
				ws.report(fmt.Errorf("reload: watch %s: %w", h, err))
			}
		}
	}
	for _, h := range ws.holders {
		if !slices.Contains(holders, h) && !ws.under(h) {
			_ = ws.w.Remove(h) // it may be gone already
		}
	}
	ws.holders = holders
}

// linkHolders lists the directories (resolved) that hold a symlink on the
// path to dir: dir itself, or any directory above it, being a symlink.
func linkHolders(dir string) []string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	var out []string
	for p := abs; ; p = filepath.Dir(p) {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if h, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
				out = append(out, h)
			}
		}
		if filepath.Dir(p) == p {
			return out
		}
	}
}

// under reports whether path lies in one of the watched roots.
func (ws *watchSet) under(path string) bool {
	for _, r := range ws.roots {
		if r != "" && (path == r || strings.HasPrefix(path, r+string(filepath.Separator))) {
			return true
		}
	}
	return false
}

// unwatchTree drops the watches below a root that moved away, unless
// another root still covers them.
func (ws *watchSet) unwatchTree(old string) {
	for _, p := range ws.w.WatchList() {
		if (p == old || strings.HasPrefix(p, old+string(filepath.Separator))) && !ws.under(p) && !slices.Contains(ws.holders, p) {
			_ = ws.w.Remove(p) // a deleted directory has lost its watch already
		}
	}
}

// watchNewDir starts watching a directory created after Run began (and
// anything already inside it, since files may land before the watch does).
func (ws *watchSet) watchNewDir(path string) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.IsDir() || skipDir(filepath.Base(path)) {
		return
	}
	if err := watchTree(ws.w, path); err != nil {
		ws.report(err)
	}
}

func (ws *watchSet) report(err error) {
	if ws.onError != nil {
		ws.onError(err)
	}
}

// watchTree adds root (a resolved directory) and every directory below it
// to the watcher.
func watchTree(w *fsnotify.Watcher, root string) error {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if p != root && skipDir(d.Name()) {
			return filepath.SkipDir
		}
		return w.Add(p)
	})
	if err != nil {
		return fmt.Errorf("reload: watch %s: %w", root, err)
	}
	return nil
}

// skipDir leaves out Kubernetes' atomic-writer internals ("..data",
// "..2026_11_20_…"): their swap shows up as an event in the parent, which is
// watched, and watching the timestamped copies would only add noise.
func skipDir(name string) bool { return strings.HasPrefix(name, "..") }
