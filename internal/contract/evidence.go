package contract

import (
	"strconv"
	"strings"
	"time"

	"github.com/gatedhq/gated/internal/redact"
	"github.com/gatedhq/gated/internal/route"
)

// Warning codes and limits of the evidence checks.
const (
	WarnMissingTimestamp      = "missing_freshness_timestamp"
	WarnWeakTrust             = "weak_trust_tier"
	WarnUnknownRedaction      = "unknown_redaction_status"
	WarnUnknownFreshness      = "unknown_freshness_status"
	redactedSourceID          = "[redacted_source_id]"
	maxEvidenceAge            = 168 * time.Hour
	evidenceSafetyVersion     = "0.1"
	missingAuthorizationIDTag = "counterfactual.missing_authorization"
)

var (
	contradictionWords = []string{"contradict", "conflict", "inconsistent", "does not match", "disputes", "opposes"}
	missingInfoWords   = []string{"evidence missing", "missing evidence", "information is missing", "record is missing",
		"not available", "unavailable", "unknown", "insufficient", "no evidence"}
	missingAuthWords = []string{"missing authorization", "removes verified authorization"}
)

// Integrity is the reference's evidence_integrity report.
type Integrity struct {
	EvidenceSafetyVersion          string   `json:"evidence_safety_version"`
	CheckedRefCount                int      `json:"checked_ref_count"`
	UsedSourceIDs                  []string `json:"used_source_ids"`
	MissingEvidenceSourceIDs       []string `json:"missing_evidence_source_ids"`
	ContradictoryEvidenceSourceIDs []string `json:"contradictory_evidence_source_ids"`
	CitationSourceIDs              []string `json:"citation_source_ids"`
	ProvenanceSourceIDs            []string `json:"provenance_source_ids"`
	Issues                         []Issue  `json:"issues"`
	ErrorCodes                     []string `json:"error_codes"`
	WarningCodes                   []string `json:"warning_codes"`
	HasErrors                      bool     `json:"has_errors"`
	HasWarnings                    bool     `json:"has_warnings"`
}

