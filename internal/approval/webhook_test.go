package approval

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// outcome is what the hooks reported for one event.
type outcome struct {
	ev       Event
	attempts int
	err      error
	dropped  bool
}

// recording returns hooks that send every outcome to the returned channel
// (buffered, so the worker never waits on the test).
func recording() (Hooks, chan outcome) {
	ch := make(chan outcome, 64)
	return Hooks{
		Delivered: func(ev Event, attempts int) { ch <- outcome{ev: ev, attempts: attempts} },
		Failed:    func(ev Event, err error) { ch <- outcome{ev: ev, err: err} },
		Dropped:   func(ev Event) { ch <- outcome{ev: ev, dropped: true} },
	}, ch
}

func next(t *testing.T, ch <-chan outcome) outcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(30 * time.Second): // guards against hanging only
		t.Fatal("no outcome reported")
		return outcome{}
	}
}

func notifier(t *testing.T, url string, hooks Hooks, change func(*NotifierConfig)) *Notifier {
	t.Helper()
	cfg := NotifierConfig{URL: url, Secret: secret, Backoff: time.Millisecond, Hooks: hooks}
	if change != nil {
		change(&cfg)
	}
	n, err := NewNotifier(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close(context.Background()) })
	return n
}

func event(id string) Event {
	a := *pending()
	a.ID = id
	a.Preview = json.RawMessage(`{"amount":12.5,"api_key":"[secret:sensitive-key len=19 fp=0a1b2c]"}`)
	return NewEvent(EventRequested, a)
}

// The receiver, a stand-in for a third party's endpoint, verifies what it
// gets with Verify and reads the event back.
func TestNotifierDeliversSignedEvents(t *testing.T) {
	received := make(chan Event, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := Verify(secret, r.Header.Get(SignatureHeader), body, time.Now(), DefaultTolerance); err != nil {
			t.Errorf("receiver: %v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" || r.Method != http.MethodPost {
			t.Errorf("receiver got %s with Content-Type %q", r.Method, ct)
		}
		var ev Event
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Errorf("receiver: %v", err)
		}
		received <- ev
	}))
	defer srv.Close()
	hooks, outcomes := recording()
	n := notifier(t, srv.URL, hooks, nil)

	n.Notify(event("ap-1"))
	if o := next(t, outcomes); o.err != nil || o.dropped || o.attempts != 1 {
		t.Fatalf("outcome %+v, want delivered at the first attempt", o)
	}
	ev := <-received
	if ev.ID != "approval.requested:ap-1" || ev.Type != EventRequested || ev.Approval.ID != "ap-1" || ev.Approval.ToolName != "payments.refund" {
		t.Errorf("received %+v", ev)
	}
	if string(ev.Approval.Preview) != `{"amount":12.5,"api_key":"[secret:sensitive-key len=19 fp=0a1b2c]"}` {
		t.Errorf("received preview %s", ev.Approval.Preview)
	}
}

// 503 and 429 are retried with the same body until the receiver takes it.
func TestNotifierRetries(t *testing.T) {
	var calls atomic.Int32
	bodies := make(chan string, 3)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		bodies <- string(body)
		switch calls.Add(1) {
		case 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	hooks, outcomes := recording()
	n := notifier(t, srv.URL, hooks, nil)

	n.Notify(event("ap-1"))
	if o := next(t, outcomes); o.err != nil || o.attempts != 3 {
		t.Fatalf("outcome %+v, want delivered at attempt 3", o)
	}
	if err := n.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c := calls.Load(); c != 3 {
		t.Fatalf("receiver called %d times, want 3", c)
	}
	if a, b, c := <-bodies, <-bodies, <-bodies; a != b || b != c {
		t.Error("retries sent different bodies")
	}
	select {
	case o := <-outcomes:
		t.Fatalf("a second outcome for one event: %+v", o)
	default:
	}
}

func TestNotifierGivesUp(t *testing.T) {
	for _, c := range []struct {
		name     string
		status   int
		attempts int32
	}{
		{"client error is not retried", http.StatusBadRequest, 1},
		{"redirect is not followed", http.StatusFound, 1},
		{"server error until the attempts run out", http.StatusBadGateway, 3},
	} {
		var calls, elsewhere atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/elsewhere" {
				elsewhere.Add(1)
				return
			}
			calls.Add(1)
			w.Header().Set("Location", "/elsewhere")
			w.WriteHeader(c.status)
		}))
		hooks, outcomes := recording()
		n := notifier(t, srv.URL+"/hook", hooks, func(cfg *NotifierConfig) { cfg.Attempts = 3 })
		n.Notify(event("ap-1"))
		o := next(t, outcomes)
		_ = n.Close(context.Background())
		srv.Close()
		if o.err == nil || o.dropped {
			t.Errorf("%s: outcome %+v, want failed", c.name, o)
		}
		if calls.Load() != c.attempts || elsewhere.Load() != 0 {
			t.Errorf("%s: %d attempts (%d redirected), want %d", c.name, calls.Load(), elsewhere.Load(), c.attempts)
		}
	}
}

