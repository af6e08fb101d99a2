package policy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gatedhq/gated/internal/route"
)

// connCounter is a real TCP listener on loopback that counts the
// connections it accepts: a custom module must never open one.
type connCounter struct {
	ln    net.Listener
	conns atomic.Int64
}

func listen(t *testing.T) *connCounter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &connCounter{ln: ln}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.conns.Add(1)
			// Answer like a schema server would, so a fetch that did happen
			// completes instead of hanging until the budget.
			fmt.Fprint(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
			conn.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return c
}

// loadRefused loads one custom module and requires the load to fail with a
// rego_builtin_forbidden problem on the module's file and line naming the
// builtin. Should the load succeed (the sandbox is gone), the module is
// evaluated once so the failure shows what it reached.
func loadRefused(t *testing.T, module, builtin string, line int) {
	t.Helper()
	dir := writeDir(t, map[string]string{"rules/bad.rego": module})
	s, err := Load([]string{dir}, nil)
	if err == nil {
		res := s.Evaluate(context.Background(), input("", "x"))
		t.Fatalf("a module calling %s loaded; its evaluation gave %+v", builtin, res.Findings)
	}
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("error %v is not a *LoadError", err)
	}
	file := filepath.Join(dir, "rules/bad.rego")
	for _, p := range le.Problems {
		if p.Code == "rego_builtin_forbidden" && p.File == file && p.Line == line && p.Field == "" && strings.Contains(p.Message, builtin) {
			return
		}
	}
	t.Fatalf("problems %v lack rego_builtin_forbidden for %s at %s line %d", le.Problems, builtin, file, line)
}

func findingRule(code string) string {
	return `{"code": "` + code + `", "route": "refuse", "blocking": true, "message": "m"}`
}

// Custom Rego cannot reach the network or the host, and cannot read
// anything that changes between two evaluations of the same input.
func TestSandboxRefusesHostAndNondeterministicBuiltins(t *testing.T) {
	t.Parallel()
	srv := listen(t)
	url := "http://" + srv.ln.Addr().String() + "/schema.json"
	cases := []struct{ builtin, call string }{
		{"http.send", `http.send({"method": "GET", "url": "` + url + `"})`},
		{"net.lookup_ip_addr", `net.lookup_ip_addr("localhost")`},
		{"json.match_schema", `json.match_schema(input.event, {"$ref": "` + url + `"})`},
		{"json.match_schema", `json.match_schema(input.event, {"$ref": "file:///etc/passwd"})`},
		{"json.verify_schema", `json.verify_schema({"$ref": "` + url + `"})`},
		{"opa.runtime", `opa.runtime()`},
		{"rand.intn", `rand.intn("seed", 100)`},
		{"uuid.rfc4122", `uuid.rfc4122("seed")`},
		{"time.now_ns", `time.now_ns()`},
		{"io.jwt.encode_sign", `io.jwt.encode_sign({"alg": "HS256"}, {}, {"kty": "oct", "k": "AAAA"})`},
	}
	for _, c := range cases {
		t.Run(c.builtin, func(t *testing.T) {
			// The call sits on line 4, inside a finding's body.
			loadRefused(t, "package gated.custom.bad\n\nfindings contains "+findingRule("c")+" if {\n\tx := "+c.call+"\n\tx != null\n}\n", c.builtin, 4)
		})
	}
	if n := srv.conns.Load(); n != 0 {
		t.Fatalf("the listener saw %d connection(s)", n)
	}
}

// Builtins whose single call can run or allocate without bound, where OPA
// cannot interrupt it, are refused at load too.
func TestSandboxRefusesUnboundedBuiltins(t *testing.T) {
	t.Parallel()
	for builtin, call := range map[string]string{
		"graph.reachable_paths":   `graph.reachable_paths({"a": ["b"], "b": []}, ["a"])`,
		"sprintf":                 `sprintf("%v", [input.event])`,
		"json.marshal":            `json.marshal(input.event)`,
		"bits.lsh":                `bits.lsh(1, 4000000000)`,
		"strings.render_template": `strings.render_template("{{.a}}", {"a": 1})`,
		"object.union":            `object.union(input.event, input.action)`,
	} {
		t.Run(builtin, func(t *testing.T) {
			loadRefused(t, "package gated.custom.bad\n\nfindings contains "+findingRule("c")+" if {\n\tx := "+call+"\n\tx != null\n}\n", builtin, 4)
		})
	}
}

