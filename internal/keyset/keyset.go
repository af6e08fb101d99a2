// Package keyset is the paging of gated's newest-first listings
// (decisions, approvals): the page cursor, the (time, id) of a page's last
// row, opaque to clients, and the SQL of a page, so that a page costs the
// same however deep it is.
package keyset

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Cursor is the keyset position after the last row of a page: the next
// page holds the rows ordered before (T, ID).
type Cursor struct {
	T  time.Time `json:"t"`
	ID string    `json:"id"`
}

// Encode renders the position after a row as an opaque cursor.
func Encode(t time.Time, id string) string {
	b, _ := json.Marshal(Cursor{T: t, ID: id}) // cannot fail: a time and a string
	return base64.RawURLEncoding.EncodeToString(b)
}

// ErrInvalid is a cursor this service did not issue.
var ErrInvalid = errors.New("the cursor is not one this service issued")

// Decode reads a cursor Encode made; valid, when set, also vets its id.
func Decode(s string, valid func(id string) bool) (Cursor, error) {
	var c Cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.ID == "" || c.T.IsZero() || (valid != nil && !valid(c.ID)) {
		return c, fmt.Errorf("%w: %q", ErrInvalid, s)
	}
	return c, nil
}

// Limit is the size of the page limit asks for: 0 gets def and more than
// max gets max; ok is false when limit is negative.
func Limit(limit, def, max int) (n int, ok bool) {
	switch {
	case limit < 0:
		return 0, false
	case limit == 0:
		return def, true
	default:
		return min(limit, max), true
	}
}

// Query is the SQL of a page of a newest-first listing, ordered by a time
// column and then an id column, with PostgreSQL's $n placeholders.
type Query struct {
	TimeColumn, IDColumn string

	where []string
	args  []any
}

// Where keeps the rows that meet cond, which holds one %d: the number of
// v's placeholder.
func (q *Query) Where(cond string, v any) {
	q.args = append(q.args, v)
	q.where = append(q.where, fmt.Sprintf(cond, len(q.args)))
}

// Before keeps the rows ordered after the cursor's position: those before
// (c.T, c.ID), newest first.
func (q *Query) Before(c Cursor) {
	q.args = append(q.args, c.T, c.ID)
	q.where = append(q.where, fmt.Sprintf("(%s, %s) < ($%d, $%d)", q.TimeColumn, q.IDColumn, len(q.args)-1, len(q.args)))
}

// SQL is sel with the conditions, newest first, and its arguments. It
// fetches one row more than limit: that one says whether a next page
// exists (Trim).
func (q *Query) SQL(sel string, limit int) (string, []any) {
	if len(q.where) > 0 {
		sel += " WHERE " + strings.Join(q.where, " AND ")
	}
	args := append(q.args, limit+1)
	return sel + fmt.Sprintf(" ORDER BY %s DESC, %s DESC LIMIT $%d", q.TimeColumn, q.IDColumn, len(args)), args
}

// Trim cuts rows, read with Query.SQL, to limit, and returns the cursor of
// the next page: "" when there is none. at is a row's (time, id).
func Trim[T any](rows []T, limit int, at func(T) (time.Time, string)) ([]T, string) {
	if len(rows) <= limit {
		return rows, ""
	}
	rows = rows[:limit]
	return rows, Encode(at(rows[limit-1]))
}
