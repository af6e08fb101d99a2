package opfile

import (
	"errors"
	"testing"
	"time"
)

// The examples of RFC 6901, section 5, read backwards: tokens to pointer.
func TestPointer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tokens []string
		want   string
	}{
		{nil, ""},
		{[]string{"foo"}, "/foo"},
		{[]string{"foo", "0"}, "/foo/0"},
		{[]string{""}, "/"},
		{[]string{"a/b"}, "/a~1b"},
		{[]string{"c%d"}, "/c%d"},
		{[]string{"e^f"}, "/e^f"},
		{[]string{"g|h"}, "/g|h"},
		{[]string{`i\j`}, `/i\j`},
		{[]string{`k"l`}, `/k"l`},
		{[]string{" "}, "/ "},
		{[]string{"m~n"}, "/m~0n"},
		// "~" is escaped before "/": "~1" is the two characters, not a "/".
		{[]string{"~1"}, "/~01"},
		{[]string{"/~"}, "/~1~0"},
		{[]string{"grants", "3", "principal"}, "/grants/3/principal"},
	}
	for _, tt := range tests {
		if got := Pointer(tt.tokens...); got != tt.want {
			t.Errorf("Pointer(%q) = %q, want %q", tt.tokens, got, tt.want)
		}
	}
	if Pointer("a", "b/c") != Pointer("a")+Pointer("b/c") {
		t.Error("pointers do not concatenate")
	}
}

func TestProblemString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{File: "a/TOOL.md", Field: "/metadata/gated/rules/0/regex", Code: "invalid_rule_pattern", Message: "bad"},
			"a/TOOL.md: /metadata/gated/rules/0/regex: invalid_rule_pattern: bad"},
		{Problem{File: "ACTION.md", Code: "yaml_invalid", Message: "yaml: line 2:\n  did not find"},
			"ACTION.md: -: yaml_invalid: yaml: line 2: did not find"},
		{Problem{File: "rules/x.rego", Line: 4, Code: "rego_builtin_forbidden", Message: "no"},
			"rules/x.rego:4: -: rego_builtin_forbidden: no"},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

type listErr []Problem

func (l listErr) Error() string          { return "invalid" }
func (l listErr) ProblemList() []Problem { return l }

func TestNewReloadError(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	if NewReloadError(nil, at, "catalog") != nil {
		t.Fatal("no error gave a reload error")
	}
	re := NewReloadError(listErr{{File: "f", Code: "c"}}, at, "policy")
	if !re.At.Equal(at) || len(re.Problems) != 1 || re.Message != "the policy on disk is invalid; the last good policy stays in use" {
		t.Fatalf("reload error %+v", re)
	}
	if re := NewReloadError(errors.New("disk on fire"), at, "catalog"); re.Message != "disk on fire" || re.Problems != nil {
		t.Fatalf("plain error %+v", re)
	}
}
