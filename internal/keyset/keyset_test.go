package keyset

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRoundTripAndRefusals(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 24, 5, 0, 0, 123456000, time.UTC)
	c, err := Decode(Encode(at, "id-1"), nil)
	if err != nil || !c.T.Equal(at) || c.ID != "id-1" {
		t.Fatalf("round trip = %+v, %v", c, err)
	}
	notX := func(id string) bool { return !strings.HasPrefix(id, "x") }
	for _, s := range []string{"", "!!", Encode(time.Time{}, "id"), Encode(at, ""), Encode(at, "x-1"), "eyJ0IjoxfQ"} {
		if _, err := Decode(s, notX); !errors.Is(err, ErrInvalid) {
			t.Errorf("Decode(%q) = %v, want ErrInvalid", s, err)
		}
	}
}

func TestLimit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want int }{{0, 50}, {1, 1}, {50, 50}, {500, 500}, {501, 500}} {
		if n, ok := Limit(c.in, 50, 500); !ok || n != c.want {
			t.Errorf("Limit(%d) = %d, %v, want %d", c.in, n, ok, c.want)
		}
	}
	if _, ok := Limit(-1, 50, 500); ok {
		t.Error("Limit(-1) is ok")
	}
}

func TestQueryPlacesEveryArgument(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC)
	q := Query{TimeColumn: "t", IDColumn: "id"}
	if sql, args := q.SQL("SELECT x FROM r", 10); sql != "SELECT x FROM r ORDER BY t DESC, id DESC LIMIT $1" || len(args) != 1 || args[0] != 11 {
		t.Errorf("no conditions: %q %v", sql, args)
	}
	q.Where("s = $%d", "open")
	q.Before(Cursor{T: at, ID: "id-1"})
	sql, args := q.SQL("SELECT x FROM r", 10)
	if want := "SELECT x FROM r WHERE s = $1 AND (t, id) < ($2, $3) ORDER BY t DESC, id DESC LIMIT $4"; sql != want {
		t.Errorf("SQL = %q, want %q", sql, want)
	}
	if len(args) != 4 || args[0] != "open" || args[1] != at || args[2] != "id-1" || args[3] != 11 {
		t.Errorf("args = %v", args)
	}
}

func TestTrimGivesTheNextCursorOnlyWhenRowsAreLeft(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC)
	rows := []string{"a", "b", "c"}
	pos := func(s string) (time.Time, string) { return at, s }
	if page, next := Trim(rows, 3, pos); len(page) != 3 || next != "" {
		t.Errorf("Trim(3) = %v, %q", page, next)
	}
	page, next := Trim(rows, 2, pos)
	if c, err := Decode(next, nil); len(page) != 2 || err != nil || c.ID != "b" || !c.T.Equal(at) {
		t.Errorf("Trim(2) = %v, %q (%+v, %v)", page, next, c, err)
	}
}
