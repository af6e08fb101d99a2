package bundletest

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"testing"
)

// Keys is a fresh Ed25519 key pair and its PEM encodings (PKIX public key,
// PKCS #8 private key), as openssl writes them.
type Keys struct {
	Public             ed25519.PublicKey
	Private            ed25519.PrivateKey
	PublicPEM, PrivPEM []byte
}

// NewKeys generates a key pair for signing bundles in a test.
func NewKeys(t testing.TB) Keys {
	t.Helper()
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
	return Keys{
		Public: pub, Private: priv,
		PublicPEM: pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix}),
		PrivPEM:   pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}),
	}
}
