// Package audit records every decision gated makes, audit-safe: the
// decision path fills a Record, Redact makes it audit-safe in place, and a
// Recorder queues
// records, batches them into a Sink and spools them to disk while a
// RemoteSink is away. The sinks live below it: internal/audit/postgres
// (batched COPY, and the Store that reads records back) and
// internal/audit/file (JSON lines); this package imports neither.
package audit

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"net/netip"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/gatedhq/gated/internal/redact"
	"github.com/gatedhq/gated/internal/route"
)

// MaskedKey replaces an argument key that looks sensitive.
const MaskedKey = redact.MaskedKey

// Record is one stored decision. Once redacted it holds no raw argument
// values, evidence summaries or URLs, tokens or request bodies: only what
// Redact lets through. Redact screens every text and list field; a field
// tagged audit:"derived" is one it fills itself from Raw, and audit:"key"
// marks gated's own id, kept as it is; audit:"link" and audit:"correction"
// are the recorder's own, set after Redact.
type Record struct {
	DecisionID        string         `json:"decision_id" audit:"key"`
	DecidedAt         time.Time      `json:"decided_at"`
	RequestID         string         `json:"request_id"`
	AgentID           string         `json:"agent_id"`
	ToolName          string         `json:"tool_name"`
	ActionID          string         `json:"action_id"`
	ActionVersion     string         `json:"action_version"`
	DeclaredCategory  string         `json:"declared_category"`
	EffectiveCategory string         `json:"effective_category"`
	DeclaredAuth      string         `json:"declared_auth"`
	EffectiveAuth     string         `json:"effective_auth"`
	RiskDomain        string         `json:"risk_domain"`
	RuntimeRoute      string         `json:"runtime_route"`
	FinalRoute        string         `json:"final_route"`
	GateDecision      string         `json:"gate_decision"`
	Execute           bool           `json:"execute"`
	Shadow            bool           `json:"shadow"`
	HardBlockers      []string       `json:"hard_blockers"`
	Reasons           []string       `json:"reasons"`
	FindingCodes      []string       `json:"finding_codes"`
	Evidence          []EvidenceMeta `json:"evidence" audit:"derived"`
	ArgumentKeys      []string       `json:"argument_keys" audit:"derived"`
	ArgumentsHMAC     string         `json:"arguments_hmac" audit:"derived"`
	CatalogRevision   string         `json:"catalog_revision"`
	PolicyRevision    string         `json:"policy_revision"`
	TokenName         string         `json:"token_name"`
	LatencyMS         float64        `json:"latency_ms"`
	GatedVersion      string         `json:"gated_version"`
	// ApprovalID is the approval the decision created (it asked) or used
	// (it was the retry an approval allowed); empty otherwise.
	ApprovalID string `json:"approval_id"`
	// BundleCommits are the commits the bundles in use resolved their
	// github sources to (gate.Revisions.Commits).
	BundleCommits []string `json:"bundle_commits"`
	// Principals are the principals the policy judged the call for (the
	// token's, and the event's when trusted), screened like other text, so
	// `gated replay` can judge it again and count by principal.
	Principals []string `json:"principals"`
	// Sealed is the call's event, workspace and client address encrypted
	// to the operator's age recipients (base64), for `gated replay`; empty
	// unless `gated serve --audit-seal-to` opts in.
	Sealed string `json:"sealed" audit:"derived"`
	// Supersedes is, in a correction, the chain seq of the link it
	// replaces (corrections.go); 0 in any other record. It is content:
	// the correction's link hashes it.
	Supersedes int64 `json:"supersedes,omitempty" audit:"correction"`
	// The record's link in its writer's hash chain (chain.go), set by the
	// recorder as it stores the record: the chain's id, the link's seq in
	// it and the link hash, which covers the record's ContentHash and the
	// link before it. Not content: a link cannot hash itself.
	ChainID  string `json:"chain_id,omitempty" audit:"link"`
	ChainSeq int64  `json:"chain_seq,omitempty" audit:"link"`
	LinkHash string `json:"link_hash,omitempty" audit:"link"`
}

