package main

import (
	"fmt"
	"io"
	"os"

	"github.com/gatedhq/gated/internal/bundle"
)

// runBundle is `gated bundle revision|sign [flags] MANIFEST`: print the
// revision a manifest composes to, or sign it into <manifest>.sig for
// --bundle-public-key.
func runBundle(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	const use = "usage: gated bundle revision|sign [--key PRIVATE.pem] [--bundle-git-base URL] [--bundle-max-bytes N] [--require-pinned] MANIFEST"
	if len(args) < 1 || (args[0] != "revision" && args[0] != "sign") {
		return usageError(use)
	}
	sub := args[0]
	fs := newFlagSet("bundle "+sub, stderr)
	var bf bundleFlags
	bf.register(fs)
	key := fs.String("key", "", "PEM Ed25519 private key (PKCS #8) to sign with (sign)")
	if err := parseFlags(fs, args[1:], getenv); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError(use)
	}
	cfg, err := bf.config()
	if err != nil {
		return err
	}
	manifest := fs.Arg(0)
	b, err := bundle.Compose(manifest, bundle.Options{Limits: cfg.Limits, Git: cfg.Git, RequirePinned: cfg.RequirePinned, PublicKey: cfg.PublicKey})
	if err != nil {
		return fmt.Errorf("the bundle %s cannot be composed: %w", manifest, err)
	}
	if sub == "revision" {
		fmt.Fprintln(stdout, b.Revision)
		for _, c := range b.Commits {
			fmt.Fprintln(stdout, c.String())
		}
		return nil
	}
	if *key == "" {
		return usageError("gated bundle sign needs --key")
	}
	data, err := os.ReadFile(*key)
	if err != nil {
		return usageError("--key: %v", err)
	}
	priv, err := bundle.ParsePrivateKey(data)
	if err != nil {
		return usageError("--key %s: %v", *key, err)
	}
	if err := os.WriteFile(bundle.SigPath(manifest), bundle.Sign(b.Revision, priv), 0o644); err != nil {
		return fmt.Errorf("write the signature: %w", err)
	}
	fmt.Fprintf(stdout, "signed %s: %s\n", b.Revision, bundle.SigPath(manifest))
	return nil
}
