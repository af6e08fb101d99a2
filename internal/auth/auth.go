// Package auth holds the bearer tokens gated accepts. Tokens are configured
// only as SHA-256 hashes, so the tokens file is not itself a secret store.
package auth

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"

	"go.yaml.in/yaml/v3"
)

// Scopes a token can hold.
const (
	ScopePreToolCheck  = "pre_tool_check"
	ScopeCatalogRead   = "catalog_read"
	ScopePolicyRead    = "policy_read"
	ScopeDecisionsRead = "decisions_read"
	// ScopeShadow lets a caller ask for shadow mode per request
	// (?shadow_mode=true): its tools then run whatever the route, so it is
	// granted, not assumed.
	ScopeShadow = "shadow"
	// ScopeMetrics reads /metrics on the API listener (a separate
	// --metrics-addr listener needs no token).
	ScopeMetrics = "metrics"
	// ScopeApprove lists, reads, approves and denies approvals, and follows
	// their event stream. The approver is the token: its name and principals.
	ScopeApprove = "approve"
	// ScopeAdmin sets, lifts and lists kill switches (POST, DELETE and GET
	// /v1/kill): it stops calls for every caller, so it is granted apart.
	ScopeAdmin = "admin"
)

var knownScopes = []string{ScopePreToolCheck, ScopeCatalogRead, ScopePolicyRead, ScopeDecisionsRead, ScopeShadow, ScopeMetrics, ScopeApprove, ScopeAdmin}

// Token is one configured caller.
type Token struct {
	Name       string   `yaml:"name" json:"name"`
	SHA256     string   `yaml:"sha256" json:"-"`
	Scopes     []string `yaml:"scopes" json:"scopes"`
	Principals []string `yaml:"principals" json:"principals"`
	// TrustEventPrincipals lets the event's own agent_id and subject count
	// as principals for policy; only for runtimes that vouch for them.
	TrustEventPrincipals bool `yaml:"trust_event_principals" json:"trust_event_principals"`

	digest [sha256.Size]byte
}

// Has reports whether the token holds scope.
func (t *Token) Has(scope string) bool { return slices.Contains(t.Scopes, scope) }

// Tokens is the set of configured tokens.
type Tokens struct {
	byDigest map[[sha256.Size]byte]*Token
}

// Load reads a tokens file: a YAML list of {name, sha256, scopes,
// principals, trust_event_principals}. Every problem is reported.
func Load(path string) (*Tokens, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the tokens file cannot be read: %w", err)
	}
	return Parse(raw)
}

// Parse parses the tokens file's content.
func Parse(raw []byte) (*Tokens, error) {
	var list []*Token
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf("the tokens file is not a valid YAML list of tokens: %w", err)
	}
	ts := &Tokens{byDigest: make(map[[sha256.Size]byte]*Token, len(list))}
	var errs []error
	names := map[string]bool{}
	for i, t := range list {
		if t == nil {
			errs = append(errs, fmt.Errorf("tokens[%d]: empty entry", i))
			continue
		}
		if t.Name == "" {
			errs = append(errs, fmt.Errorf("tokens[%d]: name is required", i))
		} else if names[t.Name] {
			errs = append(errs, fmt.Errorf("tokens[%d]: duplicate name %q", i, t.Name))
		}
		names[t.Name] = true
		d, err := hex.DecodeString(t.SHA256)
		if err != nil || len(d) != sha256.Size {
			errs = append(errs, fmt.Errorf("tokens[%d] (%s): sha256 must be 64 hex digits", i, t.Name))
			continue
		}
		copy(t.digest[:], d)
		if _, dup := ts.byDigest[t.digest]; dup {
			errs = append(errs, fmt.Errorf("tokens[%d] (%s): the same token hash is configured twice", i, t.Name))
		}
		for _, s := range t.Scopes {
			if !slices.Contains(knownScopes, s) {
				errs = append(errs, fmt.Errorf("tokens[%d] (%s): unknown scope %q (known: %v)", i, t.Name, s, knownScopes))
			}
		}
		ts.byDigest[t.digest] = t
	}
	if len(list) == 0 {
		errs = append(errs, errors.New("tokens file lists no tokens"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return ts, nil
}

// Verify returns the token whose hash matches the presented secret. The map
// is keyed by the SHA-256 of the secret, so a lookup's timing reveals only
// facts about a hash an attacker cannot invert; the final comparison is
// constant-time all the same.
func (ts *Tokens) Verify(secret string) (*Token, bool) {
	if ts == nil || secret == "" {
		return nil, false
	}
	d := sha256.Sum256([]byte(secret))
	t, ok := ts.byDigest[d]
	if !ok || subtle.ConstantTimeCompare(t.digest[:], d[:]) != 1 {
		return nil, false
	}
	return t, true
}

// Hash returns the hex SHA-256 of a token secret, as the tokens file wants it.
func Hash(secret string) string {
	d := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(d[:])
}
