package server

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestClientIP(t *testing.T) {
	t.Parallel()
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	tests := []struct {
		name   string
		remote string
		xff    []string
		want   string
	}{
		{"untrusted peer", "192.0.2.1:1234", nil, "192.0.2.1"},
		{"untrusted peer ignores XFF", "192.0.2.1:1234", []string{"198.51.100.7"}, "192.0.2.1"},
		{"trusted peer without XFF", "10.0.0.1:1234", nil, "10.0.0.1"},
		{"trusted peer", "10.0.0.1:1234", []string{"198.51.100.7"}, "198.51.100.7"},
		{"right-most untrusted hop", "10.0.0.1:1234", []string{"6.6.6.6, 198.51.100.7"}, "198.51.100.7"},
		{"skips trusted hops", "10.0.0.1:1234", []string{"198.51.100.7, 10.0.0.2,10.0.0.3"}, "198.51.100.7"},
		{"several headers in order", "10.0.0.1:1234", []string{"6.6.6.6", "198.51.100.7"}, "198.51.100.7"},
		{"every hop trusted", "10.0.0.1:1234", []string{"10.0.0.2, 10.0.0.3"}, "10.0.0.1"},
		{"garbage hop falls back to the peer", "10.0.0.1:1234", []string{"198.51.100.7, unknown"}, "10.0.0.1"},
		{"empty hop falls back to the peer", "10.0.0.1:1234", []string{""}, "10.0.0.1"},
		{"mapped IPv4 hop", "10.0.0.1:1234", []string{"::ffff:198.51.100.7"}, "198.51.100.7"},
		{"IPv6 peer", "[2001:db8::1]:443", nil, "2001:db8::1"},
		{"trusted IPv6 proxy", "[fd00::1]:443", []string{"2001:db8::2"}, "2001:db8::2"},
		{"mapped IPv4 peer", "[::ffff:10.0.0.1]:80", []string{"198.51.100.7"}, "198.51.100.7"},
		{"peer without port", "192.0.2.9", nil, "192.0.2.9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/pre-tool-check", nil)
			r.RemoteAddr = tt.remote
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := clientIP(r, trusted); got != netip.MustParseAddr(tt.want) {
				t.Errorf("clientIP = %s, want %s", got, tt.want)
			}
		})
	}
	// No trusted proxies: the header means nothing.
	r := httptest.NewRequest("POST", "/", nil)
	r.RemoteAddr = "10.0.0.1:1"
	r.Header.Set("X-Forwarded-For", "198.51.100.7")
	if got := clientIP(r, nil); got != netip.MustParseAddr("10.0.0.1") {
		t.Errorf("without trusted proxies: %s", got)
	}
}
