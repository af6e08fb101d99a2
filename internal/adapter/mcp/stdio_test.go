package mcp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// Every line that is no JSON-RPC message is answered with an error, the
// request's id where its first bytes name one, and the lines around it pass
// on whole: one bad message costs only itself.
func TestStdioFilter(t *testing.T) {
	t.Parallel()
	const maxLine = 64
	good := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	long := `{"jsonrpc":"2.0","id":"call-7","method":"tools/call","params":{"arguments":{"path":"` + strings.Repeat("x", 200) + `"}}}`
	in := strings.Join([]string{
		good,
		long,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call",oops}`,
		`not json at all`,
		`[{"jsonrpc":"2.0","id":4,"method":"ping"}]`,
		`{"id":5}`,
		"",
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\r",
		`{"jsonrpc":"2.0","id":6,"result":{}}`,
	}, "\n")
	var pass, out bytes.Buffer
	if err := filterLines(strings.NewReader(in), &pass, &out, maxLine); err != nil {
		t.Fatal(err)
	}
	wantPass := good + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + `{"jsonrpc":"2.0","id":6,"result":{}}` + "\n"
	if pass.String() != wantPass {
		t.Errorf("passed on:\n%s\nwant:\n%s", pass.String(), wantPass)
	}
	type answer struct {
		ID    json.RawMessage
		Error struct {
			Code    int
			Message string
		}
	}
	var got []answer
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var a answer
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("answer %q: %v", l, err)
		}
		got = append(got, a)
	}
	want := []struct {
		id   string
		code int
		says string
	}{
		{`"call-7"`, codeInvalidRequest, "longer than 64 bytes"},
		{`3`, codeParseError, "not JSON"},
		{`null`, codeParseError, "not JSON"},
		{`null`, codeInvalidRequest, "batches"},
		{`5`, codeInvalidRequest, "no JSON-RPC request"},
	}
	if len(got) != len(want) {
		t.Fatalf("answers %s, want %d", out.String(), len(want))
	}
	for i, w := range want {
		if string(got[i].ID) != w.id || got[i].Error.Code != w.code || !strings.Contains(got[i].Error.Message, w.says) {
			t.Errorf("answer %d: id %s code %d %q; want id %s code %d saying %q", i, got[i].ID, got[i].Error.Code, got[i].Error.Message, w.id, w.code, w.says)
		}
	}
}
