package postgres

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gatedhq/gated/internal/approval"
	"github.com/gatedhq/gated/internal/postgres"
)

// channel is the NOTIFY channel the approvals table's trigger notifies,
// with the changed approval's id as payload.
const channel = "gated_approvals"

// listenerName is the listener connection's application_name (unless the
// database URL sets one), so an operator can tell it in pg_stat_activity.
const listenerName = "gated approvals listener"

// heartbeat is how long the listener waits for a notification before it
// checks that a quiet connection is still alive.
const heartbeat = 30 * time.Second

// Resync is what a subscription receives in place of ids it may have
// missed: the listener reconnected (notifications sent while it was away
// are lost), or the subscriber fell behind and ids were dropped. Whoever
// reads the subscription should re-read what it shows.
const Resync = ""

// listener holds one connection listening on channel and fans each
// notification out to the waiters of its approval and to every
// subscription. When the connection drops it reconnects with backoff,
// then wakes every waiter and resyncs every subscription, since what
// changed meanwhile was not notified to it.
type listener struct {
	cfg  *pgx.ConnConfig
	done chan struct{} // closed when run returns

	mu      sync.Mutex
	waiters map[string]map[chan struct{}]struct{}
	subs    map[*subscription]struct{}
	closed  bool
	// sessions counts the connections that got to LISTEN, up says the
	// current one still listens, and changed is closed and replaced at
	// every change of either (for tests, which wait for a reconnect).
	sessions int
	up       bool
	changed  chan struct{}
}

func newListener(cfg *pgx.ConnConfig) *listener {
	return &listener{
		cfg: cfg, done: make(chan struct{}),
		waiters: map[string]map[chan struct{}]struct{}{},
		subs:    map[*subscription]struct{}{},
		changed: make(chan struct{}),
	}
}

// run listens until ctx ends, reconnecting after every failure.
func (l *listener) run(ctx context.Context) {
	defer func() {
		l.mu.Lock()
		l.closed = true
		for sub := range l.subs {
			close(sub.ch)
			delete(l.subs, sub)
		}
		l.mu.Unlock()
		close(l.done)
	}()
	postgres.Listen(ctx, postgres.Listener{
		Conn: l.cfg, Channel: channel, Heartbeat: heartbeat,
		Up: func(context.Context, *pgx.Conn) error { l.setUp(true); return nil },
		Notify: func(_ context.Context, _ *pgx.Conn, n *pgconn.Notification) error {
			l.notify(n.Payload)
			return nil
		},
		Down: func() { l.setUp(false) },
	})
}

// setUp records that the listener is listening or no longer is. Coming up,
// it wakes every waiter and resyncs every subscription: whatever changed
// while it was down (or before it first connected) was not notified.
func (l *listener) setUp(up bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.up = up
	if up {
		l.sessions++
		for _, ws := range l.waiters {
			for w := range ws {
				wake(w)
			}
		}
		for sub := range l.subs {
			sub.offer(Resync)
		}
	}
	close(l.changed)
	l.changed = make(chan struct{})
}

// Listening waits until the Store's listener listens on gated_approvals
// and returns nil, or returns ctx's error if it ends first. A change
// committed before then reaches no Wait or Subscribe as itself: the
// listener's first connection wakes the waiters and resyncs the
// subscriptions instead. Start-up checks and tests that must see a change
// as its id use it.
func (s *Store) Listening(ctx context.Context) error {
	l := s.l
	for {
		l.mu.Lock()
		up, changed := l.up, l.changed
		l.mu.Unlock()
		if up {
			return nil
		}
		select {
		case <-changed:
		case <-l.done:
			return errors.New("the approval store is closed: its listener no longer listens")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// notify passes on the change of approval id.
func (l *listener) notify(id string) {
	if id == Resync {
		return // not an id: no row has an empty one
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for w := range l.waiters[id] {
		wake(w)
	}
	for sub := range l.subs {
		sub.offer(id)
	}
}

// wake signals w without blocking: one pending signal is as good as many,
// since the waiter re-reads the approval either way.
func wake(w chan struct{}) {
	select {
	case w <- struct{}{}:
	default:
	}
}

// watch registers a waiter for approval id; unwatch removes it.
func (l *listener) watch(id string) chan struct{} {
	w := make(chan struct{}, 1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.waiters[id] == nil {
		l.waiters[id] = map[chan struct{}]struct{}{}
	}
	l.waiters[id][w] = struct{}{}
	return w
}

func (l *listener) unwatch(id string, w chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.waiters[id], w)
	if len(l.waiters[id]) == 0 {
		delete(l.waiters, id)
	}
}

// subscription is one Subscribe's channel. lost says ids were dropped
// since it last received: a Resync is owed before the next id.
type subscription struct {
	ch   chan string
	lost bool // guarded by listener.mu
}

// subscriptionBuffer is how many ids a subscriber may fall behind before
// it is sent a Resync instead.
const subscriptionBuffer = 64

// offer sends id (or Resync) without blocking, under listener.mu. What does
// not fit is owed as one Resync, sent as soon as there is room again.
func (s *subscription) offer(id string) {
	if id == Resync {
		s.lost = true
	}
	if s.lost {
		select {
		case s.ch <- Resync:
			s.lost = false
		default:
			return
		}
		if id == Resync {
			return
		}
	}
	select {
	case s.ch <- id:
	default:
		s.lost = true
	}
}

// Subscribe returns a channel of the ids of approvals that changed (were
// created or updated), through any replica, until ctx ends or the Store
// closes; then it is closed. An id says the approval changed, not how,
// and may come more than once: re-read the approval for its state. A
// Resync ("") in place of an id means ids may have been missed — after the
// listener reconnected, or when the reader fell more than 64 ids behind —
// so re-read everything shown. It never blocks the listener.
func (s *Store) Subscribe(ctx context.Context) <-chan string {
	sub := &subscription{ch: make(chan string, subscriptionBuffer)}
	l := s.l
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		close(sub.ch)
		return sub.ch
	}
	l.subs[sub] = struct{}{}
	l.mu.Unlock()
	go func() {
		select {
		case <-ctx.Done():
		case <-l.done:
			return // run closed it
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if _, ok := l.subs[sub]; ok {
			delete(l.subs, sub)
			close(sub.ch)
		}
	}()
	return sub.ch
}

// Wait is the long poll: it returns approval id as soon as its status is
// not seen — at once if it is not already — or, when ctx ends or the Store
// closes first, the approval as last read, without an error. A change
// made through any replica wakes it (the listener); while the listener is
// reconnecting it re-reads as soon as it is back. approval.ErrNotFound for an
// unknown id; an error when the approval cannot be read.
func (s *Store) Wait(ctx context.Context, id string, seen approval.Status) (*approval.Approval, error) {
	if !validID(id) {
		return nil, approval.ErrNotFound
	}
	// Watch before reading: a change committed between the read and the
	// wait still wakes it.
	w := s.l.watch(id)
	defer s.l.unwatch(id, w)
	var last *approval.Approval
	for {
		a, err := s.Get(ctx, id)
		switch {
		case err == nil:
			last = a
		case last != nil && (ctx.Err() != nil || isDone(s.l.done)):
			return last, nil
		default:
			return nil, err
		}
		if a.Status != seen {
			return a, nil
		}
		if s.waiting != nil {
			s.waiting(id)
		}
		select {
		case <-w:
		case <-ctx.Done():
			return last, nil
		case <-s.l.done:
			return last, nil
		}
	}
}

func isDone(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
