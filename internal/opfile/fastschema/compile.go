// Package fastschema answers one question about a JSON document, whether it
// is valid against a schema, without the cost of
// santhosh-tekuri/jsonschema/v6 building error trees it would throw away.
//
// It does not parse schemas: it compiles the library's own compiled form,
// so references, $id, drafts and keyword values are read exactly as the
// library read them, and formats, content encodings and patterns are
// checked with the library's own functions and regexps. It takes only
// schemas of draft 2020-12 made of the keywords it decides exactly (see
// decided); any other schema gets no Validator and stays with the library.
//
// A Validator is exact for documents made of decoded JSON values (nil,
// bool, string, json.Number, finite float64, []any, map[string]any): Valid
// is true exactly when the library's Validate returns nil. It answers
// false on any other Go value it meets, so its true is never wrong.
// gated's callers use it as a shortcut only: when it answers false they
// ask the library, which words the violations.
package fastschema

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"reflect"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Validator decides validity against one compiled schema. It is safe for
// concurrent use.
type Validator struct{ root *node }

// Valid reports whether doc is valid against the schema.
func (v *Validator) Valid(doc any) bool { return v.root.valid(doc) }

// decided are the fields of jsonschema.Schema the fast path reads or may
// ignore (annotations, and what the library resolved while compiling, such
// as $id and $anchor). A schema whose compiled form sets any other field
// gets no Validator; so does one compiled by a newer library that sets a
// field this list has never heard of.
var decided = map[string]bool{
	"DraftVersion": true, "Location": true, "ID": true, "Anchor": true,
	"Title": true, "Description": true, "Default": true, "Comment": true,
	"ReadOnly": true, "WriteOnly": true, "Examples": true, "Deprecated": true,

	"Bool": true, "Ref": true, "Types": true, "Enum": true, "Const": true, "Format": true,
	"Not": true, "AllOf": true, "AnyOf": true, "OneOf": true, "If": true, "Then": true, "Else": true,

	"MinProperties": true, "MaxProperties": true, "Required": true, "DependentRequired": true,
	"Properties": true, "PatternProperties": true, "AdditionalProperties": true,

	"MinItems": true, "MaxItems": true, "UniqueItems": true, "PrefixItems": true, "Items2020": true,

	"MinLength": true, "MaxLength": true, "Pattern": true, "ContentEncoding": true, "ContentMediaType": true,

	"Minimum": true, "Maximum": true, "ExclusiveMinimum": true, "ExclusiveMaximum": true, "MultipleOf": true,
}

// Compile builds the Validator of sch, a schema compiled by the library, or
// says why the fast path cannot decide it.
func Compile(sch *jsonschema.Schema) (*Validator, error) {
	c := compiler{nodes: make(map[*jsonschema.Schema]*node)}
	root, err := c.compile(sch)
	if err != nil {
		return nil, err
	}
	state := make(map[*jsonschema.Schema]int, len(c.nodes))
	for s := range c.nodes {
		if err := acyclic(s, state); err != nil {
			return nil, err
		}
	}
	return &Validator{root: root}, nil
}

type compiler struct {
	nodes map[*jsonschema.Schema]*node // compiled or being compiled: recursive schemas become cyclic nodes
}

