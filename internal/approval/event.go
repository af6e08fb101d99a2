package approval

// EventType names a webhook event.
type EventType string

// The events the approval webhook receives.
const (
	EventRequested EventType = "approval.requested"
	EventDecided   EventType = "approval.decided"
)

// Event is one webhook notification. It carries the approval with its
// preview, which is masked already; the raw arguments never leave gated.
type Event struct {
	ID       string    `json:"id"`
	Type     EventType `json:"type"`
	Approval Approval  `json:"approval"`
}

// NewEvent returns the event of type t for a. Its ID, "<type>:<approval
// id>", is the same on every retry and resend, so a receiver can drop
// duplicates by it: each type happens once per approval.
func NewEvent(t EventType, a Approval) Event {
	return Event{ID: string(t) + ":" + a.ID, Type: t, Approval: a}
}
