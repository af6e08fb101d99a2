package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/gatedhq/gated/internal/redact"
)

// The preview's markers and bounds.
const (
	tooDeep        = "[too deep]"
	maxStringRunes = 200
	maxItems       = 50
	maxDepth       = 32
	// maxPreviewBytes bounds the encoded preview, which is stored with the
	// approval and sent in every webhook event.
	maxPreviewBytes = 16 << 10
	// previewReserve is kept free for what the containers still open when
	// the budget runs out write as they close: a count of what they left out
	// and a bracket, at most maxDepth times (about 40 bytes each).
	previewReserve = 2 << 10
	// maxMaskedBytes bounds the full masked arguments. A mask's marker is
	// longer than a short secret, so they may outgrow the 64 KiB body they
	// came in; past this they cannot be shown, and no approval is offered.
	maxMaskedBytes = 256 << 10
	// maxMaskedDepth bounds the nesting of the full masked arguments. It is
	// eventcodec.DefaultMaxDepth, so arguments inside any event gated takes
	// (nested one level down) are shown to their last level.
	maxMaskedDepth = 64
)

// ErrMaskedTooLarge: the masked arguments are over maxMaskedBytes.
var ErrMaskedTooLarge = errors.New("the masked arguments are over 256 KiB, so an approver could not read them")

// ErrMaskedTooDeep: the arguments nest deeper than maxMaskedDepth.
var ErrMaskedTooDeep = errors.New("the arguments nest more than 64 levels deep, so an approver could not read them")

// Preview returns the arguments as an approver sees them: enough to decide,
// without the secrets. Masked whole, by a marker that says what was there
// (redact.MaskWhole: "[secret:write-only len=7 fp=ab12cd]",
// "[secret:sensitive-key object len=42 fp=…]"), are the values at the
// catalog's sensitive fields (RFC 6901 JSON Pointers; "" is the whole
// document) and the values under keys that name a credential
// (redact.CredentialKey: "password", "api_key", "sessionToken", …). In
// every other string and number, and in every key, each secret redact.Mask
// finds is replaced by a marker that names it ("[secret:github-pat len=40
// fp=ab12cd]") and the text around it is kept, so neither a value nor a
// key can hide a command from the approver by carrying a secret.
//
// The preview is bounded, and says what it cut and how much: strings (after
// masking) over 200 runes keep 200 and say how many more there were; arrays
// and objects keep their first 50 entries (objects in key order) and count
// the rest; containers nested deeper than 32 become "[too deep]". Past 14
// KiB of output every open container stops and counts what it left out, so
// the whole preview stays within 16 KiB. MaskedArguments has what was cut.
//
// Absent arguments preview as null; arguments that are not valid JSON, or a
// sensitive field that is not a JSON Pointer, are an error.
func Preview(args json.RawMessage, sensitive []string) (json.RawMessage, error) {
	p, err := mask(args, sensitive, false)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(p.buf.Bytes()), nil
}

// MaskedArguments returns the arguments masked as Preview masks them, but
// whole: no string, array or object is cut, so an approver can read what
// the preview had to leave out. What it cannot show whole is an error, not
// a cut: arguments over 256 KiB masked (ErrMaskedTooLarge) or nested more
// than 64 deep (ErrMaskedTooDeep), since an approval of a call nobody could
// read would be a blind one.
func MaskedArguments(args json.RawMessage, sensitive []string) (json.RawMessage, error) {
	p, err := mask(args, sensitive, true)
	if err != nil {
		return nil, err
	}
	switch {
	case p.tooDeep:
		return nil, ErrMaskedTooDeep
	case p.buf.Len() > maxMaskedBytes:
		return nil, ErrMaskedTooLarge
	}
	return json.RawMessage(p.buf.Bytes()), nil
}

// mask masks args, cut to the preview's bounds unless whole.
func mask(args json.RawMessage, sensitive []string, whole bool) (*previewer, error) {
	paths, err := parsePointers(sensitive)
	if err != nil {
		return nil, err
	}
	v, err := decodeArguments(args)
	if err != nil {
		return nil, err
	}
	p := &previewer{whole: whole}
	p.value(v, paths, 0)
	return p, nil
}

// decodeArguments parses one JSON value, keeping numbers as written so
// that a long digit string can be checked for a card number.
func decodeArguments(args json.RawMessage) (any, error) {
	if len(args) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the arguments are not valid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("the arguments are not valid JSON: something follows the first value")
	}
	return v, nil
}

// previewer writes the preview as it walks the arguments.
type previewer struct {
	buf bytes.Buffer
	// full: the budget ran out, so every open container stops adding.
	full bool
	// whole: nothing is cut (MaskedArguments).
	whole bool
	// tooDeep: whole, and a container past maxMaskedDepth was reached.
	tooDeep bool
}

// value writes the preview of v, which sits where t points, inside depth
// containers.
func (p *previewer) value(v any, t *pathTree, depth int) {
	if t.isMasked() {
		p.maskWhole(redact.KindWriteOnly, v)
		return
	}
	switch v := v.(type) {
	case string:
		p.text(v)
	case json.Number:
		if shown := redact.Mask(string(v)); shown != string(v) || len(v) > maxStringRunes && !p.whole {
			p.text(shown)
		} else {
			p.buf.WriteString(string(v))
		}
	case bool:
		p.buf.WriteString(strconv.FormatBool(v))
	case map[string]any:
		if p.deep(depth) {
			p.str(tooDeep)
		} else {
			p.object(v, t, depth+1)
		}
	case []any:
		if p.deep(depth) {
			p.str(tooDeep)
		} else {
			p.array(v, t, depth+1)
		}
	default:
		p.buf.WriteString("null")
	}
}

