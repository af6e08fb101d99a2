package bundle_test

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatedhq/gated/internal/bundle"
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
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	pkix, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	gotPub, err := bundle.ParsePublicKey(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix}))
	if err != nil || !gotPub.Equal(pub) {
		t.Errorf("ParsePublicKey = %v, %v", gotPub, err)
	}
	gotPriv, err := bundle.ParsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}))
	if err != nil || !gotPriv.Equal(priv) {
		t.Errorf("ParsePrivateKey: %v", err)
	}
	if _, err := bundle.ParsePublicKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})); err == nil {
		t.Error("ParsePublicKey accepted a private key")
	}
}
