package audit

import "fmt"

// Durability is when a decision's answer may leave: before its record is
// durable (Async, the default) or after (Sync).
type Durability int

const (
	Async Durability = iota
	Sync
)

// FailMode is what happens to a call whose record can be neither stored
// nor spooled: refused (FailClosed, the default) or let stand (FailOpen).
type FailMode int

const (
	FailClosed FailMode = iota
	FailOpen
)

// ParseDurability reads async or sync.
func ParseDurability(s string) (Durability, error) {
	switch s {
	case "async", "":
		return Async, nil
	case "sync":
		return Sync, nil
	}
	return Async, fmt.Errorf("audit durability must be async or sync, not %q", s)
}

// ParseFailMode reads closed or open.
func ParseFailMode(s string) (FailMode, error) {
	switch s {
	case "closed", "":
		return FailClosed, nil
	case "open":
		return FailOpen, nil
	}
	return FailClosed, fmt.Errorf("audit fail mode must be closed or open, not %q", s)
}

func (d Durability) String() string {
	if d == Sync {
		return "sync"
	}
	return "async"
}

func (f FailMode) String() string {
	if f == FailOpen {
		return "open"
	}
	return "closed"
}