// Issue is one evidence problem, located by JSON path.
type Issue struct {
	Level   string `json:"level"` // error | warning
	Code    string `json:"code"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

// displayIDs returns the source ids safe to echo: an id that itself looks
// like a secret or personal data is replaced, so gated never repeats one.
func displayIDs(refs []route.EvidenceRef) []string {
	out := make([]string, len(refs))
	for i := range refs {
		id := refs[i].SourceID
		if redact.HasSecret(id) || redact.HasPII(id) {
			id = redactedSourceID
		}
		out[i] = id
	}
	return out
}

// checkEvidence runs the evidence checks of section 4; each can only tighten.
func checkEvidence(ev *route.Event, cat route.Category, ids []string, now time.Time) ([]route.Finding, Integrity) {
	in := Integrity{
		EvidenceSafetyVersion: evidenceSafetyVersion, CheckedRefCount: len(ev.EvidenceRefs),
		UsedSourceIDs: ids, MissingEvidenceSourceIDs: []string{}, ContradictoryEvidenceSourceIDs: []string{},
		CitationSourceIDs: []string{}, ProvenanceSourceIDs: []string{}, Issues: []Issue{},
		ErrorCodes: []string{}, WarningCodes: []string{},
	}
	var fs []route.Finding
	block := func(i int, code string, r route.Route, msg string) {
		path := "$.evidence_refs"
		if i >= 0 {
			path = refPath(i)
		}
		fs = append(fs, route.Finding{Source: route.SourceEvidence, Code: code, Route: r, Blocking: true, Message: msg})
		in.Issues = append(in.Issues, Issue{Level: "error", Code: code, Path: path, Message: msg})
		in.ErrorCodes = appendOnce(in.ErrorCodes, code)
	}
	warn := func(i int, field, code, msg string) {
		in.Issues = append(in.Issues, Issue{Level: "warning", Code: code, Path: refPath(i) + "." + field, Message: msg})
		in.WarningCodes = appendOnce(in.WarningCodes, code)
	}

	if cat != route.PublicRead && len(ev.EvidenceRefs) == 0 {
		block(-1, route.CodeMissingEvidenceRefs, route.Defer, "private reads, writes and unknown tools need evidence refs")
	}
	for i := range ev.EvidenceRefs {
		r := &ev.EvidenceRefs[i]
		summary := strings.ToLower(r.Summary)
		if strings.HasPrefix(r.SourceID, missingAuthorizationIDTag) || r.Kind == "system_state" && containsAny(summary, missingAuthWords) {
			block(i, route.CodeEvidenceMissingAuthorization, route.Defer, "evidence says authorization is missing")
		}
		text := r.SourceID + " " + r.Summary + " " + r.CitationURL + " " + r.RetrievalURL + " " + r.Provenance
		switch {
		case redact.HasSecret(text):
			block(i, route.CodeEvidenceSecretLeak, route.Refuse, "an evidence ref carries what looks like a raw secret")
		case r.RedactionStatus != "redacted" && redact.HasPII(text):
			block(i, route.CodeEvidencePIILeak, route.Refuse, "an evidence ref that is not redacted carries an e-mail address or phone number")
		}
		if r.RedactionStatus == "sensitive" {
			block(i, route.CodeUnsafeRedactionStatus, route.Refuse, "an evidence ref is marked sensitive")
		}
		switch stale, bad := staleness(r, now); {
		case bad:
			block(i, route.CodeInvalidRetrievedAt, route.Defer, "an evidence timestamp cannot be parsed")
		case stale:
			block(i, route.CodeStaleEvidence, route.Defer, "an evidence ref is stale (older than 168 hours or marked stale)")
		}
		if r.SourceID == "" {
			block(i, route.CodeMissingSourceID, route.Defer, "an evidence ref has no source_id")
		}
		if containsAny(summary, contradictionWords) || len(r.Contradicts) > 0 {
			block(i, route.CodeContradictoryEvidence, route.Defer, "an evidence ref contradicts the action")
			in.ContradictoryEvidenceSourceIDs = append(in.ContradictoryEvidenceSourceIDs, ids[i])
		}
		if containsAny(summary, missingInfoWords) {
			block(i, route.CodeEvidenceMarksMissingInformation, route.Defer, "an evidence ref says information is missing")
			in.MissingEvidenceSourceIDs = append(in.MissingEvidenceSourceIDs, ids[i])
		}
		if r.CitationURL != "" {
			in.CitationSourceIDs = append(in.CitationSourceIDs, ids[i])
		}
		if r.Provenance != "" {
			in.ProvenanceSourceIDs = append(in.ProvenanceSourceIDs, ids[i])
		}

		// Warnings change no route.
		if (cat == route.PrivateRead || cat == route.Write) && r.RetrievedAt == "" {
			warn(i, "retrieved_at", WarnMissingTimestamp, "Private reads and writes should include retrieved_at.")
		}
		switch r.TrustTier {
		case "unverified", "unknown", "user_claimed":
			warn(i, "trust_tier", WarnWeakTrust, "The evidence comes from a weak trust tier.")
		}
		if r.RedactionStatus == "unknown" {
			warn(i, "redaction_status", WarnUnknownRedaction, "The evidence's redaction status is unknown.")
		}
		if r.Freshness.Status == "unknown" {
			warn(i, "freshness.status", WarnUnknownFreshness, "The evidence's freshness is unknown.")
		}
	}
	in.HasErrors = len(in.ErrorCodes) > 0
	in.HasWarnings = len(in.WarningCodes) > 0
	return fs, in
}

// staleness judges a ref's freshness: marked stale, or its retrieved_at
// (else freshness.checked_at) older than 168 hours; bad when the timestamp
// cannot be parsed.
func staleness(r *route.EvidenceRef, now time.Time) (stale, bad bool) {
	if r.Freshness.Status == "stale" {
		stale = true
	}
	ts := r.RetrievedAt
	if ts == "" {
		ts = r.Freshness.CheckedAt
	}
	if ts == "" {
		return stale, false
	}
	t, ok := parseTimestamp(ts)
	if !ok {
		return stale, true
	}
	return stale || now.Sub(t) > maxEvidenceAge, false
}

// Layouts of ISO 8601 timestamps the reference (Python's fromisoformat)
// accepts; a time without a zone is taken as UTC.
var timestampLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02",
}

func parseTimestamp(s string) (time.Time, bool) {
	for _, layout := range timestampLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// refPath is the JSON path of evidence ref i. Every warning names one, so
// it is built without fmt, whose formatting cost ~2 % of a decision.
func refPath(i int) string {
	return "$.evidence_refs[" + strconv.Itoa(i) + "]"
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
