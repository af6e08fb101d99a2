// Package keyset is the page cursor of gated's newest-first listings
// (decisions, approvals): the (time, id) of a page's last row, opaque to
// clients, so that a page costs the same however deep it is.
package keyset

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
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
