package mcpproxy

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// On protocol 2026-07-28 a server may not ask the client while it serves a
// call (multi round-trip requests, SEP-2322): it answers input-required,
// and the client retries the call with the person's answer and the state
// the proxy gave it. The state comes back from the client, so the proxy
// signs it and reads back only what it signed.

// approvalInput is the key of the proxy's one input request, echoed back
// in the retry's inputResponses.
const approvalInput = "gated_approval"

// askStateTTL is how long a person has to answer: after it, the retry is
// refused and the call asks afresh.
const askStateTTL = 10 * time.Minute

// maxAskState bounds the request state the proxy reads back: its own are
// under 300 bytes.
const maxAskState = 1024

// askStatePrefix names the state's format, so a future one is told apart.
const askStatePrefix = "gated1."

// askState is what a retry is bound to: the decision that asked and the
// call it asked about (callKey's digest of the tool and its arguments).
type askState struct {
	Decision string `json:"d"`
	Call     string `json:"c"`
	Expires  int64  `json:"e"`
}

// asks signs the states the proxy hands out and spends each once: a state
// replayed with the same approval must not run the call twice.
type asks struct {
	key   []byte
	mu    sync.Mutex
	spent map[string]time.Time // decision id -> the state's expiry
}

func newAsks() *asks {
	key := make([]byte, 32)
	// crypto/rand.Read never fails (Go 1.24+): it crashes the program first.
	_, _ = rand.Read(key)
	return &asks{key: key, spent: map[string]time.Time{}}
}

// issue is the state of an input-required answer to the call key, asked by
// decision.
func (a *asks) issue(decision, key string, now time.Time) string {
	payload, _ := json.Marshal(askState{Decision: decision, Call: key, Expires: now.Add(askStateTTL).Unix()})
	body := askStatePrefix + base64.RawURLEncoding.EncodeToString(payload)
	return body + "." + base64.RawURLEncoding.EncodeToString(a.mac(body))
}

func (a *asks) mac(body string) []byte {
	m := hmac.New(sha256.New, a.key)
	m.Write([]byte(body))
	return m.Sum(nil)
}

var (
	errStateForeign = errors.New("its request state is not one this gated mcp-proxy issued")
	errStateExpired = errors.New("its request state has expired: call the tool again to be asked afresh")
	errStateSpent   = errors.New("its request state has been answered already: call the tool again to be asked afresh")
	errStateOther   = errors.New("its request state was issued for another call (another tool or other arguments)")
)

// redeem checks a retry's state — the proxy's own, signed, unexpired,
// unspent, for this very call — and spends it; it returns the id of the
// decision that asked.
func (a *asks) redeem(state, key string, now time.Time) (string, error) {
	if len(state) > maxAskState || !strings.HasPrefix(state, askStatePrefix) {
		return "", errStateForeign
	}
	// The prefix holds the first dot: the signature follows the last one.
	i := strings.LastIndexByte(state, '.')
	body, sig := state[:i], state[i+1:]
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if i < len(askStatePrefix) || err != nil || !hmac.Equal(got, a.mac(body)) {
		return "", errStateForeign
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(body, askStatePrefix))
	var s askState
	if err != nil || json.Unmarshal(payload, &s) != nil || s.Decision == "" || s.Call == "" {
		return "", errStateForeign
	}
	expires := time.Unix(s.Expires, 0)
	if !now.Before(expires) {
		return "", errStateExpired
	}
	if s.Call != key {
		return "", errStateOther
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, exp := range a.spent {
		if !now.Before(exp) {
			delete(a.spent, id)
		}
	}
	if _, ok := a.spent[s.Decision]; ok {
		return "", errStateSpent
	}
	a.spent[s.Decision] = expires
	return s.Decision, nil
}

// approved: the person answered the proxy's question, accepting with
// approve true. Anything else — no answer, decline, cancel, false, another
// kind of answer — leaves the ask standing.
func approved(responses sdk.InputResponseMap) bool {
	r, ok := responses[approvalInput].(*sdk.ElicitResult)
	return ok && r != nil && r.Action == "accept" && r.Content["approve"] == true
}
