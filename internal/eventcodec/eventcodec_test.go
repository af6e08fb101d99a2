package eventcodec_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/eventcodec"
)

func TestDecodeRefusesWhatNoSurfaceMayDecideOn(t *testing.T) {
	t.Parallel()
	deep := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	for body, want := range map[string]string{
		"":                           "empty",
		" \n":                        "empty",
		"{\"a\":\"\xff\"}":           "UTF-8",
		deep(5):                      "nesting exceeds 4 levels",
		`{"a":1} {"a":2}`:            "unexpected data after",
		`{"a":1}]`:                   "unexpected data after",
		`[1]`:                        "not an array",
		`"x"`:                        "not a string",
		`{"a":`:                      "malformed JSON",
		`{"s":"{{{{{{{{{{"}`:         "",
		deep(4):                      "",
		`{"n":12345678901234567890}`: "",
	} {
		_, err := eventcodec.Decode([]byte(body), 4)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", body, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: %v, want an error saying %q", body, err, want)
		}
	}
}

func TestDecodeKeepsNumbersExact(t *testing.T) {
	t.Parallel()
	doc, err := eventcodec.Decode([]byte(`{"n":12345678901234567890}`), eventcodec.DefaultMaxDepth)
	if err != nil || doc["n"] != json.Number("12345678901234567890") {
		t.Fatalf("%v, %v", doc, err)
	}
}
