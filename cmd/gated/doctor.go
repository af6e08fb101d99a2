package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gatedhq/gated/internal/doctor"
)

// runDoctor checks that a coding agent asks gated before every tool call:
// exit 0 when every check holds, 1 on a problem, 2 on a usage error.
func runDoctor(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	usage := "usage: gated doctor " + strings.Join(doctor.Runtimes(), "|") + " [--dir DIR] [--no-canary] [--audit-token-env NAME] [--json]"
	if len(args) == 0 {
		return usageError("%s", usage)
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stdout, usage)
		return nil
	}
	id := args[0]
	if !doctor.Known(id) {
		return usageError("gated doctor knows %s, not %q\n%s", strings.Join(doctor.Runtimes(), ", "), id, usage)
	}
	fs := newFlagSet("doctor "+id, stderr)
	dir := fs.String("dir", "", "the project folder the agent runs in (default: the current one)")
	noCanary := fs.Bool("no-canary", false, "only read the configuration; do not run the hook")
	auditTokenEnv := fs.String("audit-token-env", "", "variable holding a token with scope decisions_read, to read the canary's decision back (default: the hook's token)")
	auditWait := fs.Duration("audit-wait", 10*time.Second, "how long to wait for the canary's decision to reach gated's audit")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parseFlags(fs, args[1:], getenv); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("gated doctor %s takes no arguments, got %q", id, fs.Args())
	}
	if *dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("cannot tell the current folder: %w", err)
		}
		*dir = wd
	}
	if fi, err := os.Stat(*dir); err != nil || !fi.IsDir() {
		return usageError("--dir %s is not a folder", *dir)
	}
	r, err := doctor.Run(ctx, id, doctor.Options{Environ: os.Environ(), Dir: *dir, NoCanary: *noCanary,
		AuditTokenEnv: *auditTokenEnv, AuditWait: *auditWait})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(r)
	} else {
		err = r.WriteText(stdout)
	}
	if err != nil {
		return errors.Join(errors.New("writing the report failed"), err)
	}
	if !r.Protected() {
		return exitError{code: 1}
	}
	return nil
}