// EvidenceMeta is what a record keeps of one evidence ref: its metadata, and
// its source id only when that passes the secret and PII checks (otherwise
// its keyed fingerprint). Summaries and URLs are never kept.
type EvidenceMeta struct {
	SourceID          string `json:"source_id,omitempty"`
	SourceFingerprint string `json:"source_fingerprint,omitempty"`
	Kind              string `json:"kind"`
	TrustTier         string `json:"trust_tier"`
	RedactionStatus   string `json:"redaction_status"`
	Freshness         string `json:"freshness"`
}

// Raw is what a record is derived from but never holds in the clear: the
// call's arguments (nil, or not even an object, for an invalid event) and
// its evidence refs; and, sealed only, the event as sent, the workspace,
// the client address and the AuthZEN request the call came as.
type Raw struct {
	Arguments any
	Evidence  []route.EvidenceRef
	Event     map[string]any
	Workspace string
	ClientIP  netip.Addr
	AuthZEN   map[string]any
}

// Milliseconds is a latency as a record holds it.
func Milliseconds(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Redactor redacts records; its key makes argument and source fingerprints
// unguessable, so a short secret cannot be recovered by hashing candidates.
type Redactor struct {
	// macs holds HMACs keyed with the key, reset after each use: hmac.New's
	// key setup (two SHA-256 blocks and their states) costs more than
	// hashing a short fingerprint's input.
	macs   *sync.Pool
	sealer *Sealer // nil: nothing is sealed (the default)
}

// NewRedactor returns a Redactor keyed with key (use GenerateKey in dev mode).
func NewRedactor(key []byte) *Redactor {
	k := slices.Clone(key)
	return &Redactor{macs: &sync.Pool{New: func() any { return hmac.New(sha256.New, k) }}}
}

// SealingTo returns a Redactor like r that also seals each record's event,
// workspace and client address to s (the --audit-seal-to opt-in).
func (r *Redactor) SealingTo(s *Sealer) *Redactor {
	c := *r
	c.sealer = s
	return &c
}

// GenerateKey returns a random 32-byte HMAC key, for dev mode when no
// --audit-hmac-key is given (fingerprints then differ between runs).
func GenerateKey() ([]byte, error) {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("generate audit hmac key: %w", err)
	}
	return k, nil
}

// Redact makes rec audit-safe in place and fills what it derives from raw.
// Free-form text that looks like a secret or personal data is replaced by
// its fingerprint, so a caller that stuffs a credential into request_id
// still cannot get it stored; lists are never left nil, so stored arrays
// are empty rather than NULL.
func (r *Redactor) Redact(rec *Record, raw Raw) {
	rec.DecidedAt = rec.DecidedAt.UTC().Truncate(time.Microsecond) // PostgreSQL's precision: the key must round-trip
	v := reflect.ValueOf(rec).Elem()
	for _, i := range screened.texts {
		f := v.Field(i)
		f.SetString(r.Screen(f.String()))
	}
	for _, i := range screened.lists {
		f := v.Field(i).Addr().Interface().(*[]string)
		*f = r.ScreenAll(*f)
	}
	// The recorder's own fields are its to set, after this.
	rec.Supersedes, rec.ChainID, rec.ChainSeq, rec.LinkHash = 0, "", 0, ""
	rec.Evidence = r.evidence(raw.Evidence)
	rec.ArgumentKeys = argumentKeys(raw.Arguments)
	rec.ArgumentsHMAC = r.jsonHMAC(raw.Arguments)
	rec.Sealed = ""
	if r.sealer != nil && raw.Event != nil {
		s := Sealed{Event: raw.Event, Workspace: raw.Workspace, AuthZEN: raw.AuthZEN}
		if raw.ClientIP.IsValid() {
			s.ClientIP = raw.ClientIP.String()
		}
		// Sealing is an aid to replay: a failure to seal (only the system's
		// random source can fail) leaves the record unsealed, never the
		// call refused.
		rec.Sealed, _ = r.sealer.seal(s)
	}
}

