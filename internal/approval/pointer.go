package approval

import (
	"fmt"
	"strings"
)

// pathTree holds the JSON Pointers of the catalog's sensitive fields, one
// node per reference token, so the preview looks each value's path up as it
// walks instead of comparing every pointer at every value.
type pathTree struct {
	masked bool
	next   map[string]*pathTree
}

// child returns the node for token below t; nil (no pointer goes there) is
// a valid tree.
func (t *pathTree) child(token string) *pathTree {
	if t == nil {
		return nil
	}
	return t.next[token]
}

func (t *pathTree) isMasked() bool { return t != nil && t.masked }

var pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")

// parsePointers builds the tree of RFC 6901 pointers. "" is the whole
// document; a pointer that is malformed is an error rather than skipped,
// since skipping it would show a field the catalog says to mask.
func parsePointers(pointers []string) (*pathTree, error) {
	root := &pathTree{}
	for _, p := range pointers {
		node := root
		if p != "" {
			if p[0] != '/' {
				return nil, fmt.Errorf("sensitive field %q is not a JSON Pointer (RFC 6901): it must be empty or start with /", p)
			}
			for _, tok := range strings.Split(p[1:], "/") {
				if !validToken(tok) {
					return nil, fmt.Errorf("sensitive field %q is not a JSON Pointer (RFC 6901): ~ must be followed by 0 or 1", p)
				}
				tok = pointerUnescaper.Replace(tok)
				if node.next == nil {
					node.next = map[string]*pathTree{}
				}
				if node.next[tok] == nil {
					node.next[tok] = &pathTree{}
				}
				node = node.next[tok]
			}
		}
		node.masked = true
	}
	return root, nil
}

// validToken reports whether every ~ in a reference token starts ~0 or ~1.
func validToken(tok string) bool {
	for i := 0; i < len(tok); i++ {
		if tok[i] == '~' && (i+1 == len(tok) || (tok[i+1] != '0' && tok[i+1] != '1')) {
			return false
		}
	}
	return true
}
