package strictjson

import (
	"errors"
	"testing"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	for text, dup := range map[string]string{
		`{"a": 1, "a": 2}`:                    "/a",
		`{"a": 1, "\u0061": 2}`:               "/a",
		`{"x": [{"b": 1}, {"b": 1, "b": 2}]}`: "/x/1/b",
		`{"a/b": {"c": 1, "c": 1}}`:           "/a~1b/c",
	} {
		err := Check([]byte(text))
		if derr, ok := errors.AsType[*DuplicateError](err); !ok || derr.Pointer != dup {
			t.Errorf("Check(%s) = %v, want the key %s repeated", text, err, dup)
		}
	}
	for _, text := range []string{`{"a": "\ud800"}`, `{"a": "\udc00\ud800"}`, "{\"a\": \"\xff\"}", `{"a": }`} {
		err := Check([]byte(text))
		if _, dup := errors.AsType[*DuplicateError](err); err == nil || dup {
			t.Errorf("Check(%s) = %v, want an error that is no repeated key", text, err)
		}
	}
	for _, text := range []string{`{"a": "\ud83d\ude00", "A": 1, "b": {"a": 2}}`, `[{"a": 1}, {"a": 1}]`, `1e400`} {
		if err := Check([]byte(text)); err != nil {
			t.Errorf("Check(%s) = %v, want nil", text, err)
		}
	}
}

// Unmarshal takes a member only spelled as the field names it, once, and
// no member the type does not name.
func TestUnmarshal(t *testing.T) {
	t.Parallel()
	type inner struct {
		Route string `json:"final_route"`
	}
	type doc struct {
		*inner
		N int `json:"n,omitempty"`
	}
	for _, text := range []string{
		`{"final_route": "accept", "Final_Route": "refuse"}`,
		`{"FINAL_ROUTE": "refuse"}`,
		`{"final_route": "accept", "final_route": "refuse"}`,
		`{"final_route": "accept", "approved_by": "x"}`,
		`{"final_route": "\ud800"}`,
	} {
		d := doc{inner: new(inner)}
		if err := Unmarshal([]byte(text), &d); err == nil {
			t.Errorf("Unmarshal(%s) took %+v, want an error", text, *d.inner)
		}
	}
	d := doc{inner: new(inner)}
	if err := Unmarshal([]byte(`{"final_route": "accept", "n": 2}`), &d); err != nil || d.Route != "accept" || d.N != 2 {
		t.Errorf("Unmarshal of an exact document: %+v, %v", d, err)
	}
}
