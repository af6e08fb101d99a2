package opfile

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestParseFrontmatter(t *testing.T) {
	t.Parallel()
	const limit = 64
	tests := []struct {
		name, data string
		code       string // "" when it parses
		want       string // the JSON it parses to
	}{
		{"plain", "---\nid: a:b\n---\nbody\n", "", `{"id":"a:b"}`},
		{"BOM and CRLF", "\xef\xbb\xbf---\r\nid: a:b\r\n---\r\n", "", `{"id":"a:b"}`},
		{"closed by ...", "---\nid: a:b\n...\n", "", `{"id":"a:b"}`},
		{"a fence inside a string does not close", "---\nd: |\n  text\n  ---x\n---\n", "", `{"d":"text\n---x\n"}`},
		{"timestamp", "---\nat: 2026-01-01T00:00:00Z\n---\n", "", `{"at":"2026-01-01T00:00:00Z"}`},
		{"no frontmatter", "# title\n", "frontmatter_missing", ""},
		{"fence alone", "---", "frontmatter_unterminated", ""},
		{"unterminated", "---\nid: x\n", "frontmatter_unterminated", ""},
		{"too large", "---\nd: " + strings.Repeat("x", limit) + "\n---\n", "frontmatter_too_large", ""},
		{"not a mapping", "---\n- a\n---\n", "frontmatter_not_mapping", ""},
		{"empty", "---\n---\n", "frontmatter_not_mapping", ""},
		{"bad yaml", "---\nid: [x\n---\n", "yaml_invalid", ""},
		{"duplicate key", "---\nid: a\nid: b\n---\n", "yaml_invalid", ""},
		{"non-string key", "---\nm: {1: x}\n---\n", "yaml_invalid", ""},
		{"infinite number", "---\nx: .inf\n---\n", "yaml_invalid", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := ParseFrontmatter([]byte(tt.data), limit)
			if Code(err) != tt.code {
				t.Fatalf("code %q (%v), want %q", Code(err), err, tt.code)
			}
			if err == nil && string(doc.JSON) != tt.want {
				t.Fatalf("JSON %s, want %s", doc.JSON, tt.want)
			}
		})
	}
}

// A billion laughs: nine levels of nine aliases would expand to 9^9
// strings. The parser refuses it quickly instead of building it.
func TestParseYAMLRefusesAliasBombs(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 9; i++ {
		refs := strings.TrimSuffix(strings.Repeat("*a"+string(rune('0'+i-1))+", ", 9), ", ")
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [" + refs + "]\n")
	}
	start := time.Now()
	_, err := ParseYAML([]byte(b.String()))
	if Code(err) != "yaml_invalid" || !strings.Contains(err.Error(), "alias") {
		t.Fatalf("error %v, want yaml_invalid about aliasing", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("refusing took %s", d)
	}
}

func TestParseJSON(t *testing.T) {
	t.Parallel()
	doc, err := ParseJSON([]byte(`{"n": 12345678901234567890, "s": "x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := doc.Value["n"].(json.Number); !ok || n.String() != "12345678901234567890" {
		t.Fatalf("number %#v, want it exact", doc.Value["n"])
	}
	for _, bad := range []string{`{"name": "x",}`, `[1]`, `"x"`, ``} {
		if _, err := ParseJSON([]byte(bad)); Code(err) != "json_invalid" {
			t.Errorf("ParseJSON(%q) error %v, want json_invalid", bad, err)
		}
	}
}

func TestDecodeYAML(t *testing.T) {
	t.Parallel()
	var out struct {
		Name string `json:"name"`
	}
	if err := DecodeYAML([]byte("name: x\n"), &out); err != nil || out.Name != "x" {
		t.Fatalf("decoded %+v, %v", out, err)
	}
	if err := DecodeYAML([]byte("name: x\nnmae: y\n"), &out); Code(err) != "yaml_invalid" || !strings.Contains(err.Error(), "nmae") {
		t.Fatalf("unknown field: %v", err)
	}
	if err := DecodeYAML([]byte("name: x\nname: y\n"), &out); Code(err) != "yaml_invalid" {
		t.Fatalf("duplicate key: %v", err)
	}
}
