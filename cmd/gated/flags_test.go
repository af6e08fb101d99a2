package main

import (
	"io"
	"slices"
	"testing"
)

// Flags may follow the positional arguments, as users type them
// (`gated policy test policy/ --coverage`); after `--` nothing is a flag.
func TestParseFlagsInterleaved(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		pos  []string
		on   bool
		name string
	}{
		{[]string{"a", "--on", "b"}, []string{"a", "b"}, true, ""},
		{[]string{"--name", "x", "a", "b", "--on"}, []string{"a", "b"}, true, "x"},
		{[]string{"a", "--", "--on", "-name"}, []string{"a", "--on", "-name"}, false, ""},
		{[]string{"--", "a"}, []string{"a"}, false, ""},
		{[]string{"a", "b"}, []string{"a", "b"}, false, "env"},
	} {
		fs := newFlagSet("test", io.Discard)
		on := fs.Bool("on", false, "")
		name := fs.String("name", "", "")
		env := func(k string) string {
			if k == "GATED_NAME" {
				return "env"
			}
			return ""
		}
		if err := parseFlags(fs, c.args, env); err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if !slices.Equal(fs.Args(), c.pos) || *on != c.on || (c.name != "" && *name != c.name) {
			t.Errorf("%q: positional %q, on %v, name %q; want %q, %v, %q", c.args, fs.Args(), *on, *name, c.pos, c.on, c.name)
		}
	}
	fs := newFlagSet("test", io.Discard)
	if err := parseFlags(fs, []string{"a", "--unknown"}, func(string) string { return "" }); err == nil {
		t.Fatal("an unknown flag after a positional argument should be a usage error")
	}
}
