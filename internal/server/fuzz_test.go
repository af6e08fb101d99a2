package server_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gatedhq/gated/api"
	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/eventcodec"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/server"
)

// FuzzDecide feeds arbitrary bodies to the decoder, the decision path and
// the HTTP handler. Whatever the bytes: no panic, no 5xx, every answer has
// a route and conforms to the OpenAPI document, invalid UTF-8 is not
// decoded, an invalid event is refused, and an accept always executes with no hard blockers. The seed
// corpus (testdata/fuzz/FuzzDecide) holds the shipped cases and the edge
// bodies of the HTTP tests.
func FuzzDecide(f *testing.F) {
	engine := gate.New(gate.WithClock(func() time.Time { return fixedNow }))
	h := server.New(server.Deps{Engine: engine, OpenAPI: api.OpenAPI})
	f.Fuzz(func(t *testing.T, body []byte) {
		fx := &fixture{t: t, h: h}
		res := fx.do(request{method: http.MethodPost, target: "/pre-tool-check", body: bytes.NewReader(body)})

		doc, err := eventcodec.Decode(body, eventcodec.DefaultMaxDepth)
		if err == nil && !utf8.Valid(body) {
			t.Errorf("invalid UTF-8 decoded")
		}
		if err != nil {
			if res.status != http.StatusBadRequest && res.status != http.StatusRequestEntityTooLarge {
				t.Errorf("undecodable body (%v) answered %d", err, res.status)
			}
			return
		}
		if len(body) <= server.DefaultMaxBodyBytes && res.status != http.StatusOK {
			t.Errorf("decodable body answered %d: %s", res.status, res.raw)
		}
		d := engine.Decide(context.Background(), gate.Request{Event: doc})
		if contract.Prepare(doc).Event == nil && d.Route != route.Refuse {
			t.Errorf("invalid event routed %s", d.Route)
		}
		if d.Route == route.Accept && (!d.Execute || len(d.HardBlockers) > 0) {
			t.Errorf("accept with execute %v, hard blockers %v", d.Execute, d.HardBlockers)
		}
		if d.Execute && d.Route != route.Accept {
			t.Errorf("route %s executes", d.Route)
		}
		if res.status == http.StatusOK && res.str("route") != d.Route.String() {
			t.Errorf("handler routed %s, engine %s", res.str("route"), d.Route)
		}
	})
}
