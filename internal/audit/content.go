package audit

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gatedhq/gated/internal/audit/chain"
)

// ContentHash is the SHA-256 of rec's canonical content: every field but
// its link (ChainID, ChainSeq, LinkHash), whatever store it was read back
// from. The canonical form is computed from the struct, never from stored
// text, so it survives PostgreSQL (jsonb reorders keys, timestamps keep
// microseconds) and JSON lines alike:
//
//   - a struct is its non-zero fields in order of JSON name, each written as
//     the name (length-prefixed) and its value, then a zero byte;
//   - a string is 's' and its length-prefixed bytes, a bool 'b' and one
//     byte, a float64 'f' and its IEEE bits, an int64 'i' and its value, a
//     time 't' and its Unix microseconds (big-endian), a list 'l', its
//     length and its elements, a struct 'o' and its fields.
//
// Zero fields are left out, so a field added to Record later leaves the
// hashes of records stored before it unchanged, and a nil list and an
// empty one (PostgreSQL stores both as {}) hash alike.
func ContentHash(rec *Record) chain.Hash {
	b := bufs.Get().(*[]byte)
	*b = recordShape.append((*b)[:0], reflect.ValueOf(rec).Elem()) // addressable: times are read in place
	h := sha256.Sum256(*b)
	bufs.Put(b)
	return h
}

var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// shape is how one type is written canonically; made once per type.
type shape struct {
	kind   byte
	elem   *shape  // a list's elements
	fields []field // a struct's, sorted by name
}

type field struct {
	name  string
	index int
	shape *shape
}

var recordShape = shapeOf(reflect.TypeFor[Record]())

// shapeOf panics on a type it cannot write canonically, so a Record field
// of a new kind stops the program at start (and every test) rather than
// being left out of the hash.
func shapeOf(t reflect.Type) *shape {
	switch {
	case t == reflect.TypeFor[time.Time]():
		return &shape{kind: 't'}
	case t.Kind() == reflect.String:
		return &shape{kind: 's'}
	case t.Kind() == reflect.Bool:
		return &shape{kind: 'b'}
	case t.Kind() == reflect.Float64:
		return &shape{kind: 'f'}
	case t.Kind() == reflect.Int64:
		return &shape{kind: 'i'}
	case t.Kind() == reflect.Slice:
		return &shape{kind: 'l', elem: shapeOf(t.Elem())}
	case t.Kind() == reflect.Struct:
		s := &shape{kind: 'o'}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || f.Tag.Get("audit") == "link" {
				continue
			}
			if name == "" {
				panic("audit: " + t.String() + "." + f.Name + " has no JSON name to hash it by")
			}
			s.fields = append(s.fields, field{name: name, index: i, shape: shapeOf(f.Type)})
		}
		slices.SortFunc(s.fields, func(a, b field) int { return strings.Compare(a.name, b.name) })
		return s
	}
	panic("audit: a " + t.String() + " cannot be hashed canonically")
}

func (s *shape) append(b []byte, v reflect.Value) []byte {
	b = append(b, s.kind)
	switch s.kind {
	case 's':
		str := v.String()
		b = binary.AppendUvarint(b, uint64(len(str)))
		return append(b, str...)
	case 'b':
		if v.Bool() {
			return append(b, 1)
		}
		return append(b, 0)
	case 'f':
		return binary.BigEndian.AppendUint64(b, math.Float64bits(v.Float()))
	case 'i':
		return binary.BigEndian.AppendUint64(b, uint64(v.Int()))
	case 't':
		return binary.BigEndian.AppendUint64(b, uint64(v.Addr().Interface().(*time.Time).UnixMicro()))
	case 'l':
		n := v.Len()
		b = binary.AppendUvarint(b, uint64(n))
		for i := range n {
			b = s.elem.append(b, v.Index(i))
		}
		return b
	}
	for _, f := range s.fields {
		fv := v.Field(f.index)
		if fv.IsZero() || (f.shape.kind == 'l' && fv.Len() == 0) {
			continue
		}
		b = binary.AppendUvarint(b, uint64(len(f.name)))
		b = append(b, f.name...)
		b = f.shape.append(b, fv)
	}
	return append(b, 0)
}
