package audit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/redact"
	"github.com/gatedhq/gated/internal/route"
)

func TestRedactKeepsEveryField(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 20, 21, 36, 37, 123456789, time.FixedZone("X", 3600))
	got := &Record{
		DecisionID: "d1", DecidedAt: at, RequestID: "r1", AgentID: "a1", ToolName: "send_email",
		ActionID: "email:send", ActionVersion: "2.1.0",
		DeclaredCategory: "write", EffectiveCategory: "private_read", DeclaredAuth: "user_claimed", EffectiveAuth: "validated",
		RiskDomain: "customer_support", RuntimeRoute: "accept", FinalRoute: "ask", GateDecision: "fail",
		Execute: true, Shadow: true,
		HardBlockers: []string{"b1"}, Reasons: []string{"why"}, FindingCodes: []string{"contract.b1"},
		CatalogRevision: "cat", PolicyRevision: "pol", TokenName: "ci", GatedVersion: "v9", LatencyMS: Milliseconds(2500 * time.Microsecond),
		ApprovalID: "0190a5b4-7c3e-7a1b-8f00-000000000001", BundleCommits: []string{"catalog:team/rules@main=" + strings.Repeat("a", 40)},
		Principals: []string{"bot://a1"},
	}
	raw := Raw{
		Evidence: []route.EvidenceRef{{
			SourceID: "draft_id:123", Kind: "approval", TrustTier: "verified", RedactionStatus: "redacted",
			Summary: "the summary", CitationURL: "https://x.example/c", RetrievalURL: "https://x.example/r",
			Freshness: route.Freshness{Status: "fresh"},
		}},
		Arguments: map[string]any{"to": "a", "password": "p"},
	}
	rd := NewRedactor([]byte("k"))
	rd.Redact(got, raw)
	want := &Record{
		DecisionID: "d1", DecidedAt: time.Date(2026, 11, 20, 20, 36, 37, 123456000, time.UTC),
		RequestID: "r1", AgentID: "a1", ToolName: "send_email", ActionID: "email:send", ActionVersion: "2.1.0",
		DeclaredCategory: "write", EffectiveCategory: "private_read", DeclaredAuth: "user_claimed", EffectiveAuth: "validated",
		RiskDomain: "customer_support", RuntimeRoute: "accept", FinalRoute: "ask", GateDecision: "fail",
		Execute: true, Shadow: true,
		HardBlockers: []string{"b1"}, Reasons: []string{"why"}, FindingCodes: []string{"contract.b1"},
		Evidence: []EvidenceMeta{{SourceID: "draft_id:123", Kind: "approval", TrustTier: "verified",
			RedactionStatus: "redacted", Freshness: "fresh"}},
		ArgumentKeys:    []string{MaskedKey, "to"},
		ArgumentsHMAC:   rd.jsonHMAC(map[string]any{"password": "p", "to": "a"}),
		CatalogRevision: "cat", PolicyRevision: "pol", TokenName: "ci", LatencyMS: 2.5, GatedVersion: "v9",
		ApprovalID: "0190a5b4-7c3e-7a1b-8f00-000000000001", BundleCommits: []string{"catalog:team/rules@main=" + strings.Repeat("a", 40)},
		Principals: []string{"bot://a1"},
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("got\n%s\nwant\n%s", g, w)
	}
	b, _ := json.Marshal(got)
	for _, leak := range []string{"the summary", "x.example", `"p"`} {
		if strings.Contains(string(b), leak) {
			t.Errorf("record leaks %q: %s", leak, b)
		}
	}
}

// Redact screens every text and list field of a Record, whichever field
// it is: a secret in any of them is stored as its fingerprint. Only the
// fields it derives itself, and gated's own decision id, are not screened.
func TestRedactScreensEveryField(t *testing.T) {
	t.Parallel()
	const secret = "sk-live-abcdefghijklmnopqrstuv"
	rec := &Record{}
	v := reflect.ValueOf(rec).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Interface().(type) {
		case string:
			f.SetString(secret)
		case []string:
			f.Set(reflect.ValueOf([]string{"ok", secret}))
		}
	}
	NewRedactor([]byte("k")).Redact(rec, Raw{})
	b, _ := json.Marshal(rec)
	if n := strings.Count(string(b), secret); n != 1 || rec.DecisionID != secret {
		t.Errorf("the secret is stored %d times (want only as the decision id, the record's key): %s", n, b)
	}
}

func TestSensitiveKeysMasked(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"password", "Password", "client_secret", "api_key", "API-Key", "apiKey",
		"access_token", "Authorization", "cookie", "set-cookie", "card_number", "cvv", "ssn", "private_key",
		"sk-abcdefghijklmnop", "bob@example.com"} {
		if !redact.SensitiveKey(k) {
			t.Errorf("%q not masked", k)
		}
	}
	for _, k := range []string{"to", "subject", "body", "city", "limit", "query", "shipping_address"} {
		if redact.SensitiveKey(k) {
			t.Errorf("%q masked", k)
		}
	}
}

