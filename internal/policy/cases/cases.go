// Package cases runs YAML decision cases (`*_test.yaml`) against a
// decision function for `gated policy test`: the analogue of `opa test`
// for gated's policies, and production code despite the file names. The
// caller passes the real gate as the Decider, so cases exercise the whole
// decision path (contract, catalog, policy), not the policy alone.
package cases

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gatedhq/gated/internal/opfile"
	"github.com/gatedhq/gated/internal/route"
)

// Decider decides one event for the given principals at the given time and
// returns the final route and hard blockers.
type Decider func(ev map[string]any, principals []string, now time.Time) (route string, hardBlockers []string)

// File is the shape of a `*_test.yaml` file. Definitions is ignored: it is
// where YAML anchors shared by cases (evidence refs, say) live. Catalog
// names the catalog directory the cases are decided against, relative to
// the test file (see Catalogs).
type File struct {
	Catalog     string `json:"catalog"`
	Definitions any    `json:"definitions"`
	Cases       []Case `json:"cases"`
}

// Case is one decision test.
type Case struct {
	Name       string         `json:"name"`
	Event      map[string]any `json:"event"`
	Principals []string       `json:"principals"`
	Now        time.Time      `json:"now"`
	Expect     Expect         `json:"expect"`
}

// Expect is a case's expected outcome; hard_blockers compare as a set.
type Expect struct {
	Route        string   `json:"route"`
	HardBlockers []string `json:"hard_blockers"`
}

var routes = route.Names()

// Run finds every *_test.yaml under dirs, runs each case through decide,
// prints every failure and then "N passed, M failed". err reports files that
// cannot be read or are malformed (and no test files at all); the counts
// cover the cases run before it.
func Run(dirs []string, decide Decider, w io.Writer) (passed, failed int, err error) {
	files, err := find(dirs)
	if err != nil {
		return 0, 0, err
	}
	for _, path := range files {
		f, err := readFile(path)
		if err != nil {
			return passed, failed, err
		}
		for _, c := range f.Cases {
			gotRoute, gotBlockers := decide(c.Event, c.Principals, c.Now)
			if gotRoute == c.Expect.Route && sameSet(gotBlockers, c.Expect.HardBlockers) {
				passed++
				continue
			}
			failed++
			fmt.Fprintf(w, "FAIL %s: %s: got %s %v, want %s %v\n", path, c.Name, gotRoute, orEmpty(gotBlockers), c.Expect.Route, orEmpty(c.Expect.HardBlockers))
		}
	}
	fmt.Fprintf(w, "%d passed, %d failed\n", passed, failed)
	return passed, failed, nil
}

// Catalogs returns the catalog directories the test files under dirs name
// with their top-level `catalog:` key, each resolved relative to its test
// file, without duplicates, in file order. The caller loads them when it is
// not given a catalog of its own: all the files run against one gate, so
// files naming different catalogs are an error.
func Catalogs(dirs []string) ([]string, error) {
	n, err := namedCatalog(dirs)
	if err != nil || n.dir == "" {
		return nil, err
	}
	return []string{n.dir}, nil
}

// CatalogsOnDisk is Catalogs for test files read where their catalog should
// be beside them: a catalog named that does not exist is an error naming the
// test file and what it names, rather than the path the load fails on (a
// policy folder copied away from its catalog names one that is not there).
func CatalogsOnDisk(dirs []string) ([]string, error) {
	n, err := namedCatalog(dirs)
	if err != nil || n.dir == "" {
		return nil, err
	}
	if _, err := os.Stat(n.dir); errors.Is(err, fs.ErrNotExist) {
		where := n.dir
		if abs, err := filepath.Abs(where); err == nil {
			where = abs
		}
		return nil, fmt.Errorf("%s names the catalog %q, which would be %s and does not exist: give the catalog with --catalog DIR", n.file, n.key, where)
	}
	return []string{n.dir}, nil
}

// named is the catalog test files name: the directory, the first file
// naming it and its `catalog:` as written.
type named struct{ dir, file, key string }

func namedCatalog(dirs []string) (named, error) {
	files, err := find(dirs)
	if err != nil {
		return named{}, err
	}
	var n named
	for _, path := range files {
		f, err := readFile(path)
		if err != nil {
			return named{}, err
		}
		if f.Catalog == "" {
			continue
		}
		dir := f.Catalog
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(filepath.Dir(path), dir)
		}
		dir = filepath.Clean(dir)
		switch {
		case n.dir == "":
			n = named{dir: dir, file: path, key: f.Catalog}
		case n.dir != dir:
			return named{}, fmt.Errorf("policy test: %s names catalog %s but %s names %s; run them separately or pass --catalog", n.file, n.dir, path, dir)
		}
	}
	return n, nil
}

// find lists the *_test.yaml files under dirs.
func find(dirs []string) ([]string, error) {
	var files []string
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), "_test.yaml") {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("policy test: %w", err)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("policy test: %w under %s", ErrNoTestFiles, strings.Join(dirs, ", "))
	}
	return files, nil
}

// readFile decodes and checks one test file. YAML goes through JSON so the
// event reaches the Decider exactly as a JSON request body would.
func readFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("policy test: %w", err)
	}
	var f File
	if err := opfile.DecodeYAML(data, &f); err != nil {
		return nil, fmt.Errorf("policy test %s: %w", path, err)
	}
	for i, c := range f.Cases {
		switch {
		case c.Name == "":
			return nil, fmt.Errorf("policy test %s: case %d has no name", path, i)
		case c.Event == nil:
			return nil, fmt.Errorf("policy test %s: case %q has no event", path, c.Name)
		case c.Now.IsZero():
			return nil, fmt.Errorf("policy test %s: case %q has no now (decisions depend on time, so tests pin it)", path, c.Name)
		case !slices.Contains(routes, c.Expect.Route):
			return nil, fmt.Errorf("policy test %s: case %q: expect.route %q is not one of %v", path, c.Name, c.Expect.Route, routes)
		}
	}
	return &f, nil
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
