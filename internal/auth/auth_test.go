package auth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var (
	hashA = Hash("secret-a")
	hashB = Hash("secret-b")
)

func TestHash(t *testing.T) {
	t.Parallel()
	// sha256("abc") from FIPS 180-2.
	if got := Hash("abc"); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("Hash(abc) = %s", got)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml string
		want       []string // substrings of the error
	}{
		{"empty file", "", []string{"tokens file"}},
		{"empty list", "[]", []string{"lists no tokens"}},
		{"not a list", "name: a\n", []string{"tokens file"}},
		{"null entry", "- null\n", []string{"tokens[0]: empty entry"}},
		{"no name", "- sha256: " + hashA + "\n", []string{"tokens[0]: name is required"}},
		{"bad hex", "- name: a\n  sha256: zz\n", []string{"tokens[0] (a): sha256 must be 64 hex digits"}},
		{"short hash", "- name: a\n  sha256: " + hashA[:62] + "\n", []string{"sha256 must be 64 hex digits"}},
		{"long hash", "- name: a\n  sha256: " + hashA + "00\n", []string{"sha256 must be 64 hex digits"}},
		{"missing hash", "- name: a\n", []string{"sha256 must be 64 hex digits"}},
		{"duplicate name", "- name: a\n  sha256: " + hashA + "\n- name: a\n  sha256: " + hashB + "\n",
			[]string{`tokens[1]: duplicate name "a"`}},
		{"duplicate hash", "- name: a\n  sha256: " + hashA + "\n- name: b\n  sha256: " + hashA + "\n",
			[]string{"tokens[1] (b): the same token hash is configured twice"}},
		{"unknown scope", "- name: a\n  sha256: " + hashA + "\n  scopes: [pre_tool_check, root]\n",
			[]string{`tokens[0] (a): unknown scope "root"`}},
		{"unknown field", "- name: a\n  sha256: " + hashA + "\n  scope: pre_tool_check\n", []string{"field scope not found"}},
		{"plaintext token field", "- name: a\n  token: secret-a\n", []string{"field token not found"}},
		{"every problem reported", "- name: a\n  sha256: xx\n- name: a\n  sha256: " + hashB + "\n  scopes: [root]\n",
			[]string{"tokens[0] (a): sha256", `duplicate name "a"`, `unknown scope "root"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, err := Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse accepted %q", tt.yaml)
			}
			if ts != nil {
				t.Errorf("Parse returned tokens with an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestParseAndVerify(t *testing.T) {
	t.Parallel()
	ts, err := Parse([]byte(`
- name: runtime
  sha256: ` + strings.ToUpper(hashA) + `
  scopes: [pre_tool_check, decisions_read]
  principals: [agent:support]
  trust_event_principals: true
- name: reader
  sha256: ` + hashB + `
  scopes: [catalog_read, policy_read]
- name: observer
  sha256: ` + Hash("secret-c") + `
  scopes: [pre_tool_check, shadow, metrics]
`))
	if err != nil {
		t.Fatal(err)
	}
	if tok, ok := ts.Verify("secret-c"); !ok || !tok.Has(ScopeShadow) || !tok.Has(ScopeMetrics) || tok.Has(ScopeCatalogRead) {
		t.Errorf("Verify(secret-c) = %+v, %v", tok, ok)
	}
	tok, ok := ts.Verify("secret-a")
	if !ok || tok.Name != "runtime" {
		t.Fatalf("Verify(secret-a) = %v, %v", tok, ok)
	}
	if !tok.Has(ScopePreToolCheck) || !tok.Has(ScopeDecisionsRead) || tok.Has(ScopeCatalogRead) {
		t.Errorf("scopes of runtime: %v", tok.Scopes)
	}
	if !tok.TrustEventPrincipals || len(tok.Principals) != 1 || tok.Principals[0] != "agent:support" {
		t.Errorf("runtime token = %+v", tok)
	}
	tok, ok = ts.Verify("secret-b")
	if !ok || tok.Name != "reader" || tok.Has(ScopePreToolCheck) || tok.TrustEventPrincipals {
		t.Errorf("Verify(secret-b) = %+v, %v", tok, ok)
	}
	for _, bad := range []string{"", "secret-d", "secret-a ", "SECRET-A", hashA} {
		if tok, ok := ts.Verify(bad); ok || tok != nil {
			t.Errorf("Verify(%q) = %v, %v", bad, tok, ok)
		}
	}
	var none *Tokens
	if _, ok := none.Verify("secret-a"); ok {
		t.Error("nil Tokens verified a secret")
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "tokens.yaml")
	if err := os.WriteFile(path, []byte("- name: a\n  sha256: "+hashA+"\n  scopes: [pre_tool_check]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ts.Verify("secret-a"); !ok {
		t.Error("loaded token does not verify")
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "the tokens file cannot be read") {
		t.Errorf("Load(missing) = %v", err)
	}
}
