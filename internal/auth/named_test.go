package auth

import "testing"

func TestNamed(t *testing.T) {
	t.Parallel()
	ts, err := Parse([]byte("- {name: a, sha256: " + Hash("secret-a") + ", scopes: [approve]}\n- {name: b, sha256: " + Hash("secret-b") + "}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if tok, ok := ts.Named("b"); !ok || tok.Name != "b" {
		t.Fatalf("Named(b) = %v, %v", tok, ok)
	}
	for _, name := range []string{"", "c"} {
		if _, ok := ts.Named(name); ok {
			t.Errorf("Named(%q) found a token", name)
		}
	}
	var none *Tokens
	if _, ok := none.Named("a"); ok {
		t.Error("nil Tokens found a token")
	}
}
