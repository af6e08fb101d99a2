package mcpproxy

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// On protocol 2026-07-28 a server may not ask the client while it serves a
// call (multi round-trip requests, SEP-2322): it answers input-required,
// and the client retries the call with the answers and the state it was
// given. The proxy hands out two kinds of state, both signed, since they
// come back from the client and the proxy reads back only what it signed:
// its own ask's (the person's approval of an ask decision), and an
// upstream's continuation (the upstream's own input requests, passed on
// for a call gated allowed, with the upstream's state inside).

// approvalInput is the key of the proxy's one input request, echoed back
// in the retry's inputResponses.
const approvalInput = "gated_approval"

// askStateTTL is how long a person has to answer: after it, the retry is
// refused and the call is decided afresh.
const askStateTTL = 10 * time.Minute

// maxAskState bounds the request state the proxy reads back, and so the
// upstream's state it wraps: its own asks' are under 300 bytes.
const maxAskState = 16 << 10

// askStatePrefix names the state's format, so a future one is told apart.
const askStatePrefix = "gated1."

// The kinds of state: the proxy's own ask, or an upstream's continuation.
const (
	stateAsk      = "ask"
	stateUpstream = "upstream"
)

// askState is what a retry is bound to: the decision that asked (or that
// allowed the call the upstream asks about), and the call (callKey's
// digest of the tool and its arguments). An upstream's continuation also
// carries the upstream's own state. The nonce makes every state its own,
// so each is spent once.
type askState struct {
	Kind     string `json:"k"`
	Decision string `json:"d"`
	Call     string `json:"c"`
	Upstream string `json:"u,omitempty"`
	Nonce    string `json:"n"`
	Expires  int64  `json:"e"`
}

// asks signs the states the proxy hands out and spends each once: a state
// replayed must not run the call twice.
type asks struct {
	key   []byte
	mu    sync.Mutex
	spent map[string]time.Time // state signature -> the state's expiry
}

func newAsks() *asks {
	key := make([]byte, 32)
	// crypto/rand.Read never fails (Go 1.24+): it crashes the program first.
	_, _ = rand.Read(key)
	return &asks{key: key, spent: map[string]time.Time{}}
}

// issue is the state of an input-required answer to the call key: the
// proxy's own ask by decision, or (upstream set) the upstream's input
// requests about a call decision allowed.
func (a *asks) issue(kind, decision, key, upstream string, now time.Time) (string, error) {
	nonce := make([]byte, 12)
	_, _ = rand.Read(nonce)
	payload, _ := json.Marshal(askState{Kind: kind, Decision: decision, Call: key, Upstream: upstream,
		Nonce: base64.RawURLEncoding.EncodeToString(nonce), Expires: now.Add(askStateTTL).Unix()})
	body := askStatePrefix + base64.RawURLEncoding.EncodeToString(payload)
	state := body + "." + base64.RawURLEncoding.EncodeToString(a.mac(body))
	if len(state) > maxAskState {
		return "", errStateTooLarge
	}
	return state, nil
}

func (a *asks) mac(body string) []byte {
	m := hmac.New(sha256.New, a.key)
	m.Write([]byte(body))
	return m.Sum(nil)
}

var (
	errStateForeign  = errors.New("its request state is not one this gated mcp-proxy issued")
	errStateExpired  = errors.New("its request state has expired: call the tool again to be asked afresh")
	errStateSpent    = errors.New("its request state has been answered already: call the tool again to be asked afresh")
	errStateOther    = errors.New("its request state was issued for another call (another tool or other arguments)")
	errStateUnbound  = errors.New("the upstream MCP server asks the client for input about a call whose arguments gated mcp-proxy cannot bind a request state to")
	errStateTooLarge = fmt.Errorf("the upstream MCP server's request state is too large for gated mcp-proxy to pass on (its own state holds at most %d bytes)", maxAskState)
)

// redeem checks a retry's state — the proxy's own, signed, unexpired,
// unspent, for this very call — and spends it.
func (a *asks) redeem(state, key string, now time.Time) (askState, error) {
	if len(state) > maxAskState || !strings.HasPrefix(state, askStatePrefix) {
		return askState{}, errStateForeign
	}
	// The prefix holds the first dot: the signature follows the last one.
	i := strings.LastIndexByte(state, '.')
	body, sig := state[:i], state[i+1:]
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if i < len(askStatePrefix) || err != nil || !hmac.Equal(got, a.mac(body)) {
		return askState{}, errStateForeign
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(body, askStatePrefix))
	var s askState
	if err != nil || json.Unmarshal(payload, &s) != nil || s.Decision == "" || s.Call == "" ||
		(s.Kind != stateAsk && s.Kind != stateUpstream) {
		return askState{}, errStateForeign
	}
	expires := time.Unix(s.Expires, 0)
	if !now.Before(expires) {
		return askState{}, errStateExpired
	}
	if s.Call != key {
		return askState{}, errStateOther
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, exp := range a.spent {
		if !now.Before(exp) {
			delete(a.spent, id)
		}
	}
	if _, ok := a.spent[sig]; ok {
		return askState{}, errStateSpent
	}
	a.spent[sig] = expires
	return s, nil
}

// approved: the person answered the proxy's question, accepting with
// approve true. Anything else — no answer, decline, cancel, false, another
// kind of answer — leaves the ask standing.
func approved(responses sdk.InputResponseMap) bool {
	r, ok := responses[approvalInput].(*sdk.ElicitResult)
	return ok && r != nil && r.Action == "accept" && r.Content["approve"] == true
}

// answered: the retry carries the person's answer to the proxy's question,
// whatever it is. Without one the client retried without asking, and
// nobody declined.
func answered(responses sdk.InputResponseMap) bool {
	r, ok := responses[approvalInput].(*sdk.ElicitResult)
	return ok && r != nil
}
