package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
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

// The SDK reads what the filter passes as one stream: a message followed
// by spaces on its line ended the session (trailing data), and blank
// lines counted into the next message's length limit, so enough of them
// before a message near the limit ended it too. A line cut inside its
// numeric id is answered without one, not with the id's first digits,
// which may name another request.
func TestStdioFilterKeepsTheSDKReading(t *testing.T) {
	t.Parallel()
	const maxLine = 256
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	ss, err := srv.Connect(ctx, Stdio(inR, outW, maxLine), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	// A session the SDK ends closes the answers, so the test fails, not hangs.
	go func() { _ = ss.Wait(); _ = outW.CloseWithError(errors.New("the session ended")) }()
	answers := bufio.NewScanner(outR)
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(id string) {
		t.Helper()
		if !answers.Scan() {
			t.Fatalf("no answer for id %s: %v", id, answers.Err())
		}
		var a struct{ ID json.RawMessage }
		if err := json.Unmarshal(answers.Bytes(), &a); err != nil || string(a.ID) != id {
			t.Fatalf("answer %s, want one for id %s", answers.Bytes(), id)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	expect("1")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"ping"}  ` + "\t")
	expect("2")
	for range 8 {
		send(strings.Repeat(" ", maxLine-1))
	}
	ping := `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"_meta":{"pad":"`
	send(ping + strings.Repeat("x", maxLine-len(ping)-4) + `"}}}`)
	expect("3")
	send(`{"jsonrpc":"2.0","method":"ping","params":{"pad":"` + strings.Repeat("y", maxLine-60) + `"},"id":12345`)
	expect("null")
	send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	expect("4")
	// An id of invalid UTF-8 is answered in valid UTF-8, as the SDK does.
	send("{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\",")
	expect("\"\uFFFD\"")
}
