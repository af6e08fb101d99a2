package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctorUsage: gated doctor's usage errors exit 2, its help exits 0.
func TestDoctorUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		code int
		in   string
	}{
		{nil, exitUsage, "usage: gated doctor claude-code|codex"},
		{[]string{"amp"}, exitUsage, `not "amp"`},
		{[]string{"windsurf", "--bogus"}, exitUsage, ""},
		{[]string{"codex", "--bogus"}, exitUsage, ""},
		{[]string{"codex", "extra"}, exitUsage, "takes no arguments"},
		{[]string{"codex", "--dir", "/no/such/folder"}, exitUsage, "is not a folder"},
		{[]string{"--help"}, 0, "usage: gated doctor"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"gated", "doctor"}, tc.args...), env(nil), strings.NewReader(""), &stdout, &stderr)
		msg := stdout.String() + stderr.String()
		if err != nil {
			msg += err.Error()
		}
		if code := exitCode(err); code != tc.code || !strings.Contains(msg, tc.in) {
			t.Fatalf("gated doctor %q: exit %d %q; want exit %d with %q", tc.args, code, msg, tc.code, tc.in)
		}
	}
}

// TestDoctorReportsAndFails runs `gated doctor` as a process with a home
// of its own: with no hook configured it prints the problem, as JSON, and
// exits non-zero.
func TestDoctorReportsAndFails(t *testing.T) {
	t.Parallel()
	home, project := t.TempDir(), t.TempDir()
	cmd := exec.Command(os.Args[0], "doctor", "codex", "--no-canary", "--json", "--dir", project)
	cmd.Env = append(os.Environ(), asGated+"=1", "HOME="+home, "CODEX_HOME="+filepath.Join(home, ".codex"))
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit %v; want 1", err)
	}
	var r struct {
		Runtime  string
		Problems int
		Checks   []struct{ Check, Status, Detail string }
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if r.Runtime != "codex" || r.Problems != 1 || len(r.Checks) != 1 || r.Checks[0].Status != "problem" {
		t.Fatalf("report %+v; want one problem", r)
	}
}
