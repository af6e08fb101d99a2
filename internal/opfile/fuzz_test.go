package opfile

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

const examples = "../../examples"

// FuzzFrontmatter feeds arbitrary files to the frontmatter parser. It must
// never panic; what it accepts must be a mapping that is valid JSON, and
// re-wrapping the extracted YAML in fences must parse to the same document.
// Seeds: testdata/fuzz/FuzzFrontmatter plus the example catalog's and
// policy's files.
func FuzzFrontmatter(f *testing.F) {
	for _, glob := range []string{"catalog/*/*/*/*.md", "catalog/*/*/*.md", "policy/*.md"} {
		paths, _ := filepath.Glob(filepath.Join(examples, filepath.FromSlash(glob)))
		for _, p := range paths {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	const limit = 256 << 10
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := ParseFrontmatter(data, limit)
		if err != nil {
			if doc.Value != nil || doc.JSON != nil || Code(err) == "" {
				t.Fatalf("error %v (code %q) with a result", err, Code(err))
			}
			return
		}
		if doc.Value == nil {
			t.Fatal("accepted no mapping")
		}
		if !json.Valid(doc.JSON) {
			t.Fatalf("invalid JSON %q", doc.JSON)
		}
		fm, err := SplitFrontmatter(data, limit)
		if err != nil {
			t.Fatalf("split failed after parse succeeded: %v", err)
		}
		again, err := ParseFrontmatter(append(append([]byte("---\n"), fm...), "---\n"...), limit)
		if err != nil || !bytes.Equal(doc.JSON, again.JSON) {
			t.Fatalf("re-wrapped frontmatter parsed to %q, %v; want %q", again.JSON, err, doc.JSON)
		}
	})
}
