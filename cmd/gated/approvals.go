package main

import (
	"context"
	"errors"
	"flag"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/approval"
	approvalpg "github.com/gatedhq/gated/internal/approval/postgres"
	"github.com/gatedhq/gated/internal/audit"
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

// approvals is the approval store as every part of gated uses it — the
// decision path, the HTTP API — with the webhook and the metrics around
// it: each creation and decision is announced, and every outcome counted.
type approvals struct {
	*approvalpg.Store
	notifier *approval.Notifier // nil without --approval-webhook
	m        *metrics.Metrics
	log      *zap.Logger

	stop context.CancelFunc
	wg   sync.WaitGroup
}

// sweepInterval is how often expired approvals are marked and old ones
// purged; pendingCountPages bounds the pages the pending gauge reads.
const (
	sweepInterval     = 30 * time.Second
	pendingCountPages = 50 // at most 10,000 approvals counted
)

// openApprovals opens the approval store on db and starts its sweep. The
// pool connects on first use, so an unreachable database does not stop
// gated; the audit recorder applies the migration that creates the
// approvals table.
func openApprovals(ctx context.Context, f *approvalFlags, db *pgdb.DB, retention time.Duration, m *metrics.Metrics, log *zap.Logger) (*approvals, error) {
	store := approvalpg.New(db)
	a := &approvals{Store: store, m: m, log: log}
	if f.webhook != "" {
		var err error
		a.notifier, err = approval.NewNotifier(approval.NotifierConfig{
			URL: f.webhook, Secret: []byte(f.webhookSecret),
			Hooks: approval.Hooks{
				Delivered: func(approval.Event, int) { m.WebhookEvent(metrics.WebhookDelivered) },
				Failed: func(ev approval.Event, err error) {
					m.WebhookEvent(metrics.WebhookFailed)
					log.Warn("approval webhook event given up", zap.String("event", ev.ID), zap.Error(err))
				},
				Dropped: func(ev approval.Event) {
					m.WebhookEvent(metrics.WebhookDropped)
					log.Warn("approval webhook event dropped: the queue is full", zap.String("event", ev.ID))
				},
			},
		})
		if err != nil {
			store.Close()
			return nil, usageError("--approval-webhook: %v", err)
		}
	}
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	a.stop = stop
	a.wg.Go(func() { a.sweepLoop(sctx, retention) })
	return a, nil
}

// close stops the sweep, delivers what the webhook still has queued
// (until ctx ends) and closes the store.
func (a *approvals) close(ctx context.Context) {
	a.stop()
	a.wg.Wait()
	if a.notifier != nil {
		if err := a.notifier.Close(ctx); err != nil {
			a.log.Warn("approval webhook events left undelivered at shutdown", zap.Error(err))
		}
	}
	a.Store.Close()
}

func (a *approvals) announce(t approval.EventType, ap *approval.Approval) {
	if a.notifier != nil {
		a.notifier.Notify(approval.NewEvent(t, *ap)) // never waits
	}
}

// failed counts and logs a store failure; a refusal by the approval rules
// is an answer, not a failure.
func (a *approvals) failed(op string, err error) {
	if _, refused := errors.AsType[*approval.Error](err); refused || err == nil {
		return
	}
	a.m.ApprovalError(op)
	a.log.Warn("approval store operation failed", zap.String("operation", op), zap.Error(err))
}

// Create stores an ask's approval and announces it.
func (a *approvals) Create(ctx context.Context, ap *approval.Approval) error {
	if err := a.Store.Create(ctx, ap); err != nil {
		a.failed(metrics.ApprovalOpCreate, err)
		return err
	}
	a.announce(approval.EventRequested, ap)
	return nil
}

// Get reads an approval.
func (a *approvals) Get(ctx context.Context, id string) (*approval.Approval, error) {
	ap, err := a.Store.Get(ctx, id)
	a.failed(metrics.ApprovalOpRead, err)
	return ap, err
}

// Decide approves or denies, counts the outcome and announces it.
func (a *approvals) Decide(ctx context.Context, id string, approver approval.Identity, approve bool, reason string, now time.Time) (*approval.Approval, error) {
	ap, err := a.Store.Decide(ctx, id, approver, approve, reason, now)
	if err != nil {
		a.failed(metrics.ApprovalOpDecide, err)
		return nil, err
	}
	outcome := metrics.ApprovalDenied
	if approve {
		outcome = metrics.ApprovalApproved
	}
	a.m.ApprovalDecided(outcome, 1, ap.DecidedAt.Sub(ap.CreatedAt))
	a.announce(approval.EventDecided, ap)
	return ap, nil
}

// Consume spends an approval with the spending decision's record.
func (a *approvals) Consume(ctx context.Context, id, digest string, requester approval.Identity, now time.Time, rec *audit.Record) (*approval.Approval, error) {
	ap, err := a.Store.Consume(ctx, id, digest, requester, now, rec)
	if err != nil {
		a.failed(metrics.ApprovalOpConsume, err)
		return nil, err
	}
	a.m.ApprovalDecided(metrics.ApprovalUsed, 1, 0)
	return ap, nil
}

// sweepLoop marks due approvals expired, purges those past the audit
// retention and refreshes the pending gauge: at once, then every
// sweepInterval until ctx ends. Every replica sweeps; the updates are
// idempotent.
func (a *approvals) sweepLoop(ctx context.Context, retention time.Duration) {
	t := time.NewTicker(sweepInterval)
	defer t.Stop()
	for {
		a.sweep(ctx, retention)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (a *approvals) sweep(ctx context.Context, retention time.Duration) {
	now := time.Now()
	if n, err := a.ExpireDue(ctx, now); err != nil {
		a.failed(metrics.ApprovalOpExpire, err)
	} else if n > 0 {
		a.m.ApprovalDecided(metrics.ApprovalExpired, n, 0)
	}
	if retention > 0 {
		if _, err := a.Purge(ctx, now.Add(-retention)); err != nil {
			a.failed(metrics.ApprovalOpPurge, err)
		}
	}
	if n, err := a.countPending(ctx); err == nil {
		a.m.ApprovalsPending(n)
	}
}

// countPending counts pending approvals a page at a time, up to
// pendingCountPages pages.
func (a *approvals) countPending(ctx context.Context) (int, error) {
	n, cursor := 0, ""
	for range pendingCountPages {
		page, next, err := a.List(ctx, approval.StatusPending, approvalpg.MaxLimit, cursor)
		if err != nil {
			return 0, err
		}
		n += len(page)
		if next == "" {
			break
		}
		cursor = next
	}
	return n, nil
}

// publicBase is --public-url without a trailing slash.
func (a *approvalFlags) publicBase() string { return strings.TrimRight(a.publicURL, "/") }
