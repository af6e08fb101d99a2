// Package service is the approval store as every part of gated uses it —
// the decision path, the HTTP API, the console — with what runs around it:
// the webhook told of each creation and decision, the sweep that expires
// and purges approvals, and the metrics counting every outcome.
//
// It is not internal/approval itself: the store it wraps,
// internal/approval/postgres, imports that package.
package service

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/approval"
	approvalpg "github.com/gatedhq/gated/internal/approval/postgres"
	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/postgres"
)

// Config is what a Service needs besides the database.
type Config struct {
	// Webhook is the URL approval events are POSTed to, signed with
	// WebhookSecret; "" sends none.
	Webhook       string
	WebhookSecret []byte
	// Retention is how long approvals are kept past their creation (gated
	// passes the audit retention); 0 keeps them.
	Retention time.Duration
}

// Service is the approval store with the webhook and the metrics around
// it: each creation and decision is announced, and every outcome counted.
type Service struct {
	*approvalpg.Store
	notifier *approval.Notifier // nil without a webhook
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

// Open opens the approval store on db and starts its sweep. The pool
// connects on first use, so an unreachable database does not stop gated;
// the migrations create the approvals table. An error is the webhook's
// configuration refused, as approval.NewNotifier words it.
func Open(ctx context.Context, db *postgres.DB, cfg Config, m *metrics.Metrics, log *zap.Logger) (*Service, error) {
	store := approvalpg.New(db)
	s := &Service{Store: store, m: m, log: log}
	if cfg.Webhook != "" {
		var err error
		s.notifier, err = approval.NewNotifier(approval.NotifierConfig{
			URL: cfg.Webhook, Secret: cfg.WebhookSecret,
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
			return nil, err
		}
	}
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stop = stop
	s.wg.Go(func() { s.sweepLoop(sctx, cfg.Retention) })
	return s, nil
}

// Close stops the sweep, delivers what the webhook still has queued
// (until ctx ends) and closes the store.
func (s *Service) Close(ctx context.Context) {
	s.stop()
	s.wg.Wait()
	if s.notifier != nil {
		if err := s.notifier.Close(ctx); err != nil {
			s.log.Warn("approval webhook events left undelivered at shutdown", zap.Error(err))
		}
	}
	s.Store.Close()
}

func (s *Service) announce(t approval.EventType, ap *approval.Approval) {
	if s.notifier != nil {
		s.notifier.Notify(approval.NewEvent(t, *ap)) // never waits
	}
}

// failed counts and logs a store failure; a refusal by the approval rules
// is an answer, not a failure.
func (s *Service) failed(op string, err error) {
	if _, refused := errors.AsType[*approval.Error](err); refused || err == nil {
		return
	}
	s.m.ApprovalError(op)
	s.log.Warn("approval store operation failed", zap.String("operation", op), zap.Error(err))
}

// Create stores an ask's approval and announces it.
func (s *Service) Create(ctx context.Context, ap *approval.Approval) error {
	if err := s.Store.Create(ctx, ap); err != nil {
		s.failed(metrics.ApprovalOpCreate, err)
		return err
	}
	s.announce(approval.EventRequested, ap)
	return nil
}

// Get reads an approval.
func (s *Service) Get(ctx context.Context, id string) (*approval.Approval, error) {
	ap, err := s.Store.Get(ctx, id)
	s.failed(metrics.ApprovalOpRead, err)
	return ap, err
}

// FindOpen finds a call's open approval by its digest.
func (s *Service) FindOpen(ctx context.Context, digest string, requester approval.Identity, now time.Time) (*approval.Approval, error) {
	ap, err := s.Store.FindOpen(ctx, digest, requester, now)
	s.failed(metrics.ApprovalOpRead, err)
	return ap, err
}

// Decide approves or denies, counts the outcome and announces it.
func (s *Service) Decide(ctx context.Context, id string, approver approval.Identity, approve bool, reason string, now time.Time) (*approval.Approval, error) {
	ap, err := s.Store.Decide(ctx, id, approver, approve, reason, now)
	if err != nil {
		s.failed(metrics.ApprovalOpDecide, err)
		return nil, err
	}
	outcome := metrics.ApprovalDenied
	if approve {
		outcome = metrics.ApprovalApproved
	}
	s.m.ApprovalDecided(outcome, 1, ap.DecidedAt.Sub(ap.CreatedAt))
	s.announce(approval.EventDecided, ap)
	return ap, nil
}

// Consume spends an approval with the spending decision's record.
func (s *Service) Consume(ctx context.Context, id, digest string, requester approval.Identity, now time.Time, rec *audit.Record) (*approval.Approval, error) {
	ap, err := s.Store.Consume(ctx, id, digest, requester, now, rec)
	if err != nil {
		s.failed(metrics.ApprovalOpConsume, err)
		return nil, err
	}
	s.m.ApprovalDecided(metrics.ApprovalUsed, 1, 0)
	return ap, nil
}

// sweepLoop marks due approvals expired, purges those past the
// retention and refreshes the pending gauge: at once, then every
// sweepInterval until ctx ends. Every replica sweeps; the updates are
// idempotent.
func (s *Service) sweepLoop(ctx context.Context, retention time.Duration) {
	t := time.NewTicker(sweepInterval)
	defer t.Stop()
	for {
		s.sweep(ctx, retention)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *Service) sweep(ctx context.Context, retention time.Duration) {
	now := time.Now()
	if n, err := s.ExpireDue(ctx, now); err != nil {
		s.failed(metrics.ApprovalOpExpire, err)
	} else if n > 0 {
		s.m.ApprovalDecided(metrics.ApprovalExpired, n, 0)
	}
	if retention > 0 {
		if _, err := s.Purge(ctx, now.Add(-retention)); err != nil {
			s.failed(metrics.ApprovalOpPurge, err)
		}
	}
	if n, err := s.countPending(ctx); err == nil {
		s.m.ApprovalsPending(n)
	}
}

// countPending counts pending approvals a page at a time, up to
// pendingCountPages pages.
func (s *Service) countPending(ctx context.Context) (int, error) {
	n, cursor := 0, ""
	for range pendingCountPages {
		page, next, err := s.List(ctx, approval.StatusPending, approvalpg.MaxLimit, cursor)
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
