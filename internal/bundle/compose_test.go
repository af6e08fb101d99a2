package bundle_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/bundle"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/testtree"
)

func compose(t *testing.T, manifest string, opts bundle.Options) *bundle.Bundle {
	t.Helper()
	b, err := bundle.Compose(manifest, opts)
	if err != nil {
		t.Fatalf("Compose: %v", err)
	}
	return b
}

func composeErr(t *testing.T, manifest string, opts bundle.Options, want string) {
	t.Helper()
	b, err := bundle.Compose(manifest, opts)
	if err == nil {
		t.Fatalf("Compose composed %d files, want an error containing %q", len(b.Files), want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("Compose error = %v, want one containing %q", err, want)
	}
}

func files(b *bundle.Bundle) map[string]string {
	out := map[string]string{}
	for p, d := range b.Files {
		out[p] = string(d)
	}
	return out
}

func assertFiles(t *testing.T, b *bundle.Bundle, want map[string]string) {
	t.Helper()
	got := files(b)
	if len(got) != len(want) {
		t.Errorf("bundle holds %v, want %v", got, want)
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("bundle file %s = %q, want %q", p, got[p], w)
		}
	}
}

func TestOverlayLastWinsAndRefExpandsInPlace(t *testing.T) {
	dir := testtree.Write(t, t.TempDir(), map[string]string{
		"manifest.yaml": `kind: code-workspace
name: team-catalog
code:
  sources:
    - inline: { path: a.txt, content: "inline a" }
    - ref: ./shared/base
    - local: { path: over/a.txt, as: a.txt }
    - local: lib/
    - local: { path: lib, as: vendor/, glob: "*.md" }
    - local: { path: lib/sub, as: ., glob: "y.*" }
`,
		"shared/base/manifest.yaml": `kind: code-workspace
code:
  sources:
    - inline: { path: a.txt, content: "base a" }
    - inline: { path: b.txt, content: "base b" }
`,
		"over/a.txt":     "local a",
		"lib/x.md":       "x",
		"lib/sub/y.txt":  "y",
		"unused/z.txt":   "not in the bundle",
		"lib/sub/w.md":   "w",
		"shared/base/no": "not named by any source",
	})
	b := compose(t, filepath.Join(dir, "manifest.yaml"), bundle.Options{})
	assertFiles(t, b, map[string]string{
		"a.txt":           "local a", // inline, then base's, then the local remap: the last wins
		"b.txt":           "base b",
		"lib/x.md":        "x",
		"lib/sub/y.txt":   "y",
		"lib/sub/w.md":    "w",
		"vendor/x.md":     "x",
		"vendor/sub/w.md": "w",
		"y.txt":           "y", // as: . is the bundle's root
	})
	if b.Revision != bundle.Revision(b.Files) || !strings.HasPrefix(b.Revision, "sha256:") {
		t.Errorf("Revision = %q, want the content hash of the files", b.Revision)
	}
}

// The string shorthand and the lean CODE.md form compose like the object
// form.
func TestShorthandAndLeanForm(t *testing.T) {
	dir := testtree.Write(t, t.TempDir(), map[string]string{
		"manifest.yaml": "kind: code-workspace\ncode: ./shared/lean\n",
		"shared/lean/CODE.md": `---
schema: code/v2
id: "@team/code/lean"
source: { local: "policy/POLICY.md" }
run: "true"
---
# lean
`,
		"policy/POLICY.md": "p",
	})
	b := compose(t, filepath.Join(dir, "manifest.yaml"), bundle.Options{})
	assertFiles(t, b, map[string]string{"policy/POLICY.md": "p"})
}

// The same files give the same revision whatever sources and order
// produced them; a byte or a path changed gives another.
func TestRevisionIsDeterministic(t *testing.T) {
	dir := testtree.Write(t, t.TempDir(), map[string]string{
		"one.yaml": `kind: code-workspace
code:
  sources:
    - local: src/
    - inline: { path: src/b, content: "B" }
`,
		"two/manifest.yaml": `kind: code-workspace
code:
  sources:
    - inline: { path: src/b, content: "B" }
    - inline: { path: src/a, content: "A" }
`,
		"src/a": "A",
		"src/b": "old B",
	})
	one := compose(t, filepath.Join(dir, "one.yaml"), bundle.Options{})
	two := compose(t, filepath.Join(dir, "two", "manifest.yaml"), bundle.Options{})
	if one.Revision != two.Revision {
		t.Errorf("revisions differ for the same files: %s, %s", one.Revision, two.Revision)
	}
	moved := map[string][]byte{"src/a": []byte("A"), "src/c": []byte("B")}
	if bundle.Revision(moved) == one.Revision {
		t.Error("a renamed file kept the revision")
	}
}

// A cycle is refused before any source is read: the missing local file
// declared before it would fail a read.
func TestRefCycleRefusedBeforeAnyRead(t *testing.T) {
	dir := testtree.Write(t, t.TempDir(), map[string]string{
		"manifest.yaml": `kind: code-workspace
code:
  sources:
    - local: missing.txt
    - ref: a
`,
		"a/manifest.yaml": "kind: code-workspace\ncode: { sources: [ { ref: b } ] }\n",
		"b/CODE.md":       "---\nkind: code-workspace\ncode: a\n---\n",
	})
	composeErr(t, filepath.Join(dir, "manifest.yaml"), bundle.Options{},
		"the ref sources form a cycle: a/manifest.yaml → b/CODE.md → a/manifest.yaml")
	testtree.Write(t, dir, map[string]string{"self/manifest.yaml": "kind: code-workspace\ncode: .\n"})
	composeErr(t, filepath.Join(dir, "self", "manifest.yaml"), bundle.Options{}, "the ref sources form a cycle")
}

