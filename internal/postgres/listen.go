package postgres

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The timing every listener shares: reconnect backoff, and how long
// closing a connection, or a heartbeat's ping, may take.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 2 * time.Second
	pingWithin = 5 * time.Second
)

// Listener says what Listen does on each connection it opens. Only Conn
// and Channel are required.
type Listener struct {
	// Conn configures the listener's own connection (see DB.ConnConfig):
	// it is held for as long as Listen runs, and a pool connection held
	// so would shrink the pool and could be closed by its health checks.
	Conn    *pgx.ConnConfig
	Channel string
	// Heartbeat is how long a session waits for a notification before it
	// calls Idle: a peer that vanished without closing the connection
	// sends no error, so a quiet connection must be checked.
	Heartbeat time.Duration
	// Up is called once the connection listens: what was notified while
	// it did not was lost. An error ends the session.
	Up func(ctx context.Context, conn *pgx.Conn) error
	// Notify is called with each notification; an error ends the session.
	Notify func(ctx context.Context, conn *pgx.Conn, n *pgconn.Notification) error
	// Idle is called when a heartbeat passed without a notification; an
	// error ends the session. Without it the connection is pinged.
	Idle func(ctx context.Context, conn *pgx.Conn) error
	// Down is called when a session whose Up succeeded ends.
	Down func()
	// Failed hears why a session ended, unless ctx had ended.
	Failed func(error)
}

// Listen runs sessions of l until ctx ends: each connects, listens on
// l.Channel and dispatches notifications until something fails; then it
// reconnects after a jittered backoff, reset by every session whose Up
// succeeded.
func Listen(ctx context.Context, l Listener) {
	backoff := minBackoff
	for {
		up, err := l.session(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil && l.Failed != nil {
			l.Failed(err)
		}
		if up {
			backoff = minBackoff
		}
		// Jitter spreads the replicas that lost the database together.
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff/2 + rand.N(backoff/2+1)):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// session connects, listens and dispatches until the connection fails or
// ctx ends. It reports whether Up succeeded, and why it ended.
func (l Listener) session(ctx context.Context) (up bool, err error) {
	conn, err := pgx.ConnectConfig(ctx, l.Conn)
	if err != nil {
		return false, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(l.Heartbeat, pingWithin))
		defer cancel()
		conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{l.Channel}.Sanitize()); err != nil {
		return false, err
	}
	if l.Up != nil {
		if err := l.Up(ctx, conn); err != nil {
			return false, err
		}
	}
	if l.Down != nil {
		defer l.Down()
	}
	for {
		wctx, cancel := context.WithTimeout(ctx, l.Heartbeat)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return true, nil
		case err == nil:
			if l.Notify != nil {
				err = l.Notify(ctx, conn, n)
			}
		case errors.Is(err, context.DeadlineExceeded) && !conn.IsClosed():
			err = l.idle(ctx, conn)
		}
		if err != nil {
			return true, err
		}
	}
}

// idle is Idle, or a ping answered within pingWithin.
func (l Listener) idle(ctx context.Context, conn *pgx.Conn) error {
	if l.Idle != nil {
		return l.Idle(ctx, conn)
	}
	pctx, cancel := context.WithTimeout(ctx, pingWithin)
	defer cancel()
	return conn.Ping(pctx)
}
