package bundle_test

import (
	"crypto/ed25519"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatedhq/gated/internal/bundle"
	"github.com/gatedhq/gated/internal/bundle/bundletest"
	"github.com/gatedhq/gated/internal/testtree"
)

func TestSignatureGatesTheBundle(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	otherPub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := testtree.Write(t, t.TempDir(), map[string]string{
		"manifest.yaml": "kind: code-workspace\ncode: { sources: [ { local: rules } ] }\n",
		"rules/a":       "one",
	})
	m := filepath.Join(dir, "manifest.yaml")
	composeErr(t, m, bundle.Options{PublicKey: pub}, "is not signed")

	b := compose(t, m, bundle.Options{})
	if err := os.WriteFile(bundle.SigPath(m), bundle.Sign(b.Revision, priv), 0o644); err != nil {
		t.Fatal(err)
	}
	if signed := compose(t, m, bundle.Options{PublicKey: pub}); signed.Revision != b.Revision {
		t.Errorf("the signed bundle composed to %s, want %s", signed.Revision, b.Revision)
	}
	composeErr(t, m, bundle.Options{PublicKey: otherPub}, "does not verify revision "+b.Revision)

	testtree.Write(t, dir, map[string]string{"rules/a": "two"})
	composeErr(t, m, bundle.Options{PublicKey: pub}, "does not verify")

	testtree.Write(t, dir, map[string]string{"manifest.yaml.sig": "not base64!"})
	composeErr(t, m, bundle.Options{PublicKey: pub}, "does not hold the base64 of an Ed25519 signature")
}

func TestParseKeys(t *testing.T) {
	k := bundletest.NewKeys(t)
	gotPub, err := bundle.ParsePublicKey(k.PublicPEM)
	if err != nil || !gotPub.Equal(k.Public) {
		t.Errorf("ParsePublicKey = %v, %v", gotPub, err)
	}
	gotPriv, err := bundle.ParsePrivateKey(k.PrivPEM)
	if err != nil || !gotPriv.Equal(k.Private) {
		t.Errorf("ParsePrivateKey: %v", err)
	}
	if _, err := bundle.ParsePublicKey(k.PrivPEM); err == nil {
		t.Error("ParsePublicKey accepted a private key")
	}
}
