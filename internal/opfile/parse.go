package opfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// parseError is why a file's content cannot be read; code is the problem
// code it becomes.
type parseError struct {
	code string
	err  error
}

func (e *parseError) Error() string { return e.err.Error() }
func (e *parseError) Unwrap() error { return e.err }

// Code is the problem code of an error the parsers of this package return:
// frontmatter_missing, frontmatter_unterminated, frontmatter_too_large,
// frontmatter_not_mapping, yaml_invalid or json_invalid.
func Code(err error) string {
	var pe *parseError
	if errors.As(err, &pe) {
		return pe.code
	}
	return ""
}

var (
	errNoFrontmatter = &parseError{"frontmatter_missing", errors.New("the file does not start with a '---' frontmatter line")}
	errUnterminated  = &parseError{"frontmatter_unterminated", errors.New("the frontmatter has no closing '---' line")}
	errNotMapping    = errors.New("the document is not a mapping of fields")
)

// Doc is a file's structured content as JSON: Value for schema validation,
// holding only map[string]any, []any, string, json.Number, bool and nil,
// and JSON, its encoding, for decoding into structs.
type Doc struct {
	Value map[string]any
	JSON  []byte
}

// SplitFrontmatter returns the YAML between a leading "---" line and the
// next "---" (or "...") line; the Markdown after it is not read. limit
// bounds the YAML handed to the parser, which costs more than the split.
func SplitFrontmatter(data []byte, limit int) ([]byte, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 BOM some editors add
	line, rest, _ := bytes.Cut(data, []byte("\n"))
	if !isFence(line, "---") {
		return nil, errNoFrontmatter
	}
	start := len(data) - len(rest)
	for off := start; off < len(data); {
		line, _, found := bytes.Cut(data[off:], []byte("\n"))
		if isFence(line, "---") || isFence(line, "...") {
			if off-start > limit {
				return nil, &parseError{"frontmatter_too_large", fmt.Errorf("the frontmatter is larger than %d bytes", limit)}
			}
			return data[start:off], nil
		}
		if !found {
			break
		}
		off += len(line) + 1
	}
	return nil, errUnterminated
}

func isFence(line []byte, fence string) bool {
	return string(bytes.TrimRight(line, " \t\r")) == fence
}

// ParseFrontmatter is SplitFrontmatter followed by ParseYAML.
func ParseFrontmatter(data []byte, limit int) (Doc, error) {
	fm, err := SplitFrontmatter(data, limit)
	if err != nil {
		return Doc{}, err
	}
	return ParseYAML(fm)
}

// ParseYAML decodes one YAML document, which must be a mapping, into JSON.
// A key given twice is an error, and so is what JSON cannot hold (keys
// that are not strings, numbers that are not finite); timestamps become
// RFC 3339 strings. The YAML parser refuses excessive aliasing, so a small
// document cannot expand into a huge one ("billion laughs").
func ParseYAML(b []byte) (Doc, error) {
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return Doc{}, &parseError{"yaml_invalid", err}
	}
	if _, ok := v.(map[string]any); !ok {
		return Doc{}, &parseError{"frontmatter_not_mapping", errNotMapping}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return Doc{}, &parseError{"yaml_invalid", fmt.Errorf("not representable as JSON (keys must be strings, numbers finite): %w", err)}
	}
	doc, err := ParseJSON(raw)
	if err != nil {
		return Doc{}, &parseError{"yaml_invalid", err}
	}
	return doc, nil
}

// ParseJSON decodes a JSON document, which must be an object, keeping
// numbers exact (json.Number) for schema validation.
func ParseJSON(b []byte) (Doc, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return Doc{}, &parseError{"json_invalid", err}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return Doc{}, &parseError{"json_invalid", errNotMapping}
	}
	return Doc{Value: m, JSON: b}, nil
}

// DecodeYAML decodes a YAML mapping into out, a pointer to a struct with
// json tags, through JSON as ParseYAML reads it; a field out does not have
// is an error, so a misspelt key is not silently ignored.
func DecodeYAML(b []byte, out any) error {
	doc, err := ParseYAML(b)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(doc.JSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return &parseError{"yaml_invalid", err}
	}
	return nil
}
