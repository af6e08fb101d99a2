package bundle

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
)

// SigPath is where a manifest's signature is kept: beside it, named
// <manifest>.sig, holding the base64 of a detached Ed25519 signature over
// the bundle's revision string ("sha256:<hex>"). Signing the revision
// signs every path and byte of the bundle, whatever sources produced them.
func SigPath(manifest string) string { return manifest + ".sig" }

// sigBytes caps a signature file: base64 of 64 bytes with some whitespace.
const sigBytes = 1 << 10

// Sign returns the signature file's content for revision.
func Sign(revision string, key ed25519.PrivateKey) []byte {
	return []byte(base64.StdEncoding.EncodeToString(ed25519.Sign(key, []byte(revision))) + "\n")
}

// Verify checks the signature beside manifest over revision.
func Verify(manifest, revision string, pub ed25519.PublicKey) error {
	sigFile := SigPath(manifest)
	f, err := os.Open(sigFile)
	if err != nil {
		return fmt.Errorf("the bundle (revision %s) is not signed: %w", revision, err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, sigBytes+1))
	if err != nil {
		return fmt.Errorf("the signature file %s cannot be read: %w", sigFile, err)
	}
	if len(raw) > sigBytes {
		return fmt.Errorf("the signature file %s is larger than %d bytes", sigFile, sigBytes)
	}
	sig, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(raw)))
	if err != nil || len(sig) != ed25519.SignatureSize {
		return fmt.Errorf("the signature file %s does not hold the base64 of an Ed25519 signature", sigFile)
	}
	if !ed25519.Verify(pub, []byte(revision), sig) {
		return fmt.Errorf("the signature in %s does not verify revision %s with the bundle public key", sigFile, revision)
	}
	return nil
}

// ParsePublicKey reads a PEM "PUBLIC KEY" block holding an Ed25519 key, as
// `openssl pkey -pubout` writes it.
func ParsePublicKey(data []byte) (ed25519.PublicKey, error) {
	blk, _ := pem.Decode(data)
	if blk == nil || blk.Type != "PUBLIC KEY" {
		return nil, errors.New("not a PEM PUBLIC KEY block")
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, err
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("a %T, not an Ed25519 public key", k)
	}
	return pub, nil
}

// ParsePrivateKey reads a PEM "PRIVATE KEY" block (PKCS #8) holding an
// Ed25519 key, as `openssl genpkey -algorithm ed25519` writes it.
func ParsePrivateKey(data []byte) (ed25519.PrivateKey, error) {
	blk, _ := pem.Decode(data)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, errors.New("not a PEM PRIVATE KEY block")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, err
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("a %T, not an Ed25519 private key", k)
	}
	return priv, nil
}
