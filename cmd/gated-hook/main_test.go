package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/adapter/hook/wire"
	"github.com/gatedhq/gated/internal/testgated"
)

// result is how a hook command ended: its exit code and what it printed.
type result struct {
	exit   int
	stdout string
}

// decisionID differs from one decision to the next; the rest of an answer
// must not.
var decisionID = regexp.MustCompile(`decision [0-9a-zA-Z_-]+`)

func runSmall(t *testing.T, stdin string, env map[string]string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return env[k] }, strings.NewReader(stdin), &stdout, &stderr)
	return result{exitCode(err, &stderr), decisionID.ReplaceAllString(stdout.String(), "decision …")}
}

// gated-hook answers every runtime's sample input exactly as `gated hook
// --url` does against the same gated: the same answer, the same exit code.
func TestSameAnswerAsGatedHook(t *testing.T) {
	t.Parallel()
	srv := testgated.Start(t, "--catalog", "../../examples/claude-code/catalog")
	samples, err := filepath.Glob("../../examples/*/hook-*.json")
	if err != nil || len(samples) < 8 {
		t.Fatalf("found %d sample hook inputs (%v)", len(samples), err)
	}
	for _, sample := range samples {
		rt := filepath.Base(filepath.Dir(sample))
		t.Run(rt+"/"+filepath.Base(sample), func(t *testing.T) {
			t.Parallel()
			in, err := os.ReadFile(sample)
			if err != nil {
				t.Fatal(err)
			}
			// Amp's sample is its stdin; the tool's name comes in the environment.
			env := map[string]string{"AGENT_TOOL_NAME": "Read"}
			small := runSmall(t, string(in), env, rt, "--url", srv.URL)
			cmd := exec.Command(testgated.Binary(t), "hook", rt, "--url", srv.URL)
			cmd.Env = append(os.Environ(), "AGENT_TOOL_NAME=Read")
			cmd.Stdin = bytes.NewReader(in)
			out, err := cmd.Output()
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				t.Fatal(err)
			}
			big := result{cmd.ProcessState.ExitCode(), decisionID.ReplaceAllString(string(out), "decision …")}
			if small != big {
				t.Errorf("gated-hook: %+v\ngated hook: %+v", small, big)
			}
			// An allow of a runtime that reads only exit codes is exit 0 and
			// nothing printed (Amp's harmless read); any other runtime prints.
			if codec, _ := wire.Lookup(rt); small.stdout == "" && small.exit == 0 && !codec.Answer(wire.Allow, "", "").Quiet {
				t.Error("the answer is empty and the exit code 0: nothing was decided")
			}
		})
	}
}

// Every failure blocks the runtime's way, as the runtime's codec says: a
// gated that is down, silent past the timeout, or not gated at all; bad
// flags and environment; no --url.
func TestFailuresBlock(t *testing.T) {
	t.Parallel()
	in, err := os.ReadFile("../../examples/claude-code/hook-read.json")
	if err != nil {
		t.Fatal(err)
	}
	down, silent := "http://"+testgated.ClosedAddr(t), "http://"+testgated.SilentAddr(t)
	teapot := "http://" + testgated.BrokenProxy(t, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
	for name, c := range map[string]struct {
		env  map[string]string
		args []string
	}{
		"gated down":                    {nil, []string{"--url", down}},
		"gated silent":                  {nil, []string{"--url", silent, "--timeout", "200ms"}},
		"an answer that is no answer":   {nil, []string{"--url", teapot}},
		"no url":                        {nil, nil},
		"a flag it does not know":       {nil, []string{"--url", down, "--catalog", "x"}},
		"an argument":                   {nil, []string{"--url", down, "extra"}},
		"a timeout that does not parse": {map[string]string{"GATED_URL": down, "GATED_TIMEOUT": "soon"}, nil},
		"a shadow that is no boolean":   {map[string]string{"GATED_URL": silent, "GATED_SHADOW": "maybe"}, nil},
	} {
		for _, rt := range []string{"claude-code", "copilot-cli", "cline", "gemini-cli", "windsurf", "qwen-code", "amp"} {
			codec, _ := wire.Lookup(rt)
			want := codec.Fail("", "")
			e := map[string]string{"AGENT_TOOL_NAME": "Read"} // Amp's; the others ignore it
			for k, v := range c.env {
				e[k] = v
			}
			got := runSmall(t, string(in), e, append([]string{rt}, c.args...)...)
			if got.exit != want.Exit {
				t.Errorf("%s, %s: exit %d, want %d", name, rt, got.exit, want.Exit)
			}
			if printed := got.stdout != ""; printed == want.Quiet {
				t.Errorf("%s, %s: printed %q, want the runtime's deny printed: %v", name, rt, got.stdout, !want.Quiet)
			} else if printed {
				if v, _, err := codec.Verdict([]byte(strings.TrimSpace(got.stdout))); err != nil || v != wire.Deny {
					t.Errorf("%s, %s: printed %q, not a deny", name, rt, got.stdout)
				}
			}
		}
	}
	if got := runSmall(t, "{}", nil, "copilot", "--url", down); got.exit != 2 {
		t.Errorf("the Copilot SDK's runtime, which has no command hook: exit %d, want 2", got.exit)
	}
	if got := runSmall(t, "{}", nil, "opencode", "--url", down); got.exit != 2 {
		t.Errorf("OpenCode, whose plugin posts to gated itself: exit %d, want 2", got.exit)
	}
	if got := runSmall(t, "{}", nil); got.exit != 2 {
		t.Errorf("no runtime: exit %d, want 2", got.exit)
	}
}
