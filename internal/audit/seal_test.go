package audit_test

import (
	"encoding/json"
	"errors"
	"net/netip"
	"reflect"
	"testing"

	"filippo.io/age"

	"github.com/gatedhq/gated/internal/audit"
)

func newKeys(t *testing.T) (*audit.Sealer, *audit.Unsealer) {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	s, err := audit.ParseSealer("# the operator's key\n" + id.Recipient().String() + "\n")
	if err != nil {
		t.Fatal(err)
	}
	u, err := audit.ParseUnsealer(id.String())
	if err != nil {
		t.Fatal(err)
	}
	return s, u
}

// Sealing is opt-in: a redactor not told to seal keeps nothing of the
// event, and one told to keeps it only encrypted, every canary out of the
// record's clear text, readable again with the operator's identity alone.
func TestSealedOnlyByOptInAndOnlyEncrypted(t *testing.T) {
	t.Parallel()
	sealer, unsealer := newKeys(t)
	_, stranger := newKeys(t)
	event := map[string]any{"tool_name": "send_email", "proposed_arguments": map[string]any{"to": secretCanaries[2], "n": json.Number("12345678901234567890")}}

	plain := canaryInput("seal-off")
	plain.raw.Event, plain.raw.Workspace = event, "/home/"+plainCanaries[0]
	rec := canaryRecord(audit.NewRedactor([]byte("k")), plain)
	if rec.Sealed != "" {
		t.Fatalf("a redactor without --audit-seal-to sealed %q", rec.Sealed)
	}
	if _, err := unsealer.Unseal(rec); !errors.Is(err, audit.ErrNotSealed) {
		t.Fatalf("Unseal of an unsealed record = %v, want ErrNotSealed", err)
	}

	in := canaryInput("seal-on")
	in.raw.Event, in.raw.Workspace, in.raw.ClientIP = event, "/home/"+plainCanaries[0], netip.MustParseAddr("192.0.2.7")
	rec = canaryRecord(audit.NewRedactor([]byte("k")).SealingTo(sealer), in)
	if rec.Sealed == "" {
		t.Fatal("a sealing redactor sealed nothing")
	}
	b, err := json.Marshal(audit.Frame{Record: rec})
	if err != nil {
		t.Fatal(err)
	}
	assertNoCanary(t, "a sealed record", b)
	got, err := unsealer.Unseal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Event, event) || got.Workspace != in.raw.Workspace || got.ClientIP != "192.0.2.7" {
		t.Fatalf("unsealed %+v, want the event, workspace and address sealed", got)
	}
	if _, err := stranger.Unseal(rec); err == nil || errors.Is(err, audit.ErrNotSealed) {
		t.Fatalf("another identity unsealed the record: %v", err)
	}
}