// screened are the indexes of the Record fields Redact screens: every
// string and []string field but the tagged ones. A field of any other kind
// that could hold text would escape screening, so it stops the program at
// start (and every test) until Redact handles it.
var screened = func() (s struct{ texts, lists []int }) {
	t := reflect.TypeFor[Record]()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Tag.Get("audit") != "" {
			continue
		}
		switch {
		case f.Type.Kind() == reflect.String:
			s.texts = append(s.texts, i)
		case f.Type == reflect.TypeFor[[]string]():
			s.lists = append(s.lists, i)
		case f.Type.Kind() == reflect.Bool, f.Type.Kind() == reflect.Float64, f.Type == reflect.TypeFor[time.Time]():
		default:
			panic("audit.Record." + f.Name + " is a " + f.Type.String() + ", which Redact cannot screen")
		}
	}
	return s
}()

const fingerprintPrefix = "hmac-sha256:"

func (r *Redactor) fingerprint(b []byte) string {
	m := r.macs.Get().(hash.Hash)
	m.Write(b)
	var sum [sha256.Size]byte
	m.Sum(sum[:0])
	m.Reset()
	r.macs.Put(m)
	var out [len(fingerprintPrefix) + 2*sha256.Size]byte
	copy(out[:], fingerprintPrefix)
	hex.Encode(out[len(fingerprintPrefix):], sum[:])
	return string(out[:])
}

// MaskedText is what a nil Redactor's Screen writes for a text that holds
// a secret or personal data: a reader without the HMAC key (gated replay)
// has no fingerprint to give, so it hides the text whole.
const MaskedText = "[redacted]"

// Screen returns s as a record field holds it: s itself, or, when s looks
// like a secret or personal data (redact.HasSecret, redact.HasPII), its
// fingerprint, or MaskedText when r is nil.
func (r *Redactor) Screen(s string) string {
	if !redact.HasSecret(s) && !redact.HasPII(s) {
		return s
	}
	if r == nil {
		return MaskedText
	}
	return r.fingerprint([]byte(s))
}

// ScreenAll is Screen of each of ss. It never returns nil, so stored
// arrays are empty rather than NULL.
func (r *Redactor) ScreenAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = r.Screen(s)
	}
	return out
}

func (r *Redactor) evidence(refs []route.EvidenceRef) []EvidenceMeta {
	out := make([]EvidenceMeta, len(refs))
	for i, e := range refs {
		m := EvidenceMeta{
			Kind:            r.Screen(e.Kind),
			TrustTier:       r.Screen(e.TrustTier),
			RedactionStatus: r.Screen(e.RedactionStatus),
			Freshness:       r.Screen(e.Freshness.Status),
		}
		if redact.HasSecret(e.SourceID) || redact.HasPII(e.SourceID) {
			m.SourceFingerprint = r.fingerprint([]byte(e.SourceID))
		} else {
			m.SourceID = e.SourceID
		}
		out[i] = m
	}
	return out
}

// jsonHMAC fingerprints a value (the arguments, an outcome's output) as
// canonical JSON: encoding/json writes map keys sorted, so equal values give
// equal fingerprints whatever order the caller sent. Values that cannot be
// encoded give an empty fingerprint.
func (r *Redactor) jsonHMAC(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return r.fingerprint(b)
}

// argumentKeys lists the top-level argument keys, sorted, with sensitive
// ones masked. Non-object arguments have no keys.
func argumentKeys(args any) []string {
	m, ok := args.(map[string]any)
	if !ok {
		return []string{}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if redact.SensitiveKey(k) {
			k = MaskedKey
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
