// Package audit records every decision gated makes, audit-safe: Build turns
// what the decision path knows into a redacted Record, and a Recorder queues
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
	"slices"
	"time"

	"github.com/gatedhq/gated/internal/redact"
	"github.com/gatedhq/gated/internal/route"
)

// MaskedKey replaces an argument key that looks sensitive.
const MaskedKey = redact.MaskedKey

// Record is one stored decision. It holds no raw argument values, evidence
// summaries or URLs, tokens or request bodies: only what Build lets through.
type Record struct {
	DecisionID        string         `json:"decision_id"`
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
	Evidence          []EvidenceMeta `json:"evidence"`
	ArgumentKeys      []string       `json:"argument_keys"`
	ArgumentsHMAC     string         `json:"arguments_hmac"`
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

// Input is what the decision path knows about one decision. Arguments may be
// nil or not even an object (invalid events); Evidence may be empty.
type Input struct {
	DecisionID                          string
	Time                                time.Time
	RequestID, AgentID, ToolName        string
	ActionID, ActionVersion             string
	DeclaredCategory, EffectiveCategory string
	DeclaredAuth, EffectiveAuth         string
	RiskDomain                          string
	RuntimeRoute, FinalRoute            string
	GateDecision                        string
	Execute, Shadow                     bool
	HardBlockers, Reasons, FindingCodes []string
	Evidence                            []route.EvidenceRef
	Arguments                           any
	CatalogRevision, PolicyRevision     string
	TokenName, Version                  string
	Latency                             time.Duration
	ApprovalID                          string
	BundleCommits                       []string
}

// Redactor builds records; its key makes argument and source fingerprints
// unguessable, so a short secret cannot be recovered by hashing candidates.
type Redactor struct {
	key []byte
}

// NewRedactor returns a Redactor keyed with key (use GenerateKey in dev mode).
func NewRedactor(key []byte) *Redactor {
	return &Redactor{key: slices.Clone(key)}
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

// Build redacts in into a Record. Free-form identifiers that look like a
// secret or personal data are replaced by their fingerprint, so a caller that
// stuffs a credential into request_id still cannot get it stored.
func (r *Redactor) Build(in Input) *Record {
	rec := &Record{
		DecisionID:        in.DecisionID,
		DecidedAt:         in.Time.UTC().Truncate(time.Microsecond), // PostgreSQL's precision: the key must round-trip
		RequestID:         r.screen(in.RequestID),
		AgentID:           r.screen(in.AgentID),
		ToolName:          r.screen(in.ToolName),
		ActionID:          r.screen(in.ActionID),
		ActionVersion:     r.screen(in.ActionVersion),
		DeclaredCategory:  r.screen(in.DeclaredCategory),
		EffectiveCategory: r.screen(in.EffectiveCategory),
		DeclaredAuth:      r.screen(in.DeclaredAuth),
		EffectiveAuth:     r.screen(in.EffectiveAuth),
		RiskDomain:        r.screen(in.RiskDomain),
		RuntimeRoute:      r.screen(in.RuntimeRoute),
		FinalRoute:        r.screen(in.FinalRoute),
		GateDecision:      r.screen(in.GateDecision),
		Execute:           in.Execute,
		Shadow:            in.Shadow,
		HardBlockers:      r.screenAll(in.HardBlockers),
		Reasons:           r.screenAll(in.Reasons),
		FindingCodes:      r.screenAll(in.FindingCodes),
		Evidence:          r.evidence(in.Evidence),
		ArgumentKeys:      argumentKeys(in.Arguments),
		ArgumentsHMAC:     r.jsonHMAC(in.Arguments),
		CatalogRevision:   r.screen(in.CatalogRevision),
		PolicyRevision:    r.screen(in.PolicyRevision),
		TokenName:         r.screen(in.TokenName),
		LatencyMS:         float64(in.Latency) / float64(time.Millisecond),
		GatedVersion:      r.screen(in.Version),
		ApprovalID:        r.screen(in.ApprovalID),
		BundleCommits:     r.screenAll(in.BundleCommits),
	}
	return rec
}

func (r *Redactor) fingerprint(b []byte) string {
	m := hmac.New(sha256.New, r.key)
	m.Write(b)
	return "hmac-sha256:" + hex.EncodeToString(m.Sum(nil))
}

func (r *Redactor) screen(s string) string {
	if redact.HasSecret(s) || redact.HasPII(s) {
		return r.fingerprint([]byte(s))
	}
	return s
}

// screenAll never returns nil, so stored arrays are empty rather than NULL.
func (r *Redactor) screenAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = r.screen(s)
	}
	return out
}

func (r *Redactor) evidence(refs []route.EvidenceRef) []EvidenceMeta {
	out := make([]EvidenceMeta, len(refs))
	for i, e := range refs {
		m := EvidenceMeta{
			Kind:            r.screen(e.Kind),
			TrustTier:       r.screen(e.TrustTier),
			RedactionStatus: r.screen(e.RedactionStatus),
			Freshness:       r.screen(e.Freshness.Status),
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
