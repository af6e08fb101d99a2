package policy

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Resolver turns an action ref that is not a bare id (a registry ref such as
// `@agentik/actions/standard/storage-commit`) into a catalogued action id.
// *catalog.Catalog satisfies it; a nil Resolver knows bare ids only.
type Resolver interface {
	ResolveActionRef(ref string) (actionID string, ok bool)
}

// pattern is an action ref ready to match action ids. Exactly one form is set;
// the zero pattern (an unresolved ref) matches nothing.
type pattern struct {
	exact  string // "storage:commit"
	prefix string // "storage:" for "storage:*"
	any    bool   // "*"
}

func (p pattern) match(actionID string) bool {
	switch {
	case actionID == "":
		return false // an uncatalogued tool has no id, so no ref names it
	case p.any:
		return true
	case p.prefix != "":
		return strings.HasPrefix(actionID, p.prefix)
	}
	return p.exact != "" && p.exact == actionID
}

// validActionRef rejects refs whose `*` is anything but a whole-segment
// suffix; AIP-38 defines no other wildcard.
func validActionRef(ref string) error {
	i := strings.IndexByte(ref, '*')
	switch {
	case ref == "":
		return fmt.Errorf("empty action ref")
	case i < 0 || ref == "*":
		return nil
	case i != len(ref)-1 || !strings.HasSuffix(ref, ":*") || strings.HasPrefix(ref, "@"):
		return fmt.Errorf("action ref %q: `*` is only allowed as a whole last segment (`storage:*`) or alone", ref)
	}
	return nil
}

// isBareID reports whether ref is an action id (`kind:verb`) rather than a
// registry ref or path, which need the Resolver.
func isBareID(ref string) bool { return !strings.ContainsAny(ref, "@/") }

// resolve turns a validated ref into a pattern; ok is false when a registry
// ref cannot be resolved.
func resolve(ref string, res Resolver) (pattern, bool) {
	switch {
	case ref == "*":
		return pattern{any: true}, true
	case strings.HasSuffix(ref, ":*"):
		return pattern{prefix: strings.TrimSuffix(ref, "*")}, true
	case isBareID(ref):
		return pattern{exact: ref}, true
	case res != nil:
		if id, ok := res.ResolveActionRef(ref); ok && id != "" {
			return pattern{exact: id}, true
		}
	}
	return pattern{}, false
}

// wildcardKeys lists the `kind:*`-style refs that match actionID, keyed by
// depth ("w1" for "storage:*", "w2" for "secrets:rotate:*"). They go into the
// Rego input so that wildcard grants are indexed like exact ones.
func wildcardKeys(actionID string) ast.Object {
	obj := ast.NewObject()
	depth := 0
	for i := 0; i < len(actionID); i++ {
		if actionID[i] == ':' {
			depth++
			obj.Insert(ast.StringTerm("w"+strconv.Itoa(depth)), ast.StringTerm(actionID[:i+1]+"*"))
		}
	}
	return obj
}
