// Package postgres is gated's one handle on its database: the LISTEN loop
// every feature that follows a NOTIFY channel runs on (Listen).
package postgres
