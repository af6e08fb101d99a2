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

// An approver is a token that exists and may approve, with its principals
// as they stand.
func TestApprover(t *testing.T) {
	t.Parallel()
	ts, err := Parse([]byte("- {name: a, sha256: " + Hash("secret-a") + ", scopes: [approve], principals: [\"group://leads\"]}\n- {name: b, sha256: " + Hash("secret-b") + ", scopes: [pre_tool_check]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := ts.Approver("a"); !ok || len(p) != 1 || p[0] != "group://leads" {
		t.Errorf("Approver(a) = %v, %v", p, ok)
	}
	for _, name := range []string{"b", "c", ""} {
		if _, ok := ts.Approver(name); ok {
			t.Errorf("Approver(%q) may approve", name)
		}
	}
}