// A call nested in another builtin's operands, in a comprehension or in a
// function body is found as well, and every one is reported.
func TestSandboxFindsEveryNestedCall(t *testing.T) {
	t.Parallel()
	mod := `package gated.custom.nested

f(x) := y if {
	y := concat("", [x, uuid.rfc4122("a")])
}

findings contains {"code": "c", "route": "ask", "blocking": true, "message": m} if {
	m := concat(",", [s | some i in [1, 2]; s := format_int(rand.intn("k", i), 10)])
	f(m) != ""
}
`
	_, err := Load([]string{writeDir(t, map[string]string{"n.rego": mod})}, nil)
	le := assertProblems(t, err, "rego_builtin_forbidden")
	var got []string
	for _, p := range le.Problems {
		got = append(got, p.String())
	}
	joined := strings.Join(got, "\n")
	if !strings.Contains(joined, "n.rego:4: -: rego_builtin_forbidden: custom Rego may not call uuid.rfc4122") ||
		!strings.Contains(joined, "n.rego:8: -: rego_builtin_forbidden: custom Rego may not call rand.intn") {
		t.Fatalf("problems do not name both calls with their lines:\n%s", joined)
	}
}

// The allowed set is enough for the documented example module and the
// usual policy work: strings, regexes, CIDRs, time from input.now_ns.
func TestSandboxAllowsEverydayBuiltins(t *testing.T) {
	t.Parallel()
	mod := `package gated.custom.everyday

findings contains {"code": "custom_everyday", "route": "ask", "blocking": true, "message": msg} if {
	input.action_id == "storage:push"
	startswith(lower(input.event.tool_name), "git")
	regex.match("^[a-z_]+$", input.event.tool_name)
	net.cidr_contains("10.0.0.0/8", "10.1.2.3")
	time.weekday(input.now_ns) == "Monday"
	count([p | some p in input.principals; endswith(p, "x")]) >= 0
	msg := concat(" ", ["push by", input.principal, "at hour", format_int(time.clock([input.now_ns, "UTC"])[0], 10)])
}
`
	s := mustLoad(t, nil, map[string]string{"everyday.rego": mod})
	res := assertOutcome(t, s, input("storage:push", "x"), route.Ask, "custom_everyday")
	if res.Findings[0].Message != "push by x at hour 15" {
		t.Fatalf("message %q", res.Findings[0].Message)
	}
}

func TestPolicyFileCaps(t *testing.T) {
	t.Parallel()
	t.Run("file too large", func(t *testing.T) {
		big := "package gated.custom.big\n\n# " + strings.Repeat("x", maxPolicyFileBytes) + "\n"
		_, err := Load([]string{writeDir(t, map[string]string{"big.rego": big})}, nil)
		le := assertProblems(t, err, "file_too_large")
		if !strings.Contains(le.Error(), "big.rego") {
			t.Fatalf("error %q does not name the file", le.Error())
		}
	})
	t.Run("POLICY.md too large", func(t *testing.T) {
		big := policyMD("schema: policy/v1\nid: \"@a/b\"") + strings.Repeat("x", maxPolicyFileBytes)
		_, err := Load([]string{writeDir(t, map[string]string{"POLICY.md": big})}, nil)
		assertProblems(t, err, "file_too_large")
	})
	t.Run("POLICY.md of a gigabyte", func(t *testing.T) {
		// Sparse: it takes no disk, but reading it would take a gigabyte
		// of memory. The size is checked before anything is read.
		dir := t.TempDir()
		f, err := os.Create(filepath.Join(dir, "POLICY.md"))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(1 << 30); err != nil {
			t.Fatal(err)
		}
		f.Close()
		_, err = Load([]string{dir}, nil)
		le := assertProblems(t, err, "file_too_large")
		if len(le.Problems) != 1 || le.Problems[0].File != filepath.Join(dir, "POLICY.md") {
			t.Fatalf("problems %v, want one file_too_large naming the file", le.Problems)
		}
	})
	t.Run("too many modules", func(t *testing.T) {
		files := map[string]string{}
		for i := range maxRegoFiles + 1 {
			files[fmt.Sprintf("m%04d.rego", i)] = fmt.Sprintf("package gated.custom.m%d\n", i)
		}
		_, err := Load([]string{writeDir(t, files)}, nil)
		assertProblems(t, err, "too_many_files")
	})
	t.Run("too many bytes", func(t *testing.T) {
		files := map[string]string{}
		chunk := strings.Repeat("x", maxPolicyFileBytes-64)
		for i := range maxPolicyBytes/len(chunk) + 1 {
			files[fmt.Sprintf("m%04d.rego", i)] = fmt.Sprintf("package gated.custom.m%d\n\n# %s\n", i, chunk)
		}
		_, err := Load([]string{writeDir(t, files)}, nil)
		assertProblems(t, err, "too_many_bytes")
	})
	t.Run("symlink to a device", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := os.Stat("/dev/zero"); err != nil {
			t.Skip("no /dev/zero")
		}
		if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.rego")); err != nil {
			t.Fatal(err)
		}
		_, err := Load([]string{dir}, nil)
		assertProblems(t, err, "read_failed")
	})
}
