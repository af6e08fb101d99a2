package catalog

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzFrontmatter feeds arbitrary files to the frontmatter parser. It must
// never panic; what it accepts must be a mapping that is valid JSON, and
// re-wrapping the extracted YAML in fences must parse to the same document.
// Seeds: testdata/fuzz/FuzzFrontmatter plus the example catalog's files.
func FuzzFrontmatter(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(examples, "*", "*", "*", "*.md"))
	more, _ := filepath.Glob(filepath.Join(examples, "*", "*", "*.md"))
	for _, p := range append(paths, more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, raw, err := parseFrontmatter(data)
		if err != nil {
			if doc != nil || raw != nil {
				t.Fatalf("error %v with a result", err)
			}
			return
		}
		if _, ok := doc.(map[string]any); !ok {
			t.Fatalf("accepted a %T", doc)
		}
		if !json.Valid(raw) {
			t.Fatalf("invalid JSON %q", raw)
		}
		fm, err := splitFrontmatter(data)
		if err != nil {
			t.Fatalf("split failed after parse succeeded: %v", err)
		}
		_, again, err := parseFrontmatter(append(append([]byte("---\n"), fm...), "---\n"...))
		if err != nil || !bytes.Equal(raw, again) {
			t.Fatalf("re-wrapped frontmatter parsed to %q, %v; want %q", again, err, raw)
		}
	})
}
