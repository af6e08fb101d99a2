// Package layers holds the one statement of how gated's packages stack, as
// tests: every package of the module has a layer, a package imports only
// from the layers below its own (and its own subpackages), and
// docs/development.md's package map names exactly the packages there are.
// `make lint` runs them; so does `make test`.
package layers

import (
	"errors"
	"go/build"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/gatedhq/gated"

// layer is a rank of packages, named by their paths in the module (exactly,
// or by a path.Match pattern).
type layer struct {
	name     string
	packages []string
}

// stack is the module's layers, bottom first. A package may import packages
// of a lower layer, and its own subpackages in its own layer; nothing in its
// own layer besides, and nothing above it. A package is as high as its
// imports need and as low as its importers need: the higher it sits, the
// fewer packages may import it.
var stack = []layer{
	{"base: helpers that know nothing of decisions, and what is embedded", []string{
		"api", "migrations", "client",
		"internal/route", "internal/redact", "internal/keyset", "internal/strictjson",
		"internal/pathset", "internal/shell", "internal/actionresult", "internal/auth",
		"internal/tracing", "internal/reload", "internal/opfile", "internal/opfile/fastschema",
		"internal/adapter/hook/wire",
	}},
	{"the command hook's remote half: forwarded to gated, answered or blocked", []string{
		"internal/hookcmd",
	}},
	{"formats: what operators and agents hand gated, read", []string{
		"internal/bundle", "internal/eventcodec",
	}},
	{"records: what gated keeps and counts — approvals, kill switches, limits, audit, metrics", []string{
		"internal/approval", "internal/kill", "internal/limit",
		"internal/audit", "internal/audit/spool", "internal/audit/chain", "internal/metrics",
	}},
	{"rules: what gated decides with — the contract, the catalog, policy", []string{
		"internal/contract", "internal/catalog", "internal/policy", "internal/policy/cases",
	}},
	{"review: what a change to the rules does, compared", []string{
		"internal/policydiff",
	}},
	{"database: the one pool, the migrations, the one LISTEN loop", []string{
		"internal/postgres",
	}},
	// The other stores write an audit record in their own transaction (an
	// approval spent with the call it allowed), so the audit stores sit
	// below them.
	{"audit stores", []string{
		"internal/audit/postgres", "internal/audit/file",
	}},
	{"stores", []string{
		"internal/approval/postgres", "internal/kill/postgres", "internal/kill/saved", "internal/limit/redis",
	}},
	{"services: the features' running parts (the approvals service, the kill watcher)", []string{
		"internal/approval/*", "internal/kill/*",
	}},
	{"engine", []string{
		"internal/gate",
	}},
	{"around the engine: its answer on the wire, and its sources kept current", []string{
		"internal/envelope", "internal/sources", "internal/policy/coverage", "internal/replay", "internal/candidate",
	}},
	{"review on the loaded sources: the sides of a policy diff", []string{
		"internal/diffside",
	}},
	{"translators onto the engine", []string{
		"internal/actionapi", "internal/adapter/hook", "internal/adapter/mcp", "internal/authzen",
	}},
	{"surfaces", []string{
		"internal/server", "internal/adapter/mcpproxy", "internal/console", "internal/doctor",
	}},
	{"programs", []string{
		"cmd/*", "bench/cmd/*", "deploy/*",
	}},
	// Above everything, so that no production package imports one.
	{"test tools: how tests wait, write trees of files, start gated, reach PostgreSQL", []string{
		"internal/test*", "internal/pgtest",
	}},
	{"test helpers: a feature's fixtures for other packages' tests, and this package", []string{
		"internal/*test", "internal/*/*test", "internal/layers",
	}},
}

// keepOut lists what a package must not link, directly or not: module
// packages by their path in the module (patterns allowed), others by
// import-path prefix.
var keepOut = map[string][]string{
	// The runtimes' hook formats are for a small hook client too: no
	// dependency (its layer, the lowest, already keeps the module out).
	"internal/adapter/hook/wire": {"github.com/", "golang.org/x/", "go.uber.org/", "go.opentelemetry.io/", "gopkg.in/"},
	// A runtime spawns gated-hook on every tool call: it must start as fast
	// as curl, so it links the client and the wire formats and nothing of
	// the engine, its stores or its logging.
	"cmd/gated-hook": {
		"github.com/open-policy-agent/opa", "github.com/jackc/pgx", "github.com/go-chi/chi", "go.uber.org/zap",
		"go.opentelemetry.io/", "github.com/prometheus/",
		"internal/gate", "internal/catalog", "internal/contract", "internal/policy", "internal/server",
	},
	// The stdio MCP proxy runs beside a coding agent: no HTTP router,
	// database driver, server or store.
	"internal/adapter/mcpproxy": {
		"github.com/go-chi/chi", "github.com/jackc/pgx",
		"internal/server", "internal/postgres", "internal/*/postgres",
	},
	// gated doctor reads a coding agent's configuration and talks to
	// gated over HTTP like any client: nothing of the decision engine.
	"internal/doctor": {
		"github.com/jackc/pgx", "github.com/open-policy-agent/opa",
		"internal/gate", "internal/server", "internal/postgres",
	},
}

// rank is the index in stack of the layer rel belongs to: an exact name
// first, else the first pattern that matches, from the top layer down.
func rank(rel string) (int, bool) {
	for i, l := range stack {
		if slices.Contains(l.packages, rel) {
			return i, true
		}
	}
	for i := len(stack) - 1; i >= 0; i-- {
		for _, p := range stack[i].packages {
			if ok, _ := path.Match(p, rel); ok {
				return i, true
			}
		}
	}
	return 0, false
}

// root is the module's directory.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// graph reads the module's packages and the imports of their non-test files,
// by their paths in the module ("internal/gate"); imports from outside the
// module keep their full path.
func graph(t *testing.T) map[string][]string {
	t.Helper()
	top := root(t)
	pkgs := map[string][]string{}
	err := filepath.WalkDir(top, func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if dir != top && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && dir != top {
			return filepath.SkipDir // another module
		}
		p, err := build.ImportDir(dir, 0)
		if _, none := errors.AsType[*build.NoGoError](err); none {
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(top, dir)
		var imports []string
		for _, imp := range p.Imports {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				imp = strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			}
			imports = append(imports, imp)
		}
		pkgs[filepath.ToSlash(rel)] = imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func TestEveryPackageHasALayer(t *testing.T) {
	t.Parallel()
	for rel := range graph(t) {
		if _, ok := rank(rel); !ok {
			t.Errorf("%s has no layer: add it to the stack in internal/layers", rel)
		}
	}
}

func TestTheStackNamesOnlyPackagesThatExist(t *testing.T) {
	t.Parallel()
	pkgs := graph(t)
	for _, l := range stack {
		for _, p := range l.packages {
			found := false
			for rel := range pkgs {
				if ok, _ := path.Match(p, rel); ok {
					found = true
				}
			}
			// A pattern may stand for packages still to come.
			if !found && !strings.Contains(p, "*") {
				t.Errorf("the layer %q names %s, which is not a package of the module", l.name, p)
			}
		}
	}
}

func TestImportsPointDown(t *testing.T) {
	t.Parallel()
	for rel, imports := range graph(t) {
		from, ok := rank(rel)
		if !ok {
			continue // TestEveryPackageHasALayer says so
		}
		for _, imp := range imports {
			to, ok := rank(imp)
			switch {
			case !ok && strings.Contains(strings.Split(imp, "/")[0], "."):
				// Outside the module; keepOut bounds those that matter.
			case !ok:
				// The standard library, or a module package without a layer.
			case to < from:
			case to == from && strings.HasPrefix(imp, rel+"/"):
				// Its own subpackage.
			default:
				t.Errorf("%s (%s) imports %s (%s): a package imports only from the layers below its own",
					rel, stack[from].name, imp, stack[to].name)
			}
		}
	}
}

// TestKeptOut reads the packages' dependencies as the go command does, so
// what a module outside this one brings in counts too.
func TestKeptOut(t *testing.T) {
	t.Parallel()
	for pkg, banned := range keepOut {
		cmd := exec.Command("go", "list", "-deps", "./"+pkg)
		cmd.Dir = root(t)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps ./%s: %v", pkg, err)
		}
		for dep := range strings.FieldsSeq(string(out)) {
			rel := strings.TrimPrefix(dep, module+"/")
			for _, b := range banned {
				matched, _ := path.Match(b, rel)
				if matched || dep == b || strings.HasPrefix(dep, b+"/") {
					t.Errorf("%s depends on %s: it must not link %s", pkg, dep, b)
				}
			}
		}
	}
}
