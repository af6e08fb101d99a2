// Package audittest holds what the audit tests share: the real faults they
// inject between gated and PostgreSQL (a TCP proxy that can refuse
// connections, stall them, or forward a COMMIT and lose the server's answer
// to it) and the records they store.
package audittest

import (
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// CommitFault is what the proxy does to the next COMMIT a client sends.
type CommitFault int

const (
	// LoseAck forwards the COMMIT, lets the server finish it, and then
	// closes the client's connection without its answer: the commit
	// happened and the client cannot know.
	LoseAck CommitFault = iota + 1
	// LoseAckThenRefuse is LoseAck, and the proxy refuses every connection
	// from then on (until Restore): the client cannot find out either.
	LoseAckThenRefuse
	// Drop closes both sides instead of forwarding the COMMIT: the
	// transaction rolls back and the client cannot know that either.
	Drop
)

// Proxy is a TCP proxy in front of PostgreSQL that speaks just enough of
// the wire protocol to find a COMMIT.
type Proxy struct {
	ln     net.Listener
	target string
	down   atomic.Bool
	fault  atomic.Int32 // armed CommitFault, taken by the first COMMIT
	fired  chan CommitFault

	mu     sync.Mutex
	conns  map[net.Conn]bool
	paused bool
	resume chan struct{}
}

// NewProxy listens on a loopback port and forwards to target (host:port).
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]bool{}, fired: make(chan CommitFault, 16)}
	t.Cleanup(func() { ln.Close(); p.Restore(); p.Cut() })
	go p.serve()
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// URL is dbURL with its host pointed at the proxy.
func (p *Proxy) URL(t testing.TB, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = p.Addr()
	return u.String()
}

// Cut closes every open connection and refuses new ones until Restore.
func (p *Proxy) Cut() {
	p.down.Store(true)
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Stall keeps connections open but forwards nothing until Restore: a
// database that stopped answering.
func (p *Proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.paused {
		p.paused, p.resume = true, make(chan struct{})
	}
}

// Restore accepts and forwards again.
func (p *Proxy) Restore() {
	p.down.Store(false)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused {
		p.paused = false
		close(p.resume)
	}
}

// Arm applies f to the next COMMIT of a transaction that COPYs rows (an
// audit batch; not partition maintenance or a migration).
func (p *Proxy) Arm(f CommitFault) { p.fault.Store(int32(f)) }

// Fired receives each fault as it is applied.
func (p *Proxy) Fired() <-chan CommitFault { return p.fired }

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.down.Load() {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.track(c, s)
		l := &link{p: p, client: c, server: s}
		go l.clientToServer()
		go l.serverToClient()
	}
}

func (p *Proxy) track(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		p.conns[c] = true
	}
}

// wait blocks while the proxy is stalled.
func (p *Proxy) wait() {
	p.mu.Lock()
	paused, resume := p.paused, p.resume
	p.mu.Unlock()
	if paused {
		<-resume
	}
}

// link is one proxied connection.
type link struct {
	p              *Proxy
	client, server net.Conn
	swallow        atomic.Bool // the server's answers no longer reach the client
	fault          CommitFault // set before swallow
	copied         bool        // the open transaction sent COPY data (clientToServer only)
}

func (l *link) close() { l.client.Close(); l.server.Close() }

// Frontend protocol codes sent before the startup message, without a type byte.
const (
	sslRequest    = 80877103
	gssencRequest = 80877104
)

func (l *link) clientToServer() {
	defer func() {
		if !l.swallow.Load() { // else serverToClient ends the link once the COMMIT is done
			l.close()
		}
	}()
	// Untyped messages first: SSL/GSS requests, then the startup message.
	for {
		msg, err := readUntyped(l.client)
		if err != nil {
			return
		}
		l.p.wait()
		if _, err := l.server.Write(msg); err != nil {
			return
		}
		if code := binary.BigEndian.Uint32(msg[4:8]); code != sslRequest && code != gssencRequest {
			break
		}
	}
	for {
		msg, err := readTyped(l.client)
		if err != nil {
			return
		}
		l.p.wait()
		switch {
		case msg[0] == 'd': // CopyData: this transaction writes a batch
			l.copied = true
		case msg[0] == 'Q' && isCommit(msg[5:]) && l.copied:
			if f := CommitFault(l.p.fault.Swap(0)); f != 0 {
				l.commitFault(f, msg)
				return
			}
			l.copied = false
		case msg[0] == 'Q' && isRollback(msg[5:]):
			l.copied = false
		}
		if _, err := l.server.Write(msg); err != nil {
			return
		}
	}
}

func (l *link) commitFault(f CommitFault, commit []byte) {
	if f == Drop {
		l.close()
		l.p.fired <- f
		return
	}
	l.fault = f
	l.swallow.Store(true)
	if _, err := l.server.Write(commit); err != nil {
		l.close()
		l.p.fired <- f
	}
}

func (l *link) serverToClient() {
	defer l.close()
	r := l.server
	first := true
	for {
		var msg []byte
		var err error
		if first {
			// The answer to an SSL request is one byte ('N' here: tests run
			// without TLS); after it the server speaks typed messages.
			first = false
			b := make([]byte, 1)
			if _, err = io.ReadFull(r, b); err != nil {
				return
			}
			if b[0] == 'N' || b[0] == 'S' || b[0] == 'G' {
				msg = b
			} else if msg, err = readBody(r, b[0]); err != nil {
				return
			}
		} else if msg, err = readTyped(r); err != nil {
			return
		}
		if l.swallow.Load() {
			if msg[0] == 'Z' { // ReadyForQuery: the COMMIT is done, and its answer goes nowhere
				if l.fault == LoseAckThenRefuse {
					l.p.down.Store(true)
				}
				l.close()
				l.p.fired <- l.fault
				return
			}
			continue
		}
		l.p.wait()
		if _, err := l.client.Write(msg); err != nil {
			return
		}
	}
}

func isCommit(body []byte) bool { return isQuery(body, "commit") }

func isRollback(body []byte) bool { return isQuery(body, "rollback") }

func isQuery(body []byte, q string) bool {
	return strings.EqualFold(strings.TrimSpace(strings.TrimRight(string(body), "\x00; \n\t")), q)
}

func readUntyped(r io.Reader) ([]byte, error) {
	hdr := make([]byte, 4)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr)
	if n < 8 || n > 1<<20 {
		return nil, io.ErrUnexpectedEOF
	}
	msg := make([]byte, n)
	copy(msg, hdr)
	_, err := io.ReadFull(r, msg[4:])
	return msg, err
}

func readTyped(r io.Reader) ([]byte, error) {
	t := make([]byte, 1)
	if _, err := io.ReadFull(r, t); err != nil {
		return nil, err
	}
	return readBody(r, t[0])
}

func readBody(r io.Reader, typ byte) ([]byte, error) {
	hdr := make([]byte, 4)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr)
	if n < 4 || n > 1<<30 {
		return nil, io.ErrUnexpectedEOF
	}
	msg := make([]byte, 1+n)
	msg[0] = typ
	copy(msg[1:], hdr)
	_, err := io.ReadFull(r, msg[5:])
	return msg, err
}
