package catalog

import (
	"bytes"
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"
)

var (
	errNoFrontmatter   = errors.New("the file does not start with a '---' frontmatter line")
	errUnterminated    = errors.New("the frontmatter has no closing '---' line")
	errNotMapping      = errors.New("the document is not a mapping of fields")
	errFrontmatterSize = fmt.Errorf("the frontmatter is larger than %d bytes", maxFrontmatterSize)
)

// maxFrontmatterSize bounds the YAML handed to the parser; the file itself
// is bounded by maxFileSize.
const maxFrontmatterSize = 256 << 10

// splitFrontmatter returns the YAML between a leading "---" line and the
// next "---" (or "...") line. The markdown body after it is ignored.
func splitFrontmatter(data []byte) ([]byte, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 BOM some editors add
	line, rest, _ := bytes.Cut(data, []byte("\n"))
	if !isFence(line, "---") {
		return nil, errNoFrontmatter
	}
	start := len(data) - len(rest)
	for off := start; off < len(data); {
		line, _, found := bytes.Cut(data[off:], []byte("\n"))
		if isFence(line, "---") || isFence(line, "...") {
			if off-start > maxFrontmatterSize {
				return nil, errFrontmatterSize
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

// parseYAMLDoc decodes one YAML document that must be a mapping and returns
// it as a JSON value (string keys, json.Number numbers) plus its JSON
// encoding, ready for schema validation and struct decoding.
func parseYAMLDoc(b []byte) (any, []byte, error) {
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, nil, err
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, nil, errNotMapping
	}
	doc, raw, err := toJSONValue(v)
	if err != nil {
		return nil, nil, fmt.Errorf("not representable as JSON (keys must be strings, numbers finite): %w", err)
	}
	return doc, raw, nil
}

// parseFrontmatter is splitFrontmatter followed by parseYAMLDoc.
func parseFrontmatter(data []byte) (any, []byte, error) {
	fm, err := splitFrontmatter(data)
	if err != nil {
		return nil, nil, err
	}
	return parseYAMLDoc(fm)
}
