package testgated

import (
	"bufio"
	"net"
	"net/http"
	"testing"
)

// Faults injected for real between a caller and gated: a port nobody
// listens on, a peer that never answers, a broken proxy.

// ClosedAddr returns a loopback address nobody listens on.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// SilentAddr returns a loopback address that accepts connections and never
// answers, until the test ends.
func SilentAddr(t testing.TB) string {
	t.Helper()
	ln := listen(t)
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	return ln.Addr().String()
}

// BrokenProxy returns a loopback address that reads each request and
// answers the raw bytes, then closes: a faulty intermediary, not gated.
func BrokenProxy(t testing.TB, raw string) string {
	t.Helper()
	ln := listen(t)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
					_, _ = c.Write([]byte(raw))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// listen opens a loopback listener closed when the test ends.
func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}
