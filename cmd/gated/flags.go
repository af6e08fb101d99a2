package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// newFlagSet returns a flag set whose errors are usage errors.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("gated "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args, flags before, between or after the positional
// arguments (`gated policy test policy/ --coverage`), leaving the
// positional ones, in order, in fs.Args(); after `--` every argument is
// positional. Then it fills every flag not given on the command line from
// GATED_<NAME> (upper case, dashes as underscores).
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return exitError{code: 0}
			}
			return exitError{code: exitUsage}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
	if err := fs.Parse(append([]string{"--"}, pos...)); err != nil {
		return exitError{code: exitUsage}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		env := "GATED_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		v := getenv(env)
		if v == "" {
			return
		}
		if _, multi := f.Value.(*listFlag); multi {
			for _, part := range strings.Split(v, ",") {
				if part = strings.TrimSpace(part); part != "" {
					if err = f.Value.Set(part); err != nil {
						break
					}
				}
			}
		} else {
			err = f.Value.Set(v)
		}
		if err != nil {
			err = usageError("%s=%q: %v", env, v, err)
		}
	})
	return err
}

// listFlag is a repeatable flag; from the environment it takes a
// comma-separated list.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	if v == "" {
		return fmt.Errorf("empty value")
	}
	*l = append(*l, v)
	return nil
}