// An unreachable receiver is retried, and the error names no URL: webhook
// URLs often carry a token.
func TestNotifierUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/hook?token=url-secret"
	srv.Close()
	hooks, outcomes := recording()
	n := notifier(t, url, hooks, func(cfg *NotifierConfig) { cfg.Attempts = 2 })
	n.Notify(event("ap-1"))
	o := next(t, outcomes)
	if o.err == nil {
		t.Fatalf("outcome %+v, want failed", o)
	}
	if strings.Contains(o.err.Error(), "url-secret") || strings.Contains(o.err.Error(), srv.URL) {
		t.Errorf("error names the URL: %v", o.err)
	}
}

// With the worker busy and the queue full, Notify drops instead of waiting.
func TestNotifierDropsWhenFull(t *testing.T) {
	entered := make(chan string, 2)
	release := make(chan struct{})
	unblock := sync.OnceFunc(func() { close(release) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev Event
		_ = json.NewDecoder(r.Body).Decode(&ev)
		entered <- ev.Approval.ID
		<-release
	}))
	defer srv.Close()
	defer unblock() // before srv.Close, which waits for the handler
	hooks, outcomes := recording()
	n := notifier(t, srv.URL, hooks, func(cfg *NotifierConfig) { cfg.QueueSize = 1 })

	n.Notify(event("ap-1"))
	if id := <-entered; id != "ap-1" {
		t.Fatalf("receiver got %s first", id)
	}
	n.Notify(event("ap-2")) // queued
	n.Notify(event("ap-3")) // dropped: returns although the worker is stuck
	if o := next(t, outcomes); !o.dropped || o.ev.Approval.ID != "ap-3" {
		t.Fatalf("outcome %+v, want ap-3 dropped", o)
	}
	unblock()
	if err := n.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ap-1", "ap-2"} {
		if o := next(t, outcomes); o.err != nil || o.dropped || o.ev.Approval.ID != want {
			t.Errorf("outcome %+v, want %s delivered", o, want)
		}
	}
}

// Close delivers what is queued; after it, events are dropped.
func TestNotifierCloseDrains(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls.Add(1) }))
	defer srv.Close()
	hooks, outcomes := recording()
	n := notifier(t, srv.URL, hooks, nil)
	for _, id := range []string{"ap-1", "ap-2", "ap-3", "ap-4", "ap-5"} {
		n.Notify(event(id))
	}
	if err := n.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c := calls.Load(); c != 5 {
		t.Fatalf("%d delivered before Close returned, want 5", c)
	}
	for range 5 {
		if o := next(t, outcomes); o.err != nil || o.dropped {
			t.Fatalf("outcome %+v", o)
		}
	}
	n.Notify(event("ap-6"))
	if o := next(t, outcomes); !o.dropped {
		t.Fatalf("after Close: outcome %+v, want dropped", o)
	}
	if err := n.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// When Close's context ends first, the attempt in flight is cancelled and
// the event given up.
func TestNotifierCloseDeadline(t *testing.T) {
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		// The body is read so the server notices the client hanging up.
		_, _ = io.Copy(io.Discard, r.Body)
		entered <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	hooks, outcomes := recording()
	n := notifier(t, srv.URL, hooks, nil)
	n.Notify(event("ap-1"))
	<-entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := n.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close = %v, want context.Canceled", err)
	}
	if o := next(t, outcomes); o.err == nil {
		t.Fatalf("outcome %+v, want failed", o)
	}
}

func TestNewNotifierValidates(t *testing.T) {
	for _, c := range []struct {
		url    string
		secret []byte
	}{
		{"", secret},
		{"hooks.example.com/x?token=url-secret", secret},
		{"ftp://hooks.example.com/x?token=url-secret", secret},
		{"https:///x?token=url-secret", secret},
		{"https://hooks.example.com/x?token=url-secret", nil},
	} {
		n, err := NewNotifier(NotifierConfig{URL: c.url, Secret: c.secret})
		if err == nil {
			_ = n.Close(context.Background())
			t.Errorf("URL %q, secret %q accepted", c.url, c.secret)
			continue
		}
		if strings.Contains(err.Error(), "url-secret") {
			t.Errorf("error quotes the URL: %v", err)
		}
	}
}

// Hooks are optional.
func TestNotifierWithoutHooks(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusBadRequest) // failed
		}
	}))
	defer srv.Close()
	n := notifier(t, srv.URL, Hooks{}, func(cfg *NotifierConfig) { cfg.QueueSize = 2 })
	for _, id := range []string{"ap-1", "ap-2", "ap-3"} { // ap-3 may be dropped
		n.Notify(event(id))
	}
	if err := n.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	n.Notify(event("ap-4")) // dropped: closed
	if calls.Load() < 2 {
		t.Fatalf("receiver called %d times, want at least 2", calls.Load())
	}
}

// An event that cannot be encoded (a preview that is not JSON) is given up
// without a request.
func TestNotifierUnencodableEvent(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls.Add(1) }))
	defer srv.Close()
	hooks, outcomes := recording()
	n := notifier(t, srv.URL, hooks, nil)
	ev := event("ap-1")
	ev.Approval.Preview = json.RawMessage(`{"cut`)
	n.Notify(ev)
	if o := next(t, outcomes); o.err == nil {
		t.Fatalf("outcome %+v, want failed", o)
	}
	if err := n.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 0 {
		t.Fatal("an unencodable event was sent")
	}
}
