package main

import (
	"net/http"
	"net/netip"
	"strings"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/console"
	"github.com/gatedhq/gated/internal/kill/watch"
	"github.com/gatedhq/gated/internal/server"
	"github.com/gatedhq/gated/internal/sources"
)

// console builds the web console served at /ui/ (docs/approvals.md,
// Console): approvals, decisions, the catalog and the policy, kill switches, for whoever
// signs in with a token whose scopes allow them. parseServe has checked
// the key's length.
func (c *serveConfig) console(tokens *auth.Tokens, proxies []netip.Prefix, apv server.Approvals, ks *watch.Switch, store audit.Store,
	src *sources.Sources, cand *candidateRun, stopping <-chan struct{}, log *zap.Logger) (http.Handler, error) {
	opt := console.Options{
		Catalog: src.CatalogSummary(), Policy: src.PolicySummary(), Key: []byte(c.consoleKey),
		// Behind a TLS-terminating proxy the request is plain HTTP; the
		// public URL says the browser's side is not.
		SecureCookies: strings.HasPrefix(c.approvals.publicURL, "https://"),
		FailureLimit:  authFailureLimit(c.authFailures), ClientIP: server.ClientIP(proxies),
		Stopping: stopping, Version: gatedVersion(), Logger: log.Named("console"),
	}
	// An interface holding a nil pointer is not nil: set only what is there.
	if tokens != nil {
		opt.Tokens = tokens
	}
	if apv != nil {
		opt.Approvals = apv
	}
	if store != nil {
		opt.Decisions = store
	}
	if ks != nil {
		opt.Kills = ks
	}
	if cand != nil {
		opt.Candidate = cand.Candidate
		if cand.store != nil {
			opt.Disagreements = cand.store
		}
	}
	if tokens != nil && c.consoleKey == "" {
		log.Info("no --console-key: console sessions are signed with a random key, so they end when gated restarts and hold on this replica only")
	}
	return console.New(opt)
}
