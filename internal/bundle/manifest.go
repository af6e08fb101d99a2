// Package bundle composes a catalog or policy bundle from the sources an
// AIP-26 code block names (inline, local, github and ref), overlays them in
// declaration order, and writes the result to a private directory for the
// existing loaders to read.
package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/gatedhq/gated/internal/opfile"
)

// manifestNames are the file names AIP-26 gives a code-workspace manifest,
// in the order a ref to a folder looks for them.
var manifestNames = []string{"manifest.yaml", "manifest.yml", "CODE.md"}

// IsManifest reports whether name is the name of a bundle manifest, so
// that --catalog and --policy can tell one from a directory or a single
// POLICY.md.
func IsManifest(name string) bool {
	base := path.Base(strings.ReplaceAll(name, `\`, "/"))
	for _, n := range manifestNames {
		if base == n {
			return true
		}
	}
	return strings.HasSuffix(base, ".CODE.md")
}

// Source is one entry of code.sources; exactly one field is set.
type Source struct {
	Inline *Inline `json:"inline,omitempty"`
	Local  *Local  `json:"local,omitempty"`
	GitHub *GitHub `json:"github,omitempty"`
	Ref    *Ref    `json:"ref,omitempty"`
}

// Inline is a file whose content the manifest carries.
type Inline struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Local is a workspace file, directory or glob.
type Local struct {
	Path string `json:"path"`
	As   string `json:"as,omitempty"`
	Glob string `json:"glob,omitempty"`

	asRoot bool // As is "." or "./": the bundle's root, not the default
}

// GitHub is a folder of a git repository at a branch, tag or commit.
type GitHub struct {
	Repo string `json:"repo"`
	Ref  string `json:"ref"`
	Path string `json:"path,omitempty"`
	As   string `json:"as,omitempty"`

	asRoot bool // As is "." or "./": the bundle's root, not the default
}

// Ref is another code-workspace whose sources take this entry's place.
type Ref struct {
	Path string `json:"path"`
}

// UnmarshalJSON accepts the string shorthand `local: <path>`.
func (l *Local) UnmarshalJSON(b []byte) error {
	type plain Local
	return shorthand(b, (*plain)(l), &l.Path)
}

// UnmarshalJSON accepts the string shorthand `ref: <path>`.
func (r *Ref) UnmarshalJSON(b []byte) error {
	type plain Ref
	return shorthand(b, (*plain)(r), &r.Path)
}

// shorthand decodes b as a string into s, or strictly as an object into obj.
func shorthand(b []byte, obj any, s *string) error {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte(`"`)) {
		return json.Unmarshal(b, s)
	}
	return strictJSON(b, obj)
}

func strictJSON(b []byte, out any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}

// UnmarshalJSON decodes one source, refusing an entry with no variant,
// more than one, or a field a variant does not have.
func (s *Source) UnmarshalJSON(b []byte) error {
	type plain Source
	if err := strictJSON(b, (*plain)(s)); err != nil {
		return err
	}
	n := 0
	for _, set := range []bool{s.Inline != nil, s.Local != nil, s.GitHub != nil, s.Ref != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return errors.New("a source names exactly one of inline, local, github or ref")
	}
	return nil
}

// code is the code block: a string is the shorthand for one ref source.
type code struct {
	Sources []Source `json:"sources"`
}

func (c *code) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte(`"`)) {
		var p string
		if err := json.Unmarshal(b, &p); err != nil {
			return err
		}
		c.Sources = []Source{{Ref: &Ref{Path: p}}}
		return nil
	}
	type plain code
	return strictJSON(b, (*plain)(c))
}

// manifestFields are the fields of a manifest the bundle reads; the rest
// (runner, secrets, network, …) belong to other AIPs and are ignored.
type manifestFields struct {
	Kind   string `json:"kind"`
	Schema string `json:"schema"`
	Code   *code  `json:"code"`
	// Source is the lean CODE.md form (schema: code/v2): one source or a
	// list of them.
	Source json.RawMessage `json:"source"`
}

// parseManifest reads a code-workspace manifest — a YAML file, or a
// Markdown file whose YAML front matter holds it — and returns its
// sources in declaration order.
func parseManifest(name string, data []byte) ([]Source, error) {
	yml := data
	if strings.HasSuffix(name, ".md") {
		fm, err := opfile.SplitFrontmatter(data, 1<<20)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		yml = fm
	}
	doc, err := opfile.ParseYAML(yml)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var m manifestFields
	if err := json.Unmarshal(doc.JSON, &m); err != nil {
		return nil, fmt.Errorf("%s: the code block is invalid: %w", name, err)
	}
	switch {
	case m.Kind == "code-workspace" && m.Code != nil && m.Source == nil:
		return m.Code.Sources, nil
	case m.Schema == "code/v2" && m.Source != nil && m.Code == nil:
		var one Source
		if err := json.Unmarshal(m.Source, &one); err == nil {
			return []Source{one}, nil
		}
		var list []Source
		if err := json.Unmarshal(m.Source, &list); err != nil {
			return nil, fmt.Errorf("%s: the source block is invalid: %w", name, err)
		}
		return list, nil
	}
	return nil, fmt.Errorf("%s is not a code-workspace manifest: it needs kind: code-workspace with a code block, or schema: code/v2 with a source block", name)
}

// isRoot reports whether an `as` names the bundle's root explicitly; an
// empty one means "the same as path".
func isRoot(as string) bool { return as == "." || as == "./" }

// cleanPath checks a path of the given kind (workspace-relative,
// bundle-internal or remote-internal) before anything is read with it and
// returns it without a leading "./" or trailing "/": it must be relative,
// contain no ".." and no empty or "." segments, so it cannot leave the
// workspace or the bundle. A path may be empty (the root) only when
// rootOK.
func cleanPath(kind, p string, rootOK bool) (string, error) {
	c := strings.TrimPrefix(p, "./")
	c = strings.TrimSuffix(c, "/")
	if c == "" || c == "." {
		if rootOK {
			return "", nil
		}
		return "", fmt.Errorf("the %s path %q names no file", kind, p)
	}
	if strings.HasPrefix(p, "/") || strings.Contains(c, `\`) || !fs.ValidPath(c) {
		return "", fmt.Errorf("the %s path %q must be relative, without \"..\", \".\" or empty segments", kind, p)
	}
	return c, nil
}
