package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/testwait"
)

// TestServeKillSwitchAcrossReplicas runs three gated servers on one
// database, as replicas: an agent killed through one is refused by the
// other two at its next call, other agents still run, and the lift
// through a third lets it run everywhere again.
func TestServeKillSwitchAcrossReplicas(t *testing.T) {
	t.Parallel()
	const agentSecret, adminSecret = "kill-agent-token-0123456789", "kill-admin-token-0123456789"
	_, dbURL := pgtest.Fresh(t)
	tokens := tokensFile(t, token{"agent", agentSecret, "[pre_tool_check]", ""}, token{"oncall", adminSecret, "[admin, metrics]", ""})
	args := []string{"--database-url", dbURL, "--audit-hmac-key", testHMACKey, "--audit-durability", "sync", "--tokens", tokens}
	var bases []string
	for range 3 {
		base, _ := startServe(t, args, nil)
		bases = append(bases, base)
	}
	agent, admin := map[string]string{"Authorization": "Bearer " + agentSecret}, map[string]string{"Authorization": "Bearer " + adminSecret}
	blockers := func(base, agentID string) []string {
		code, d := post(t, base+"/pre-tool-check", `{"tool_name":"get_weather","tool_category":"public_read","authorization_state":"none",
			"evidence_refs":[],"risk_domain":"public_information","agent_id":"`+agentID+`","proposed_arguments":{"city":"Lisbon"},"recommended_route":"accept"}`, agent)
		if code != http.StatusOK {
			t.Fatalf("decision: %d %v", code, d)
		}
		var out []string
		for _, b := range d["hard_blockers"].([]any) {
			out = append(out, b.(string))
		}
		return out
	}
	for _, base := range bases {
		if b := blockers(base, "agent-7"); len(b) != 0 {
			t.Fatalf("before the kill: %v", b)
		}
	}
	code, k := post(t, bases[0]+"/v1/kill", `{"scope":"agent","value":"agent-7","reason":"runaway loop"}`, admin)
	if code != http.StatusCreated {
		t.Fatalf("kill: %d %v", code, k)
	}
	for _, base := range bases[1:] {
		testwait.Until(t, "a replica to refuse agent-7", func() bool { return slices.Contains(blockers(base, "agent-7"), "kill_switch") })
		if b := blockers(base, "agent-8"); len(b) != 0 {
			t.Fatalf("another agent refused: %v", b)
		}
	}
	_, m := send(t, http.MethodGet, bases[1]+"/metrics", nil, admin)
	if !strings.Contains(string(m), "gated_kill_switches_active 1") {
		t.Errorf("the gauge does not count the kill")
	}
	code, lifted := call(t, http.MethodDelete, bases[2]+"/v1/kill/"+k["id"].(string), nil, admin)
	if code != http.StatusOK || lifted["lifted_by"] != "oncall" {
		t.Fatalf("lift: %d %v", code, lifted)
	}
	for _, base := range bases {
		testwait.Until(t, "every replica to let agent-7 run", func() bool { return len(blockers(base, "agent-7")) == 0 })
	}
}

// TestServeKillSwitchFailsClosed stalls the database under a running
// gated: once it could not confirm the kill list for --kill-stale-after it
// refuses every call (kill_switch_unavailable), says so in its log, and
// decides again once the database answers.
func TestServeKillSwitchFailsClosed(t *testing.T) {
	t.Parallel()
	const agentSecret = "stale-agent-token-0123456789"
	_, dbURL := pgtest.Fresh(t)
	p := pgProxy(t)
	tokens := tokensFile(t, token{"agent", agentSecret, "[pre_tool_check]", ""})
	base, logs := startServe(t, []string{"--database-url", p.URL(t, dbURL), "--audit-hmac-key", testHMACKey,
		"--tokens", tokens, "--kill-stale-after", "4s"}, nil)
	hdr := map[string]string{"Authorization": "Bearer " + agentSecret}
	blockers := func() []any {
		code, d := post(t, base+"/pre-tool-check", `{"tool_name":"get_weather","tool_category":"public_read","authorization_state":"none",
			"evidence_refs":[],"risk_domain":"public_information","proposed_arguments":{"city":"Lisbon"},"recommended_route":"accept"}`, hdr)
		if code != http.StatusOK {
			t.Fatalf("decision: %d %v", code, d)
		}
		return d["hard_blockers"].([]any)
	}
	if b := blockers(); len(b) != 0 {
		t.Fatalf("with the database up: %v", b)
	}
	p.Stall()
	testwait.Until(t, "every call to be refused for the unconfirmed kill list", func() bool {
		b := blockers()
		return len(b) == 1 && b[0] == "kill_switch_unavailable"
	})
	testwait.Until(t, "the log to say why calls are refused", func() bool {
		return strings.Contains(logs.String(), "the kill switch list cannot be read")
	})
	p.Restore()
	testwait.Until(t, "calls to be decided again", func() bool { return len(blockers()) == 0 })
	testwait.Until(t, "the log to say the outage ended", func() bool {
		return strings.Contains(logs.String(), "the kill switch list is read again")
	})
}

// Kill switch flags that cannot work stop gated at start with a sentence.
func TestKillSwitchFlagErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--kill-switch", "maybe"}, "--kill-switch must be auto or off"},
		{[]string{"--kill-stale-after", "1s"}, "--kill-stale-after must be at least 4s"},
	} {
		err := run(context.Background(), append([]string{"gated", "serve", "--addr", freeAddr(t)}, c.args...), env(nil), nil, io.Discard, io.Discard)
		var ex exitError
		if !errors.As(err, &ex) || ex.code != exitUsage || !strings.Contains(ex.msg, c.want) {
			t.Errorf("%v: got %v, want a usage error naming %q", c.args, err, c.want)
		}
	}
}
