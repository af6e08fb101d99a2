package catalog

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"path"
	"slices"
	"strings"

	"github.com/gatedhq/gated/internal/opfile"
)

// limits bound a catalog load: a catalog is operator-written text, and
// anything beyond these is a mistake (or an attack on the loader).
var limits = opfile.Limits{FileBytes: 1 << 20, Files: 100_000, TotalBytes: 256 << 20, Depth: 32}

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
	// Plugin actions (action.json) last: a plugin may not take a name the
	// core catalog uses, whichever file the scan met first.
	for _, plugins := range []bool{false, true} {
		for _, f := range files {
			if (f.format == FormatActionJSON) == plugins {
				l.parse(f)
			}
		}
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

// scan reads the catalog files of every directory in a stable order
// (directory order, then path), following opfile.Walker's symlink policy:
// the files a ConfigMap volume links to are read once.
func (l *loader) scan(dirs []string) []file {
	w := opfile.Walker{Limits: limits, Match: func(name string) bool { return formatOf(name) != "" }}
	var files []file
	for i, dir := range dirs {
		found, ps, err := w.Walk(dir)
		if err != nil {
			l.ps.add(dir, "", "catalog_dir_invalid", "%v", err)
			continue
		}
		l.ps = append(l.ps, ps...)
		catalogFiles := 0
		for _, f := range found {
			format := formatOf(path.Base(f.Rel))
			if format != formatSkillMD {
				catalogFiles++
			}
			files = append(files, file{dirIdx: i, root: f.Root, rel: f.Rel, path: f.Path, format: format, data: f.Data})
		}
		// A directory whose walk had problems is not empty, only unread.
		if catalogFiles == 0 && len(ps) == 0 {
			l.ps.add(dir, "", "catalog_empty", "no ACTION.md, TOOL.md, ACTIONS.yaml or action.json files below this directory")
		}
	}
	return files
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
