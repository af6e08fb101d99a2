package catalog

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Size limits: a catalog is operator-written text; anything beyond these is
// a mistake (or an attack on the loader), not a catalog.
const (
	maxFileSize = 1 << 20
	maxFiles    = 100_000
)

// file is one catalog file found by the scan.
type file struct {
	dirIdx int
	root   string // the catalog directory, absolute and symlink-free
	rel    string // slash-separated path relative to the catalog directory
	path   string // the path problems name: the directory as given joined with rel
	format string
	data   []byte
}

// Load scans dirs recursively, parses, validates and resolves every catalog
// file. On any problem it returns a *LoadError listing all of them and no
// catalog: a decision never sees a partial catalog.
func Load(dirs []string) (*Catalog, error) {
	if len(dirs) == 0 {
		return nil, errors.New("catalog: no directories given")
	}
	l := newLoader()
	files := l.scan(dirs)
	for _, f := range files {
		if f.format == formatSkillMD {
			l.skills[skillKey(f.root, path.Dir(f.rel))] = f
		}
	}
	for _, f := range files {
		l.parse(f)
	}
	l.resolveTools()
	l.index()
	if err := l.ps.err(); err != nil {
		return nil, err
	}
	return l.catalog(files), nil
}

// formatSkillMD is the Agent Skills manifest: read only for the owner/skill
// name of an ACTIONS.yaml beside it.
const formatSkillMD = "skill.md"

// formatOf recognises catalog file names; other files are ignored.
func formatOf(name string) string {
	switch {
	case name == "ACTION.md" || strings.HasSuffix(name, ".ACTION.md"):
		return FormatActionMD
	case name == "TOOL.md" || strings.HasSuffix(name, ".TOOL.md"):
		return FormatToolMD
	case name == "ACTIONS.yaml":
		return FormatActionsYAML
	case name == "action.json":
		return FormatActionJSON
	case name == "SKILL.md":
		return formatSkillMD
	}
	return ""
}

// scan walks every directory and reads the catalog files in a stable order
// (directory order, then path). A directory given as a symlink is followed;
// inside it, symlinked files are read (that is how a Kubernetes ConfigMap
// presents its keys) but symlinked directories are not, and "..*" entries,
// the ConfigMap's own timestamped copies, are skipped.
func (l *loader) scan(dirs []string) []file {
	var files []file
	for i, dir := range dirs {
		root, err := catalogRoot(dir)
		if err != nil {
			l.ps.add(dir, "", "catalog_dir_invalid", "%v", err)
			continue
		}
		found := 0
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			rel, relErr := filepath.Rel(root, p)
			if relErr != nil {
				return relErr
			}
			shown := filepath.Join(dir, rel) // problems name the path the operator gave
			if err != nil {
				l.ps.add(shown, "", "read_failed", "%v", err)
				return nil
			}
			if strings.HasPrefix(d.Name(), "..") && p != root {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			format := formatOf(d.Name())
			if d.IsDir() || format == "" {
				return nil
			}
			if len(files) >= maxFiles {
				l.ps.add(shown, "", "too_many_files", "more than %d catalog files", maxFiles)
				return filepath.SkipAll
			}
			if format != formatSkillMD {
				found++
			}
			data, err := readLimited(p)
			if err != nil {
				l.ps.add(shown, "", "read_failed", "%v", err)
				return nil
			}
			files = append(files, file{dirIdx: i, root: root, rel: filepath.ToSlash(rel), path: shown, format: format, data: data})
			return nil
		})
		if err != nil {
			l.ps.add(dir, "", "read_failed", "%v", err)
		}
		if found == 0 && err == nil {
			l.ps.add(dir, "", "catalog_empty", "no ACTION.md, TOOL.md, ACTIONS.yaml or action.json files below this directory")
		}
	}
	return files
}

func catalogRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(root)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	return root, nil
}

// readLimited reads a regular file (following a symlink) of at most
// maxFileSize bytes.
func readLimited(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("larger than %d bytes", maxFileSize)
	}
	return data, nil
}

// revision hashes every file that went into the catalog, with its place, so
// that moving or renaming a file changes the revision too.
func revision(files []file) string {
	h := sha256.New()
	var n [8]byte
	for _, f := range files {
		binary.BigEndian.PutUint64(n[:], uint64(f.dirIdx))
		h.Write(n[:])
		for _, part := range [][]byte{[]byte(f.rel), f.data} {
			binary.BigEndian.PutUint64(n[:], uint64(len(part)))
			h.Write(n[:])
			h.Write(part)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func (l *loader) catalog(files []file) *Catalog {
	slices.SortFunc(l.views, func(a, b *View) int { return strings.Compare(a.ToolID, b.ToolID) })
	slices.SortFunc(l.actionList, func(a, b *Action) int { return strings.Compare(a.ID, b.ID) })
	return &Catalog{
		byName:   l.names,
		views:    l.views,
		actions:  l.actionList,
		byID:     l.actions,
		bySlug:   l.slugs,
		revision: revision(files),
	}
}
