// Command baseline is the reference point of the HTTP ratio harness
// (bench/cmd/benchhttp): a bare chi server that does, per request, only the
// JSON work gated's POST /pre-tool-check does around a decision — the same
// content-type and size checks, the same UTF-8, nesting and duplicate-name
// checks, and encoding/json: the event decoded into map[string]any with
// UseNumber, the same envelope.Answer type marshalled by reflection. It
// stays on encoding/json where gated now has readers and writers of its own
// (eventcodec's one-pass reader, envelope's AppendJSON), so the baseline is
// what a bare service doing this JSON work costs, not a copy of gated's.
//
// The answer is decided once at start from the -event file with gated's
// defaults, so what it encodes is the answer gated would send; no request is
// decided, recorded or routed through middleware. Every figure the harness
// prints is a ratio to this server measured in the same run, which is what
// makes runs on different machines comparable.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/gatedhq/gated/internal/envelope"
	"github.com/gatedhq/gated/internal/eventcodec"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/server"
	"github.com/gatedhq/gated/internal/strictjson"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18090", "listen address")
	event := flag.String("event", "", "the event file whose answer every request gets (required)")
	flag.Parse()
	if err := run(*addr, *event); err != nil {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		os.Exit(1)
	}
}

func run(addr, eventFile string) error {
	if eventFile == "" {
		return errors.New("-event is required: the answer is decided once from it")
	}
	raw, err := os.ReadFile(eventFile)
	if err != nil {
		return err
	}
	ev, err := eventcodec.Decode(raw, eventcodec.DefaultMaxDepth)
	if err != nil {
		return fmt.Errorf("%s: %w", eventFile, err)
	}
	answer := envelope.From(gate.New().Decide(context.Background(), gate.Request{Event: ev}))

	r := chi.NewRouter()
	r.Post("/pre-tool-check", func(w http.ResponseWriter, r *http.Request) {
		if _, err := decode(w, r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		// As gated's writeJSON: marshal the struct, then one write.
		body, err := json.Marshal(answer)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(append(body, '\n'))
	})
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })

	srv := &http.Server{Addr: addr, Handler: r, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// decode mirrors internal/server's decodeEvent (unexported there): the same
// checks in the same order, with gated's default limits.
func decode(w http.ResponseWriter, r *http.Request) (map[string]any, error) {
	if r.ContentLength > server.DefaultMaxBodyBytes {
		return nil, fmt.Errorf("request body of %d bytes exceeds %d bytes", r.ContentLength, server.DefaultMaxBodyBytes)
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, errors.New("the body must be sent with Content-Type: application/json")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, server.DefaultMaxBodyBytes))
	if err != nil {
		return nil, errors.New("could not read the request body")
	}
	if err := eventcodec.CheckText(body, eventcodec.DefaultMaxDepth); err != nil {
		return nil, err
	}
	if err := strictjson.Check(body); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var ev map[string]any
	if err := dec.Decode(&ev); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the top-level value")
	}
	return ev, nil
}