func TestArgumentsFingerprint(t *testing.T) {
	t.Parallel()
	rd := NewRedactor([]byte("k1"))
	a := redacted(rd, Raw{Arguments: map[string]any{"a": 1.0, "b": map[string]any{"y": "2", "x": "1"}}}).ArgumentsHMAC
	var decoded any
	json.Unmarshal([]byte(`{"b":{"x":"1","y":"2"},"a":1}`), &decoded)
	b := redacted(rd, Raw{Arguments: decoded}).ArgumentsHMAC
	if a != b || !strings.HasPrefix(a, "hmac-sha256:") || len(a) != len("hmac-sha256:")+64 {
		t.Fatalf("same arguments in another order: %q vs %q", a, b)
	}
	if c := redacted(rd, Raw{Arguments: map[string]any{"a": 2.0}}).ArgumentsHMAC; c == a {
		t.Fatal("different arguments, same fingerprint")
	}
	if d := redacted(NewRedactor([]byte("k2")), Raw{Arguments: decoded}).ArgumentsHMAC; d == a {
		t.Fatal("fingerprint does not depend on the key")
	}
	if e := redacted(rd, Raw{Arguments: func() {}}).ArgumentsHMAC; e != "" {
		t.Fatalf("unencodable arguments fingerprinted as %q", e)
	}
}

func TestBuildOddInputs(t *testing.T) {
	t.Parallel()
	rd := NewRedactor(nil)
	for name, args := range map[string]any{"nil": nil, "string": "sk-live-abcdefghijklmnopqr", "array": []any{"x"}, "number": 3.0} {
		rec := &Record{DecisionID: "d"}
		rd.Redact(rec, Raw{Arguments: args})
		if len(rec.ArgumentKeys) != 0 || rec.ArgumentKeys == nil {
			t.Errorf("%s: argument keys %v, want empty non-nil", name, rec.ArgumentKeys)
		}
		if rec.HardBlockers == nil || rec.Reasons == nil || rec.FindingCodes == nil || rec.Evidence == nil {
			t.Errorf("%s: nil slices would be stored as NULL", name)
		}
		if b, _ := json.Marshal(rec); strings.Contains(string(b), "sk-live") {
			t.Errorf("%s: raw argument leaked: %s", name, b)
		}
	}
}

func TestSecretsInIdentifiersAndSourcesAreFingerprinted(t *testing.T) {
	t.Parallel()
	rd := NewRedactor([]byte("k"))
	secret := "token=abcdefgh12345678"
	rec := &Record{RequestID: secret, AgentID: "alice@example.com", Reasons: []string{"saw sk-abcdefghijklmnopqrst"}}
	rd.Redact(rec, Raw{
		Evidence: []route.EvidenceRef{{SourceID: "ticket for alice@example.com"}, {SourceID: "AKIAABCDEFGHIJKLMNOP"}, {SourceID: "doc:7"}},
	})
	b, _ := json.Marshal(rec)
	for _, leak := range []string{"abcdefgh12345678", "alice@", "sk-abc", "AKIA"} {
		if strings.Contains(string(b), leak) {
			t.Errorf("leaked %q: %s", leak, b)
		}
	}
	if rec.Evidence[0].SourceID != "" || !strings.HasPrefix(rec.Evidence[0].SourceFingerprint, "hmac-sha256:") {
		t.Errorf("PII source id kept: %+v", rec.Evidence[0])
	}
	if rec.Evidence[2].SourceID != "doc:7" || rec.Evidence[2].SourceFingerprint != "" {
		t.Errorf("clean source id not kept: %+v", rec.Evidence[2])
	}
	if rec.RequestID != rd.fingerprint([]byte(secret)) {
		t.Errorf("request id %q, want its fingerprint", rec.RequestID)
	}
}

// redacted is an empty record redacted with raw.
func redacted(rd *Redactor, raw Raw) *Record {
	rec := &Record{}
	rd.Redact(rec, raw)
	return rec
}

// The redactor reuses its HMACs: each fingerprint must still be the HMAC
// of its own input alone, whatever was fingerprinted before it, by any
// goroutine, and a redactor sealing to another key shares them safely.
func TestFingerprintIsTheHMACOfItsInput(t *testing.T) {
	t.Parallel()
	key := []byte("0123456789abcdef0123456789abcdef")
	want := func(s string) string {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(s))
		return "hmac-sha256:" + hex.EncodeToString(m.Sum(nil))
	}
	rd := NewRedactor(key)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				s := strings.Repeat("x", (i*7+g)%150)
				if got := rd.fingerprint([]byte(s)); got != want(s) {
					t.Errorf("fingerprint of %d bytes: %s, want %s", len(s), got, want(s))
					return
				}
			}
		})
	}
	wg.Wait()
	if got := NewRedactor([]byte("other")).fingerprint([]byte("a")); got == want("a") {
		t.Fatal("a redactor with another key gives the same fingerprint")
	}
}
