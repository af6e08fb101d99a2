package audit

import (
	"crypto/sha256"
	"encoding/json"
)

// encodedSizeBound is at least the length of rec's spool encoding, computed
// without encoding it: an async record keeps that much spool room (see
// Record), and encoding every record on the hot path would cost more than
// the rest of the decision. TestEncodedSizeBound holds it to the encoder
// and to Record's fields. The link the writer adds later, in chain
// chainID, is counted at its widest.
func encodedSizeBound(rec *Record, chainID string) int {
	n := recordSkeleton + linkSkeleton + quotedBound(chainID) - 2
	for _, s := range [...]string{
		rec.DecisionID, rec.RequestID, rec.AgentID, rec.ToolName, rec.ActionID, rec.ActionVersion,
		rec.DeclaredCategory, rec.EffectiveCategory, rec.DeclaredAuth, rec.EffectiveAuth,
		rec.RiskDomain, rec.RuntimeRoute, rec.FinalRoute, rec.GateDecision, rec.ArgumentsHMAC,
		rec.CatalogRevision, rec.PolicyRevision, rec.TokenName, rec.GatedVersion, rec.ApprovalID, rec.Sealed,
	} {
		n += quotedBound(s) - 2 // the skeleton has its quotes
	}
	for _, list := range [...][]string{rec.HardBlockers, rec.Reasons, rec.FindingCodes, rec.ArgumentKeys, rec.BundleCommits, rec.Principals} {
		for _, s := range list {
			n += quotedBound(s) + 1 // and a comma; the skeleton's null pays for the brackets
		}
	}
	for _, e := range rec.Evidence {
		n += evidenceSkeleton
		for _, s := range [...]string{e.SourceID, e.SourceFingerprint, e.Kind, e.TrustTier, e.RedactionStatus, e.Freshness} {
			n += quotedBound(s) - 2
		}
	}
	return n
}

// quotedBound bounds the JSON string encoding of s: quotes and backslashes
// double, control characters and HTML-sensitive ones become \u00XX, and a
// byte of a multi-byte or invalid sequence at worst a six-byte escape.
func quotedBound(s string) int {
	n := 2
	for i := 0; i < len(s); i++ {
		n += int(escapedWidth[s[i]])
	}
	return n
}

// escapedWidth is quotedBound's cost of each byte (a table: this runs on
// every async decision).
var escapedWidth = func() (w [256]uint8) {
	for c := range w {
		switch {
		case c == '"' || c == '\\':
			w[c] = 2
		case c < 0x20 || c >= 0x80 || c == '<' || c == '>' || c == '&':
			w[c] = 6
		default:
			w[c] = 1
		}
	}
	return w
}()

// linkSkeleton is what a record's link and a correction's supersedes add
// to its encoding, for an empty chain id and the widest numbers and hash.
var linkSkeleton = len(`,"supersedes":-9223372036854775808,"chain_id":"","chain_seq":-9223372036854775808,"link_hash":""`) + 2*sha256.Size

// recordSkeleton is the encoding of a Record whose strings are empty and
// lists nil, widened for the longest time and number; evidenceSkeleton is
// that of one evidence entry with both source fields, and a comma.
var recordSkeleton, evidenceSkeleton = func() (int, int) {
	const (
		zeroTime  = len(`"0001-01-01T00:00:00Z"`)
		widest    = len(`"2006-01-02T15:04:05.999999999+07:00"`)
		widestNum = 32 // float64 in 'e' or 'f' form, with sign and exponent
	)
	r, err := json.Marshal(Frame{Record: &Record{}})
	if err != nil {
		panic(err)
	}
	e, err := json.Marshal(EvidenceMeta{SourceID: "x", SourceFingerprint: "x"})
	if err != nil {
		panic(err)
	}
	return len(r) + widest - zeroTime + widestNum - len("0"), len(e) - 2 + 1
}()
