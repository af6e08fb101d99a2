// Package postgres is gated's one handle on its database: the pool every
// part of a process shares (DB), the migrations, applied by goose under an
// advisory lock (Migrate), and the LISTEN loop every feature that follows
// a NOTIFY channel runs on (Listen).
package postgres
