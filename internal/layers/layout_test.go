package layers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// layout reads the package map of docs/development.md: the code block under
// "## Layout", a line a path followed by what it holds. A path with a
// trailing slash names a directory; "-- " lines head a layer.
func layout(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root(t), "docs", "development.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Layout\n")
	if !ok {
		t.Fatal(`docs/development.md has no "## Layout" section`)
	}
	_, block, ok := strings.Cut(section, "\n```\n")
	block, _, closed := strings.Cut(block, "\n```")
	if !ok || !closed {
		t.Fatal(`docs/development.md's "## Layout" has no code block`)
	}
	var paths []string
	for line := range strings.Lines(block) {
		if f := strings.Fields(line); len(f) > 0 && f[0] != "--" {
			paths = append(paths, f[0])
		}
	}
	return paths
}

func TestLayoutNamesEveryPackage(t *testing.T) {
	t.Parallel()
	named := map[string]bool{}
	for _, p := range layout(t) {
		named[p] = true
	}
	for rel := range graph(t) {
		if !named[rel] {
			t.Errorf("docs/development.md's Layout does not name the package %s", rel)
		}
	}
}

func TestLayoutNamesOnlyWhatExists(t *testing.T) {
	t.Parallel()
	pkgs := graph(t)
	top := root(t)
	for _, p := range layout(t) {
		if dir, ok := strings.CutSuffix(p, "/"); ok {
			if fi, err := os.Stat(filepath.Join(top, dir)); err != nil || !fi.IsDir() {
				t.Errorf("docs/development.md's Layout names the directory %s, which is not there", p)
			}
			continue
		}
		if _, ok := pkgs[p]; !ok {
			t.Errorf("docs/development.md's Layout names %s, which is not a package of the module", p)
		}
	}
}