// deep reports whether a container inside depth others is past the bound,
// and notes it when whole.
func (p *previewer) deep(depth int) bool {
	if !p.whole {
		return depth >= maxDepth
	}
	if depth >= maxMaskedDepth {
		p.tooDeep = true
	}
	return p.tooDeep
}

// maskWhole writes the marker that stands for v, masked whole as kind: a
// string by its text, anything else by its JSON type and JSON text.
func (p *previewer) maskWhole(kind string, v any) {
	var typ, text string
	switch v := v.(type) {
	case string:
		text = v
	case json.Number:
		typ, text = "number", string(v)
	case bool:
		typ, text = "boolean", strconv.FormatBool(v)
	case map[string]any:
		typ, text = "object", compact(v)
	case []any:
		typ, text = "array", compact(v)
	default:
		typ, text = "null", "null"
	}
	p.str(redact.MaskWhole(kind, typ, text))
}

// compact is decoded JSON encoded again, which cannot fail.
func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// text writes s with its secrets masked, then truncated. The truncated form
// is masked again: a cut can make a longer digit run look like a card
// number.
func (p *previewer) text(s string) {
	if p.whole {
		p.str(redact.Mask(s))
		return
	}
	p.str(redact.Mask(truncate(redact.Mask(s))))
}

func (p *previewer) object(m map[string]any, t *pathTree, depth int) {
	keys := slices.Sorted(maps.Keys(m))
	names := make(map[string]bool, min(len(keys), maxItems)+1)
	p.buf.WriteByte('{')
	p.entries(len(keys), func(i int) (takenBack func()) {
		k := keys[i]
		name := uniqueName(names, p.keyName(k))
		p.str(name)
		p.buf.WriteByte(':')
		if child := t.child(k); redact.CredentialKey(k) && !child.isMasked() {
			p.maskWhole(redact.KindSensitiveKey, m[k])
		} else {
			p.value(m[k], child, depth)
		}
		return func() { delete(names, name) }
	}, func(omitted int) {
		p.str(uniqueName(names, "…"))
		p.buf.WriteByte(':')
		p.str(fmt.Sprintf("(%d more keys)", omitted))
	})
	p.buf.WriteByte('}')
}

func (p *previewer) array(a []any, t *pathTree, depth int) {
	p.buf.WriteByte('[')
	p.entries(len(a), func(i int) func() {
		p.value(a[i], t.child(strconv.Itoa(i)), depth)
		return func() {}
	}, func(omitted int) {
		p.str(fmt.Sprintf("…(%d more items)", omitted))
	})
	p.buf.WriteByte(']')
}

// entries writes a container's n entries, comma-separated, as many as the
// item cap and the budget allow (entry writes the i-th and says how to undo
// what else it did, should the budget take the entry back), then more
// writes how many it left out.
func (p *previewer) entries(n int, entry func(i int) (takenBack func()), more func(omitted int)) {
	shown := 0
	for i := range n {
		if i == maxItems && !p.whole || p.full {
			break
		}
		mark := p.buf.Len()
		if shown > 0 {
			p.buf.WriteByte(',')
		}
		takenBack := entry(i)
		if p.spent(mark) {
			takenBack()
			break
		}
		shown++
	}
	if omitted := n - shown; omitted > 0 {
		if shown > 0 {
			p.buf.WriteByte(',')
		}
		more(omitted)
	}
}

// spent reports whether the entry written since mark took the preview past
// its budget; if so the entry is taken back and the preview is full. An
// entry that filled the budget from inside (a nested container cut short)
// is kept: it is already within the budget, with its own count.
func (p *previewer) spent(mark int) bool {
	if p.whole || p.full || p.buf.Len() <= maxPreviewBytes-previewReserve {
		return false
	}
	p.buf.Truncate(mark)
	p.full = true
	return true
}

func (p *previewer) str(s string) {
	b, _ := json.Marshal(s) // a string always encodes
	p.buf.Write(b)
}

// keyName is how key k is shown: like a value, its secrets masked where
// they stand and, in the preview, truncated. A key that holds a secret or
// personal data is no reason to hide the rest of it, or its value: an
// agent could hide a path or a command in one.
func (p *previewer) keyName(k string) string {
	if p.whole {
		return redact.Mask(k)
	}
	return redact.Mask(truncate(redact.Mask(k)))
}

// uniqueName returns name, or name with " #2", " #3", … when masking,
// truncation or a marker would repeat a key already written to the object.
func uniqueName(names map[string]bool, name string) string {
	n := name
	for i := 2; names[n]; i++ {
		n = fmt.Sprintf("%s #%d", name, i)
	}
	names[n] = true
	return n
}

// truncate keeps the first maxStringRunes runes of s and says how many more
// there were.
func truncate(s string) string {
	runes := 0
	for i := range s {
		if runes == maxStringRunes {
			return s[:i] + fmt.Sprintf("…(%d more characters)", utf8.RuneCountInString(s[i:]))
		}
		runes++
	}
	return s
}
