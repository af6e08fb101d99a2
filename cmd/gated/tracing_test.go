package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

// TestServeExportsTraces runs gated with OTEL_EXPORTER_OTLP_ENDPOINT at a
// stand-in collector: a decision made in the caller's trace reaches it by
// the time gated has shut down (shutdown flushes the exporter).
func TestServeExportsTraces(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var exported []byte
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		if r.URL.Path == "/v1/traces" {
			exported = append(exported, b...)
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(collector.Close)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	// Registered before startServe, so it runs after serve has shut down.
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		id, _ := hex.DecodeString(traceID)
		for _, want := range [][]byte{id, []byte("gated.decision"), []byte("gated.contract.evaluate"), []byte("POST /pre-tool-check")} {
			if !bytes.Contains(exported, want) {
				t.Errorf("the collector did not receive %q", want)
			}
		}
	})

	base, _ := startServe(t, nil, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL})
	event, err := os.ReadFile("../../examples/events/send_email_ask.json")
	if err != nil {
		t.Fatal(err)
	}
	code, _ := post(t, base+"/pre-tool-check", string(event), map[string]string{"traceparent": "00-" + traceID + "-00f067aa0ba902b7-01"})
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
}

func TestServeTraceConfigErrors(t *testing.T) {
	t.Parallel()
	for _, kv := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "127.0.0.1:4318"},
		{"OTEL_TRACES_EXPORTER": "zipkin"},
	} {
		err := run(context.Background(), []string{"gated", "serve", "--addr", freeAddr(t)}, env(kv), nil, io.Discard, io.Discard)
		var ex exitError
		if !errors.As(err, &ex) || ex.code != exitUsage || !strings.Contains(ex.msg, "traces") {
			t.Errorf("%v: got %v, want a usage error about traces", kv, err)
		}
	}
}
