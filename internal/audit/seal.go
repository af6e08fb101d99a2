package audit

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"filippo.io/age"

	"github.com/gatedhq/gated/internal/eventcodec"
)

// Sealed is what a sealed record keeps, encrypted, for `gated replay` to
// decide the call again exactly: the event as the runtime sent it (its
// arguments and evidence text included), the workspace its paths were
// judged against, the client address ip-range conditions read, and the
// AuthZEN request policy reads as input.authzen (for a call that came as
// one). Only an operator holding an age identity of the sealer's
// recipients reads it.
type Sealed struct {
	Event     map[string]any `json:"event"`
	Workspace string         `json:"workspace,omitempty"`
	ClientIP  string         `json:"client_ip,omitempty"`
	AuthZEN   map[string]any `json:"authzen,omitempty"`
}

// maxSealedBytes bounds what Unseal decrypts: the decrypted event cannot be
// larger than the body limits let one be (16 MiB, gated check's limit), so
// a bigger plaintext is not one gated sealed.
const maxSealedBytes = 16 << 20

// Sealer encrypts what a record seals to the operator's age recipients.
type Sealer struct {
	recipients []age.Recipient
}

// ParseSealer reads age recipients, one a line ("age1…"; # comments and
// blank lines skipped), as an age recipients file holds them.
func ParseSealer(text string) (*Sealer, error) {
	rs, err := age.ParseRecipients(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("read age recipients: %w", err)
	}
	return &Sealer{recipients: rs}, nil
}

// seal encrypts s and encodes it as base64 text, for a text column and a
// JSON line alike.
func (k *Sealer) seal(s Sealed) (string, error) {
	plain, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encode sealed arguments: %w", err)
	}
	var buf bytes.Buffer
	w, err := age.Encrypt(&buf, k.recipients...)
	if err != nil {
		return "", fmt.Errorf("seal arguments: %w", err)
	}
	if _, err := w.Write(plain); err != nil {
		return "", fmt.Errorf("seal arguments: %w", err)
	}
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("seal arguments: %w", err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// Unsealer decrypts sealed records with the operator's age identities.
type Unsealer struct {
	identities []age.Identity
}

// ParseUnsealer reads age identities ("AGE-SECRET-KEY-1…"), as an age
// identity file holds them.
func ParseUnsealer(text string) (*Unsealer, error) {
	ids, err := age.ParseIdentities(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("read age identities: %w", err)
	}
	return &Unsealer{identities: ids}, nil
}

// ErrNotSealed is Unseal's answer for a record stored without sealing.
var ErrNotSealed = errors.New("the record holds no sealed arguments")

// Unseal decrypts rec's sealed arguments.
func (u *Unsealer) Unseal(rec *Record) (*Sealed, error) {
	if rec.Sealed == "" {
		return nil, ErrNotSealed
	}
	ct, err := base64.StdEncoding.DecodeString(rec.Sealed)
	if err != nil {
		return nil, fmt.Errorf("sealed arguments of decision %s are not base64: %w", rec.DecisionID, err)
	}
	r, err := age.Decrypt(bytes.NewReader(ct), u.identities...)
	if err != nil {
		return nil, fmt.Errorf("unseal the arguments of decision %s: %w", rec.DecisionID, err)
	}
	plain, err := io.ReadAll(io.LimitReader(r, maxSealedBytes+1))
	if err != nil {
		return nil, fmt.Errorf("unseal the arguments of decision %s: %w", rec.DecisionID, err)
	}
	if len(plain) > maxSealedBytes {
		return nil, fmt.Errorf("the sealed arguments of decision %s are over %d bytes", rec.DecisionID, maxSealedBytes)
	}
	// The event is decoded as every surface decodes one (exact numbers
	// included), so the replayed call is the call that was decided.
	var wire struct {
		Event   json.RawMessage `json:"event"`
		AuthZEN json.RawMessage `json:"authzen"`
		Sealed
	}
	if err := json.Unmarshal(plain, &wire); err != nil {
		return nil, fmt.Errorf("the sealed arguments of decision %s do not decode: %w", rec.DecisionID, err)
	}
	s := wire.Sealed
	if s.Event, err = eventcodec.Decode(wire.Event, eventcodec.DefaultMaxDepth); err != nil {
		return nil, fmt.Errorf("the sealed event of decision %s does not decode: %w", rec.DecisionID, err)
	}
	if len(wire.AuthZEN) > 0 {
		if s.AuthZEN, err = eventcodec.Decode(wire.AuthZEN, eventcodec.DefaultMaxDepth); err != nil {
			return nil, fmt.Errorf("the sealed AuthZEN request of decision %s does not decode: %w", rec.DecisionID, err)
		}
	}
	return &s, nil
}
