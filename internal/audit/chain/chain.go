// Package chain is the arithmetic of gated's tamper-evident audit trail:
// each record is a link whose hash covers its content and the link before
// it, each writer keeps one chain of its own, and checkpoints sign a
// chain's head (or the point where a retention purge left it starting)
// with Ed25519. It knows nothing of what a record holds: the audit
// package hashes a record's content, and this package links, signs and
// verifies the hashes.
package chain

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"
)

// Hash is a SHA-256 digest: a record's content hash or a link hash.
type Hash [sha256.Size]byte

// String is the hash in lower-case hex, as records and checkpoints store it.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// ParseHash reads a hash in hex.
func ParseHash(s string) (Hash, error) {
	var h Hash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(h) {
		return h, fmt.Errorf("%q is not a SHA-256 hash in hex", s)
	}
	copy(h[:], b)
	return h, nil
}

// linkDomain keeps a link hash from ever equalling a hash made for another
// purpose over the same bytes.
const linkDomain = "gated-audit-link/v1\x00"

// Link is the hash of the link at seq of chain id: SHA-256 over the
// domain, the chain id (length-prefixed), seq, the previous link's hash
// (zero before the first link) and the record's content hash. Renumbering,
// moving a record to another chain or changing it all change the hash.
func Link(id string, seq int64, prev, content Hash) Hash {
	var arr [256]byte // on the stack for any chain id gated makes
	buf := append(arr[:0], linkDomain...)
	buf = binary.BigEndian.AppendUint64(buf, uint64(len(id)))
	buf = append(buf, id...)
	buf = binary.BigEndian.AppendUint64(buf, uint64(seq))
	buf = append(buf, prev[:]...)
	buf = append(buf, content[:]...)
	return sha256.Sum256(buf)
}

// NewID names a new chain: the writer's name (a pod or host name) and
// random bits, so two writers, or two runs of one, never share a chain.
func NewID(writer string) (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("name an audit chain: %w", err)
	}
	return writer + "." + hex.EncodeToString(b), nil
}

// Checkpoint kinds: a head checkpoint vouches for the chain up to Seq; a
// purge checkpoint says the links up to Seq were deleted by retention, so
// the chain now starts at Seq+1, following Hash.
const (
	KindHead  = "head"
	KindPurge = "purge"
)

// Checkpoint vouches for link Seq of chain Chain: its hash is Hash. Signed
// (KeyID and Signature set) it cannot be forged without the private key.
type Checkpoint struct {
	Chain     string    `json:"chain_id"`
	Seq       int64     `json:"chain_seq"`
	Hash      string    `json:"link_hash"`
	Kind      string    `json:"kind"`
	At        time.Time `json:"signed_at"`
	KeyID     string    `json:"key_id,omitempty"`
	Signature string    `json:"signature,omitempty"`
}

// Signed reports whether the checkpoint carries a signature.
func (c Checkpoint) Signed() bool { return c.Signature != "" }

// message is what a signature covers: every field but the signature,
// one per line, in a fixed order.
func (c Checkpoint) message() []byte {
	return []byte("gated-audit-checkpoint/v1\n" +
		"kind " + c.Kind + "\n" +
		"chain " + c.Chain + "\n" +
		"seq " + strconv.FormatInt(c.Seq, 10) + "\n" +
		"hash " + c.Hash + "\n" +
		"at " + c.At.UTC().Format(time.RFC3339Nano) + "\n" +
		"key " + c.KeyID + "\n")
}

// Signer signs checkpoints with one Ed25519 key.
type Signer struct {
	key ed25519.PrivateKey
	id  string
}

// NewSigner signs with key.
func NewSigner(key ed25519.PrivateKey) *Signer {
	return &Signer{key: key, id: KeyID(key.Public().(ed25519.PublicKey))}
}

// KeyID is the id checkpoints name their key by.
func (s *Signer) KeyID() string { return s.id }

// Public is the key verifiers need.
func (s *Signer) Public() ed25519.PublicKey { return s.key.Public().(ed25519.PublicKey) }

// Checkpoint returns a checkpoint of kind for link seq of chain id, signed
// at now; a nil Signer returns it unsigned.
func (s *Signer) Checkpoint(kind, id string, seq int64, link Hash, now time.Time) Checkpoint {
	c := Checkpoint{Chain: id, Seq: seq, Hash: link.String(), Kind: kind, At: now.UTC().Truncate(time.Microsecond)}
	if s != nil {
		c.KeyID = s.id
		c.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(s.key, c.message()))
	}
	return c
}

// KeyID names a public key: the first 8 bytes of its SHA-256, in hex. A
// rotated key has another id, so checkpoints say which key signed them.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// Keys are the public keys a verifier trusts, by key id.
type Keys map[string]ed25519.PublicKey

// NewKeys indexes public keys by their ids.
func NewKeys(pubs ...ed25519.PublicKey) Keys {
	k := Keys{}
	for _, p := range pubs {
		k[KeyID(p)] = p
	}
	return k
}

// Check verifies c's signature with the key it names.
func (k Keys) Check(c Checkpoint) error {
	if !c.Signed() {
		return fmt.Errorf("the %s checkpoint at seq %d is not signed", c.Kind, c.Seq)
	}
	pub, ok := k[c.KeyID]
	if !ok {
		return fmt.Errorf("the %s checkpoint at seq %d is signed by key %s, which is not among the public keys given", c.Kind, c.Seq, c.KeyID)
	}
	sig, err := base64.StdEncoding.DecodeString(c.Signature)
	if err != nil || !ed25519.Verify(pub, c.message(), sig) {
		return fmt.Errorf("the %s checkpoint at seq %d has a signature that key %s did not make over it: it was forged or altered", c.Kind, c.Seq, c.KeyID)
	}
	return nil
}