func (c *compiler) compile(s *jsonschema.Schema) (*node, error) {
	if s == nil {
		return nil, nil
	}
	if n, ok := c.nodes[s]; ok {
		return n, nil
	}
	if s.DraftVersion < 2020 {
		return nil, fmt.Errorf("schema %s is of draft %d; the fast path knows draft 2020-12 only", s.Location, s.DraftVersion)
	}
	if s.Bool != nil {
		n := &node{never: !*s.Bool, always: *s.Bool}
		c.nodes[s] = n
		return n, nil
	}
	f := reflect.ValueOf(s).Elem()
	for i := range f.NumField() {
		if sf := f.Type().Field(i); sf.IsExported() && !decided[sf.Name] && !f.Field(i).IsZero() {
			return nil, fmt.Errorf("schema %s uses %s, which the fast path does not decide", s.Location, sf.Name)
		}
	}

	n := &node{minProps: -1, maxProps: -1, minItems: -1, maxItems: -1, minLen: -1, maxLen: -1}
	c.nodes[s] = n
	var err error
	sub := func(s *jsonschema.Schema) *node {
		var n *node
		if err == nil {
			n, err = c.compile(s)
		}
		return n
	}
	subs := func(ss []*jsonschema.Schema) []*node {
		var ns []*node
		for _, s := range ss {
			ns = append(ns, sub(s))
		}
		return ns
	}

	if s.Types != nil {
		for _, t := range s.Types.ToStrings() {
			n.types |= typeNames[t]
		}
	}
	if s.Const != nil {
		if !inDomain(*s.Const) {
			return nil, fmt.Errorf("schema %s has a const that is not a JSON value", s.Location)
		}
		n.consts = []any{*s.Const}
	}
	if s.Enum != nil {
		if !inDomain(s.Enum.Values) {
			return nil, fmt.Errorf("schema %s has an enum value that is not a JSON value", s.Location)
		}
		n.enum, n.enumStrings = s.Enum.Values, stringSet(s.Enum.Values)
	}
	n.format = s.Format
	n.ref, n.not = sub(s.Ref), sub(s.Not)
	n.allOf, n.anyOf, n.oneOf = subs(s.AllOf), subs(s.AnyOf), subs(s.OneOf)
	n.ifn, n.then, n.els = sub(s.If), sub(s.Then), sub(s.Else)

	n.minProps, n.maxProps = intOr(s.MinProperties), intOr(s.MaxProperties)
	n.dependentRequired = s.DependentRequired
	if len(s.Properties) > 0 {
		n.props = make(map[string]*prop, len(s.Properties))
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			n.propList = append(n.propList, prop{name: name, n: sub(s.Properties[name])})
		}
		for i := range n.propList {
			n.props[n.propList[i].name] = &n.propList[i]
		}
	}
	for _, r := range s.Required {
		i := slices.IndexFunc(n.propList, func(p prop) bool { return p.name == r })
		if i < 0 || i >= 64 {
			n.requiredElsewhere = append(n.requiredElsewhere, r)
			continue
		}
		n.propList[i].bit = 1 << i
		n.requiredBits |= 1 << i
	}
	for re, p := range s.PatternProperties {
		n.patternProps = append(n.patternProps, patternNode{re, sub(p)})
	}
	switch a := s.AdditionalProperties.(type) {
	case bool:
		if !a {
			n.additional = &node{never: true}
		}
	case *jsonschema.Schema:
		n.additional = sub(a)
	}

	n.minItems, n.maxItems, n.unique = intOr(s.MinItems), intOr(s.MaxItems), s.UniqueItems
	n.prefix, n.items = subs(s.PrefixItems), sub(s.Items2020)

	n.minLen, n.maxLen, n.pattern = intOr(s.MinLength), intOr(s.MaxLength), s.Pattern
	n.encoding, n.mediaType = s.ContentEncoding, s.ContentMediaType

	for _, b := range []struct {
		r  *big.Rat
		ok func(cmp int) bool
	}{
		{s.Minimum, func(c int) bool { return c >= 0 }},
		{s.Maximum, func(c int) bool { return c <= 0 }},
		{s.ExclusiveMinimum, func(c int) bool { return c > 0 }},
		{s.ExclusiveMaximum, func(c int) bool { return c < 0 }},
	} {
		if b.r != nil {
			n.bounds = append(n.bounds, bound{num: ratNumber(b.r), ok: b.ok})
		}
	}
	if s.MultipleOf != nil {
		m := ratNumber(s.MultipleOf)
		n.multipleOf = &m
	}
	if err != nil {
		return nil, err
	}
	return n, nil
}

// acyclic refuses a schema that can reach itself without moving to a
// child value ({"$ref": "#"} at the root, say): the library reports such
// a cycle as a validation error when it meets it, which the fast path
// does not mirror. Recursion through properties or items is fine. state
// colours the schemas visited (1 on the current path, 2 done).
func acyclic(s *jsonschema.Schema, state map[*jsonschema.Schema]int) error {
	if s == nil || state[s] == 2 {
		return nil
	}
	if state[s] == 1 {
		return fmt.Errorf("schema %s refers to itself without moving to a child value", s.Location)
	}
	state[s] = 1
	same := append([]*jsonschema.Schema{s.Ref, s.Not, s.If, s.Then, s.Else}, s.AllOf...)
	for _, t := range append(append(same, s.AnyOf...), s.OneOf...) {
		if err := acyclic(t, state); err != nil {
			return err
		}
	}
	state[s] = 2
	return nil
}

var typeNames = map[string]jsonType{
	"null": tNull, "boolean": tBoolean, "number": tNumber, "integer": tInteger,
	"string": tString, "array": tArray, "object": tObject,
}

func intOr(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// stringSet is the set of values when every one is a string, for a lookup
// instead of a scan; nil otherwise.
func stringSet(vs []any) map[string]bool {
	set := make(map[string]bool, len(vs))
	for _, v := range vs {
		s, ok := v.(string)
		if !ok {
			return nil
		}
		set[s] = true
	}
	return set
}

// ratNumber is a schema's numeric bound in the form documents' numbers take.
func ratNumber(r *big.Rat) number {
	n := number{r: r, parsed: true}
	if r.IsInt() && r.Num().IsInt64() {
		n.small, n.isSmall = r.Num().Int64(), true
	}
	return n
}

// inDomain reports whether v is made of decoded JSON values only.
func inDomain(v any) bool {
	switch v := v.(type) {
	case nil, bool, string, json.Number:
		return true
	case float64:
		return !math.IsNaN(v) && !math.IsInf(v, 0)
	case []any:
		for _, x := range v {
			if !inDomain(x) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, x := range v {
			if !inDomain(x) {
				return false
			}
		}
		return true
	}
	return false
}
