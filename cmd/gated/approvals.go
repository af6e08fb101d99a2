package main

import (
	"context"
	"flag"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/approval/service"
	"github.com/gatedhq/gated/internal/metrics"
	pgdb "github.com/gatedhq/gated/internal/postgres"
)

// approvalFlags configure approvals: asks a person answers.
type approvalFlags struct {
	mode          string
	publicURL     string
	webhook       string
	webhookSecret string
}

func (a *approvalFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.mode, "approvals", "auto", "auto: approvals are on when --database-url and --tokens are both set; off: never")
	fs.StringVar(&a.publicURL, "public-url", "", "the URL people reach gated at (https://gated.example.com), for the links in approvals and webhook events")
	fs.StringVar(&a.webhook, "approval-webhook", "", "POST approval.requested and approval.decided events, signed, to this URL")
	fs.StringVar(&a.webhookSecret, "approval-webhook-secret", "", "the key that signs approval webhook events (at least 32 bytes; prefer GATED_APPROVAL_WEBHOOK_SECRET)")
}

// minWebhookSecret is the shortest webhook signing key accepted.
const minWebhookSecret = 32

// check validates the flags; on reports whether approvals will be on,
// given whether gated has a database and tokens.
func (a *approvalFlags) check(database, tokens bool) (on bool, err error) {
	switch a.mode {
	case "auto":
		on = database && tokens
	case "off":
	default:
		return false, usageError("--approvals must be auto or off, not %q", a.mode)
	}
	if a.publicURL != "" {
		u, perr := url.Parse(a.publicURL)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return false, usageError("--public-url must be an absolute http or https URL without a query, such as https://gated.example.com")
		}
		// Its path is also a route (AuthZEN discovery), where these would
		// be read as a pattern.
		if strings.ContainsAny(u.Path, "{}*") {
			return false, usageError("--public-url must not have {, } or * in its path")
		}
	}
	if a.webhook == "" {
		return on, nil
	}
	switch {
	case !on:
		return false, usageError("--approval-webhook needs approvals, and approvals need --database-url and --tokens (and --approvals auto)")
	case len(a.webhookSecret) < minWebhookSecret:
		return false, usageError("--approval-webhook needs a signing secret of at least %d bytes in --approval-webhook-secret (or GATED_APPROVAL_WEBHOOK_SECRET)", minWebhookSecret)
	}
	// The URL is not quoted: webhook URLs often embed a token.
	if u, perr := url.Parse(a.webhook); perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false, usageError("--approval-webhook must be an absolute http or https URL")
	}
	return on, nil
}

// openApprovals opens the approval service on db, as the flags configure
// it; retention is the audit's.
func openApprovals(ctx context.Context, f *approvalFlags, db *pgdb.DB, retention time.Duration, m *metrics.Metrics, log *zap.Logger) (*service.Service, error) {
	s, err := service.Open(ctx, db, service.Config{Webhook: f.webhook, WebhookSecret: []byte(f.webhookSecret), Retention: retention}, m, log)
	if err != nil {
		return nil, usageError("--approval-webhook: %v", err)
	}
	return s, nil
}

// publicBase is --public-url without a trailing slash.
func (a *approvalFlags) publicBase() string { return strings.TrimRight(a.publicURL, "/") }
