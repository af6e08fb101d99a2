package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/gatedhq/gated/internal/envelope"
	"github.com/gatedhq/gated/internal/eventcodec"
	"github.com/gatedhq/gated/internal/gate"
)

// runCheck decides one event in-process, by the same path as the service.
func runCheck(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("check", stderr)
	shadow := fs.Bool("shadow", false, "decide in shadow mode")
	var sf sourceFlags
	sf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gated check [flags] [FILE]   (reads stdin without FILE)")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usageError("check takes at most one FILE")
	}
	src, err := loadSources(&sf, nil, nil)
	if err != nil {
		return err
	}
	in, name := stdin, "stdin"
	if fs.NArg() == 1 {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			return usageError("%v", err)
		}
		defer f.Close()
		in, name = f, fs.Arg(0)
	}
	body, err := io.ReadAll(io.LimitReader(in, 16<<20))
	if err != nil {
		return usageError("read %s: %v", name, err)
	}
	doc, err := eventcodec.Decode(body, eventcodec.DefaultMaxDepth)
	if err != nil {
		return usageError("%s: %v", name, err)
	}
	d := gate.New(append(src.Opts, gate.WithShadow(*shadow))...).Decide(ctx, gate.Request{Event: doc, TrustEventPrincipals: true})
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(envelope.From(d)); err != nil {
		return fmt.Errorf("write decision: %w", err)
	}
	if !d.Execute {
		return exitError{code: exitBlocked}
	}
	return nil
}
