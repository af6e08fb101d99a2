package actionapi

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/redact"
	"github.com/gatedhq/gated/internal/route"
)

// ExecutorRefPrefix starts the source_id of the evidence ref gated adds
// for the executor whose token it checked. Only gated makes one: a plan
// that carries a ref with it is refused (Decode), so a plan cannot pass its
// own word off as gated's.
const ExecutorRefPrefix = "gated-executor:"

// vouchedState is what gated vouches for in an authenticated executor: the
// runtime is who it says (its token), as a hook's runtime session is. Never
// validated or confirmed: those come from evidence or approvals.
const vouchedState = route.AuthAuthenticated

// executorRef is the evidence that an executor gated authenticated by its
// token sent this very plan. Its text is fixed and its names are plain or
// fingerprints, so nothing the token name or the plan holds can read as a
// stronger authorization, a secret or personal data. false: the plan
// cannot be fingerprinted, and gated vouches for nothing it cannot name.
func (p *Plan) executorRef(token string) (route.EvidenceRef, bool) {
	digest, err := p.digest()
	if err != nil {
		return route.EvidenceRef{}, false
	}
	ref := route.EvidenceRef{
		SourceID: ExecutorRefPrefix + tokenName(token) + ":plan:" + digest, Kind: "auth_event", TrustTier: "verified",
		RedactionStatus: "redacted", Summary: "gated checked the bearer token of the executor that sent this action plan",
		Provenance: "gated_action_check", Freshness: route.Freshness{Status: "fresh"},
	}
	// The contract reads confirmation into a source id that says
	// "confirmed": a plain name such as "unconfirmed-planner" would vouch
	// that every plan its token sends was confirmed. Such a name is
	// fingerprinted too.
	if contract.Supports(ref) != vouchedState {
		ref.SourceID = ExecutorRefPrefix + "sha256-" + fingerprint([]byte(token)) + ":plan:" + digest
	}
	return ref, true
}

var plainName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// tokenName keeps a plain token name and fingerprints any other, or one
// the evidence checks would take for a secret or personal data (and so
// refuse every plan the token sends).
func tokenName(name string) string {
	if plainName.MatchString(name) && !redact.HasSecret(name) && !redact.HasPII(name) {
		return name
	}
	return "sha256-" + fingerprint([]byte(name))
}

// digest fingerprints what the plan asks to run: the action, its input and
// everything an approval binds, so the record names the plan the
// executor's token was checked for.
func (p *Plan) digest() (string, error) {
	b, err := json.Marshal(struct {
		ActionType string         `json:"actionType"`
		Input      map[string]any `json:"input"`
		Binds      any            `json:"binds"`
	}{p.ActionType, p.Input, p.Binds()})
	if err != nil {
		return "", err
	}
	return "sha256-" + fingerprint(b), nil
}

// fingerprint is base32, not hex, as the hooks' session names: a hex
// fingerprint can be all digits, which the secret scan may take for a card
// number.
func fingerprint(b []byte) string {
	sum := sha256.Sum256(b)
	return fingerprintEncoding.EncodeToString(sum[:10])
}

var fingerprintEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// checkNoExecutorRef refuses a plan whose gated extension carries a ref
// named as gated's executor ref, in any case or compatibility form
// (fullwidth letters read as gated's in a record): only gated vouches.
func checkNoExecutorRef(x *Extension) error {
	if x == nil {
		return nil
	}
	for i, r := range x.EvidenceRefs {
		var id string
		switch v := r.(type) {
		case string:
			id = v
		case map[string]any:
			id, _ = v["source_id"].(string)
		}
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(norm.NFKC.String(id))), ExecutorRefPrefix) {
			return fmt.Errorf("the action plan is invalid: gated.evidence_refs.%d has a source_id starting %q, which only gated gives the executor it authenticated", i, ExecutorRefPrefix)
		}
	}
	return nil
}