// Every path that could leave the workspace or the bundle is refused
// before anything is read, and a symlink out of the workspace is not
// followed.
func TestEscapesRefused(t *testing.T) {
	outside := testtree.Write(t, t.TempDir(), map[string]string{"secret": "s"})
	cases := map[string]string{
		"local ..":           `local: ../secret`,
		"local absolute":     `local: ` + filepath.Join(outside, "secret"),
		"local as ..":        `local: { path: ok.txt, as: ../../x }`,
		"inline absolute":    `inline: { path: /etc/x, content: x }`,
		"inline inner ..":    `inline: { path: a/../../x, content: x }`,
		"ref ..":             `ref: ../elsewhere`,
		"github path ..":     `github: { repo: o/r, ref: main, path: ../x }`,
		"github as absolute": `github: { repo: o/r, ref: main, as: /x }`,
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			dir := testtree.Write(t, t.TempDir(), map[string]string{
				"manifest.yaml": "kind: code-workspace\ncode:\n  sources:\n    - local: missing\n    - " + src + "\n",
				"ok.txt":        "ok",
			})
			composeErr(t, filepath.Join(dir, "manifest.yaml"), bundle.Options{}, "must be relative")
		})
	}
	t.Run("symlink out", func(t *testing.T) {
		dir := testtree.Write(t, t.TempDir(), map[string]string{"manifest.yaml": "kind: code-workspace\ncode: { sources: [ { local: lib } ] }\n"})
		if err := os.MkdirAll(filepath.Join(dir, "lib"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "lib", "secret")); err != nil {
			t.Fatal(err)
		}
		composeErr(t, filepath.Join(dir, "manifest.yaml"), bundle.Options{}, "path escapes from parent")
	})
}

func TestCapsAndInvalidManifests(t *testing.T) {
	dir := testtree.Write(t, t.TempDir(), map[string]string{
		"manifest.yaml": `kind: code-workspace
code:
  sources:
    - inline: { path: a, content: "12345" }
    - inline: { path: b, content: "67890" }
`,
		"null.yaml":   "kind: code-workspace\ncode: { sources: [ { inline: { path: a, content: \"a\\0b\" } } ] }\n",
		"two.yaml":    "kind: code-workspace\ncode: { sources: [ { inline: { path: a, content: a }, local: b } ] }\n",
		"typo.yaml":   "kind: code-workspace\ncode: { sources: [ { local: { path: a, ass: b } } ] }\n",
		"tool.yaml":   "kind: tool\nname: x\n",
		"clash.yaml":  "kind: code-workspace\ncode: { sources: [ { inline: { path: a, content: x } }, { inline: { path: a/b, content: y } } ] }\n",
		"pinned.yaml": "kind: code-workspace\ncode: { sources: [ { github: { repo: o/r, ref: v1.2.3 } } ] }\n",
		"nogit.yaml":  "kind: code-workspace\ncode: { sources: [ { github: { repo: o/r, ref: main } } ] }\n",
	})
	m := filepath.Join(dir, "manifest.yaml")
	composeErr(t, m, bundle.Options{Limits: bundle.Limits{Files: 1, Bytes: 100, RefDepth: 1}}, "more than 1 files")
	composeErr(t, m, bundle.Options{Limits: bundle.Limits{Files: 10, Bytes: 9, RefDepth: 1}}, "more than 9 bytes")
	composeErr(t, filepath.Join(dir, "null.yaml"), bundle.Options{}, "null byte")
	composeErr(t, filepath.Join(dir, "two.yaml"), bundle.Options{}, "exactly one of")
	composeErr(t, filepath.Join(dir, "typo.yaml"), bundle.Options{}, `unknown field "ass"`)
	composeErr(t, filepath.Join(dir, "tool.yaml"), bundle.Options{}, "is not a code-workspace manifest")
	composeErr(t, filepath.Join(dir, "clash.yaml"), bundle.Options{}, "is a file, and a/b needs it to be a folder")
	composeErr(t, filepath.Join(dir, "pinned.yaml"), bundle.Options{RequirePinned: true}, "accepts only a 40-hex commit SHA")
	composeErr(t, filepath.Join(dir, "nogit.yaml"), bundle.Options{}, "no git fetcher")
}

// A composed bundle is loaded by the catalog's own loader.
func TestMaterialisedBundleLoadsAsCatalog(t *testing.T) {
	action, err := os.ReadFile("../../spec/agentproto/standard-actions/storage-read.ACTION.md")
	if err != nil {
		t.Fatal(err)
	}
	dir := testtree.Write(t, t.TempDir(), map[string]string{
		"manifest.yaml":                  "kind: code-workspace\ncode: { sources: [ { local: { path: actions, as: catalog } } ] }\n",
		"actions/storage-read.ACTION.md": string(action),
	})
	b := compose(t, filepath.Join(dir, "manifest.yaml"), bundle.Options{})
	c, err := bundle.Materialise(b, func(dir string) (*catalog.Catalog, error) { return catalog.Load([]string{dir}) })
	if err != nil {
		t.Fatalf("the materialised bundle does not load: %v", err)
	}
	if len(c.Actions()) != 1 {
		t.Errorf("the catalog loaded from the bundle holds %d actions, want 1", len(c.Actions()))
	}
}
