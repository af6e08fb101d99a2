package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/kill"
	"github.com/gatedhq/gated/internal/metrics"
)

// Kills is the kill switch store the HTTP API sets, lifts and lists kills
// with: internal/kill/postgres.Store, as cmd/gated wires it.
type Kills interface {
	Create(ctx context.Context, k *kill.Kill, at time.Time) error
	// Lift returns kill.ErrNotFound when no such kill is active.
	Lift(ctx context.Context, id, by string, at time.Time) (*kill.Kill, error)
	List(ctx context.Context, all bool) ([]kill.Kill, error)
}

// Error codes of the kill switch API.
const (
	codeKillNeedsTokens   = "kill_switch_needs_tokens"
	codeKillNeedsDatabase = "kill_switch_needs_database"
	codeKillInvalid       = "kill_switch_invalid"
	codeKillUnknown       = "kill_switch_unknown"
	codeKillStore         = "kill_switch_store_unavailable"
)

// killOn answers 403 without tokens (every kill and lift is recorded with
// the token that made it) and 503 without a database (the kill list lives
// in PostgreSQL, the one place every replica reads it from).
func killOn(d *Deps) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case d.Tokens == nil:
				writeCodedError(w, http.StatusForbidden, codeKillNeedsTokens,
					"the kill switch needs tokens: each kill and lift is recorded with the token that made it, so start gated with --tokens")
			case d.Kills == nil:
				writeCodedError(w, http.StatusServiceUnavailable, codeKillNeedsDatabase,
					"the kill switch needs PostgreSQL, which every replica reads the kill list from: start gated with --database-url")
			default:
				next.ServeHTTP(w, r)
			}
		})
	}
}

// killBody is POST /v1/kill's body.
type killBody struct {
	Scope     kill.Scope `json:"scope"`
	Value     string     `json:"value"`
	Reason    string     `json:"reason"`
	ExpiresAt *time.Time `json:"expires_at"`
}

// handleSetKill sets a kill: every replica refuses the calls it matches
// once its watcher has read it (on the change's notification).
func handleSetKill(d *Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		raw, berr := readJSON(w, r, d.MaxBodyBytes)
		if berr != nil {
			writeCodedError(w, berr.status, codeBadRequest, berr.msg)
			return
		}
		var b killBody
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&b); err != nil {
			writeCodedError(w, http.StatusBadRequest, codeKillInvalid,
				`the body must be a JSON object {"scope", "value", "reason", "expires_at"} and nothing else (the operator is the token): `+err.Error())
			return
		}
		if _, err := dec.Token(); err != io.EOF {
			writeCodedError(w, http.StatusBadRequest, codeKillInvalid, "malformed JSON: unexpected data after the object")
			return
		}
		now := time.Now()
		k := kill.Kill{Scope: b.Scope, Value: b.Value, Reason: b.Reason, CreatedBy: tokenFrom(r.Context()).Name}
		if b.ExpiresAt != nil {
			// Checked as given: an explicit zero time would otherwise read
			// as no expiry, and make the kill permanent.
			if err := kill.CheckExpiry(*b.ExpiresAt, now); err != nil {
				writeCodedError(w, http.StatusBadRequest, codeKillInvalid, err.Error())
				return
			}
			k.ExpiresAt = b.ExpiresAt.UTC()
		}
		if err := k.Check(now); err != nil {
			writeCodedError(w, http.StatusBadRequest, codeKillInvalid, err.Error())
			return
		}
		if err := d.Kills.Create(r.Context(), &k, now); err != nil {
			d.Logger.Error("a kill switch could not be stored", zap.Error(err))
			writeCodedError(w, http.StatusServiceUnavailable, codeKillStore, "the kill switch store is unavailable: the kill is not set")
			return
		}
		// The reason is the operator's own text, so it may be logged.
		d.Logger.Warn("kill switch set", zap.String("kill_id", k.ID), zap.String("scope", string(k.Scope)),
			zap.String("value", k.Value), zap.String("reason", k.Reason), zap.String("by", k.CreatedBy),
			zap.Timep("expires_at", timeOrNil(k.ExpiresAt)))
		if d.Metrics != nil {
			d.Metrics.KillChanged(metrics.KillSet)
		}
		writeJSON(w, http.StatusCreated, k)
	}
}

// handleLiftKill lifts kill {id}: 404 when no such kill is in force.
func handleLiftKill(d *Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		by := tokenFrom(r.Context()).Name
		k, err := d.Kills.Lift(r.Context(), chi.URLParam(r, "id"), by, time.Now())
		if err != nil {
			if storeStatus(err) == http.StatusServiceUnavailable {
				d.Logger.Error("a kill switch could not be lifted", zap.Error(err))
			}
			writeStoreError(w, err, codeKillStore, "the kill switch store is unavailable: the kill is still in force")
			return
		}
		d.Logger.Warn("kill switch lifted", zap.String("kill_id", k.ID), zap.String("scope", string(k.Scope)),
			zap.String("value", k.Value), zap.String("by", by))
		if d.Metrics != nil {
			d.Metrics.KillChanged(metrics.KillLifted)
		}
		writeJSON(w, http.StatusOK, k)
	}
}

// killList is GET /v1/kill's answer.
type killList struct {
	Kills []kill.Kill `json:"kills"`
}

// handleListKills lists the kills in force, oldest first; ?all=true every
// kill kept (the newest 500), lifted and expired ones too, newest first.
func handleListKills(d *Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		all := false
		switch v := r.URL.Query().Get("all"); v {
		case "", "false":
		case "true":
			all = true
		default:
			writeCodedError(w, http.StatusBadRequest, codeBadRequest, "all must be true or false")
			return
		}
		ks, err := d.Kills.List(r.Context(), all)
		if err != nil {
			d.Logger.Error("the kill switches could not be listed", zap.Error(err))
			writeCodedError(w, http.StatusServiceUnavailable, codeKillStore, "the kill switch store is unavailable")
			return
		}
		writeJSON(w, http.StatusOK, killList{Kills: ks})
	}
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
