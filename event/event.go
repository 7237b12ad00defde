package event

import "time"

// Event is one event of a logical table.
type Event struct {
	// Time is when the event happened, in UTC, to the nanosecond.
	Time time.Time
	// Series is the key of the series the event belongs to, "" when none.
	Series string
	// ID is the client's own id for the event or, once AssignID ran, the
	// idempotent id.
	ID string
	// Fields holds the event's values by name, in the storage attribute
	// value types (see package storage); numbers are json.Number in
	// canonical form. It is nil when the event has no field.
	Fields map[string]any
}
