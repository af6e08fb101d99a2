package eventcodec

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzDecodeAgrees holds the one-pass reader to the checked path: it
// accepts exactly what the checks accept, with the same values, so Decode
// answers as it did before it had a fast path.
func FuzzDecodeAgrees(f *testing.F) {
	for _, s := range []string{
		`{}`, ` {"a":1} `, `{"a":[1,2.5e-3,-0,true,false,null,"x",{}]}`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`,
		`{"s":"\ud83d\ude00 \u00e9 \n\t\"\\\/"}`, `{"s":"\ud800"}`, `{"s":"\udc00x"}`, `{"s":"\ud800\u0041"}`,
		"{\"s\":\"\xff\"}", "{\"s\":\"\x01\"}", "{\"s\":\"é\"}", "\ufeff{}", `{"a":01}`, `{"a":1.}`, `{"a":.5}`,
		`{"a":1e}`, `{"a":-}`, `{"a":1,}`, `[1]`, `"x"`, `{"a":1} x`, `{"a":1}{}`, `{"a":tru}`, `{"a" 1}`,
		`{"a":{"b":{"c":{"d":{}}}}}`, `{"a":[[[[[]]]]]}`, `{"n":12345678901234567890}`, "\t\r\n{}\n", "",
		`{"tool_name":"x","tool_category":"write","evidence_refs":[{"source_id":"a","trust_tier":"verified"}]}`,
	} {
		f.Add([]byte(s))
	}
	events, _ := filepath.Glob("../../examples/events/*.json")
	for _, path := range events {
		if b, err := os.ReadFile(path); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		const depth = 4
		want, werr := decodeChecked(body, depth, "the body")
		got, ok := parseObject(body, depth)
		switch {
		case ok && werr != nil:
			t.Fatalf("%q: the one-pass reader accepts what the checks refuse: %v", body, werr)
		case !ok && werr == nil:
			t.Fatalf("%q: the one-pass reader refuses what the checks accept", body)
		case ok && !reflect.DeepEqual(got, want):
			t.Fatalf("%q: read as %#v, the checks read %#v", body, got, want)
		}
	})
}

// The one-pass reader sees every body Decode gets: the wording of what it
// refuses must still be the checks'.
func TestDecodeWordsRefusalsAsTheChecks(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{"a":1,"\u0061":2}`, `{"s":"\ud800"}`, "{\"s\":\"\xff\"}", `{"a":1} x`, `[1]`, strings.Repeat("[", 70)} {
		_, got := Decode([]byte(body), DefaultMaxDepth)
		_, want := decodeChecked([]byte(body), DefaultMaxDepth, "the body")
		if got == nil || want == nil || got.Error() != want.Error() {
			t.Errorf("%q: %v, want %v", body, got, want)
		}
	}
}

// DecodeAs names what it refuses as the caller knows it: tool arguments
// are not a body.
func TestDecodeAsNamesWhat(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		`[1]`:              "the arguments must be a JSON object, not an array",
		` `:                "the arguments are empty; expected a JSON object",
		"{\"s\":\"\xff\"}": "the arguments are not valid UTF-8",
		`{"a":1,"a":2}`:    `the arguments are ambiguous: the key "/a" is given more than once`,
	} {
		_, err := DecodeAs([]byte(body), DefaultMaxDepth, "the arguments")
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "body") || strings.Contains(err.Error(), "runtime") {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}
