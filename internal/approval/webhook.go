package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/sethvargo/go-retry"
)

// Hooks report what became of events, for metrics and logs. Each may be
// nil. Dropped runs on the goroutine that called Notify, so it must not
// block; the others run on the notifier's worker.
type Hooks struct {
	// Delivered: the receiver answered 2xx, after attempts tries.
	Delivered func(ev Event, attempts int)
	// Failed: the event was given up, after a permanent failure (a 3xx or
	// 4xx other than 429), the last attempt, or Close's deadline.
	Failed func(ev Event, err error)
	// Dropped: the event was not queued, because the queue was full or the
	// notifier closed.
	Dropped func(ev Event)
}

// NotifierConfig configures a Notifier. Zero values take the defaults.
type NotifierConfig struct {
	URL    string // absolute http or https URL
	Secret []byte // signs every request (SignatureHeader); required
	// Client sends the requests; the default follows no redirects, since a
	// redirected POST would arrive elsewhere or as a GET.
	Client *http.Client
	// QueueSize bounds the events waiting to be sent (default 256).
	QueueSize int
	// Attempts bounds the tries per event (default 5).
	Attempts int
	// AttemptTimeout bounds each try (default 10s).
	AttemptTimeout time.Duration
	// Backoff is the wait before the first retry; it doubles per retry,
	// with 10% jitter, up to a minute (default 1s).
	Backoff time.Duration
	Hooks   Hooks
}

const maxBackoff = time.Minute

// Notifier delivers events to the approval webhook from one worker
// goroutine. Notify never blocks the decision path: it queues the event in
// memory, or drops it (Hooks.Dropped) when the queue is full. Delivery is
// best effort — queued events die with the process — because the approval
// itself is stored and can always be read back; the webhook only saves a
// person from polling.
type Notifier struct {
	cfg    NotifierConfig
	hooks  Hooks
	queue  chan Event
	ctx    context.Context // cancelled when Close gives up waiting
	cancel context.CancelCauseFunc

	mu     sync.RWMutex
	closed bool
	stop   chan struct{} // closed by Close
	done   chan struct{} // closed when the worker returns
}

// NewNotifier validates cfg and starts the worker; call Close to stop it.
func NewNotifier(cfg NotifierConfig) (*Notifier, error) {
	u, err := url.Parse(cfg.URL)
	// The URL is not quoted in errors: webhook URLs often embed a token.
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("the approval webhook URL must be an absolute http or https URL")
	}
	if len(cfg.Secret) == 0 {
		return nil, errors.New("the approval webhook needs a secret to sign its events")
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	cfg.QueueSize = positive(cfg.QueueSize, 256)
	cfg.Attempts = positive(cfg.Attempts, 5)
	cfg.AttemptTimeout = positive(cfg.AttemptTimeout, 10*time.Second)
	cfg.Backoff = positive(cfg.Backoff, time.Second)
	ctx, cancel := context.WithCancelCause(context.Background())
	n := &Notifier{
		cfg:    cfg,
		hooks:  withNoops(cfg.Hooks),
		queue:  make(chan Event, cfg.QueueSize),
		ctx:    ctx,
		cancel: cancel,
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	go n.run()
	return n, nil
}

func positive[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

func withNoops(h Hooks) Hooks {
	if h.Delivered == nil {
		h.Delivered = func(Event, int) {}
	}
	if h.Failed == nil {
		h.Failed = func(Event, error) {}
	}
	if h.Dropped == nil {
		h.Dropped = func(Event) {}
	}
	return h
}

// Notify queues ev for delivery, or drops it (Hooks.Dropped) when the queue
// is full or the notifier is closed. It never waits.
func (n *Notifier) Notify(ev Event) {
	if !n.enqueue(ev) {
		n.hooks.Dropped(ev)
	}
}

func (n *Notifier) enqueue(ev Event) bool {
	n.mu.RLock()
	defer n.mu.RUnlock()
	if n.closed {
		return false
	}
	select {
	case n.queue <- ev:
		return true
	default:
		return false
	}
}

// Close stops taking events and waits for the queued ones to be delivered
// or given up. When ctx ends first, the attempt in flight is cancelled, the
// rest are given up (Hooks.Failed), and Close returns ctx's error once the
// worker has stopped. Calling it again is harmless.
func (n *Notifier) Close(ctx context.Context) error {
	n.mu.Lock()
	if !n.closed {
		n.closed = true
		close(n.stop)
	}
	n.mu.Unlock()
	select {
	case <-n.done:
	case <-ctx.Done():
		select {
		case <-n.done: // finished just as ctx ended
		default:
			n.cancel(errors.New("the notifier closed before the event was delivered"))
			<-n.done
			return ctx.Err()
		}
	}
	n.cancel(nil)
	return nil
}

// run delivers events until Close, then delivers what is still queued.
func (n *Notifier) run() {
	defer close(n.done)
	for {
		select {
		case ev := <-n.queue:
			n.deliver(ev)
		case <-n.stop:
			for {
				select {
				case ev := <-n.queue:
					n.deliver(ev)
				default:
					return
				}
			}
		}
	}
}

// deliver posts ev, retrying network errors, 429 and 5xx with exponential
// backoff until it is accepted or the attempts run out.
func (n *Notifier) deliver(ev Event) {
	body, err := json.Marshal(ev)
	if err != nil {
		n.hooks.Failed(ev, fmt.Errorf("the event cannot be encoded: %w", err))
		return
	}
	backoff := retry.WithMaxRetries(uint64(n.cfg.Attempts-1),
		retry.WithCappedDuration(maxBackoff,
			retry.WithJitterPercent(10, retry.NewExponential(n.cfg.Backoff))))
	attempts := 0
	err = retry.Do(n.ctx, backoff, func(ctx context.Context) error {
		attempts++
		return n.post(ctx, body)
	})
	if err != nil {
		n.hooks.Failed(ev, err)
		return
	}
	n.hooks.Delivered(ev, attempts)
}

// post makes one attempt, signed at the time it is sent.
func (n *Notifier) post(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return errors.New("the approval webhook request cannot be built")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, Sign(n.cfg.Secret, time.Now(), body))
	resp, err := n.cfg.Client.Do(req)
	if err != nil {
		// Only the cause: *url.Error quotes the URL, which may hold a token.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return retry.RetryableError(fmt.Errorf("the approval webhook could not be reached: %w", err))
	}
	// Drained (a little) so the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return retry.RetryableError(fmt.Errorf("the approval webhook answered %s", resp.Status))
	default:
		return fmt.Errorf("the approval webhook answered %s, which is not retried", resp.Status)
	}
}
