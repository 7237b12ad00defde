package event

import "time"

// Batch is the events of one request once they have passed validation:
// what DecodeJSON and DecodeNDJSON return, and what Check makes of events
// built in Go. A writer (the engine's WriteBatch) takes a Batch without
// validating it again, so that a request's events are checked once.
//
// Its events cannot be changed through it: Event returns a copy, and a
// caller that edits decoded events (the CLI fills in a missing series)
// gets them with Events and must Check them again before they are a
// Batch, a rule the compiler keeps rather than a comment.
type Batch struct {
	events []Event
	// names holds, when the decoders made the batch, the field names of
	// each event in bytewise order, the order an id's encoding takes them
	// in: nil for an event without fields, and shared by consecutive
	// events with the same names, so that a body's events of one shape
	// are not sorted one by one. A Batch from Check has none (nil).
	names [][]string
}

// sortedNames returns the field names of event i in bytewise order, or
// nil when the batch does not know them.
func (b Batch) sortedNames(i int) []string {
	if b.names == nil {
		return nil
	}
	return b.names[i]
}

// Len returns the number of events.
func (b Batch) Len() int { return len(b.events) }

// Event returns the i-th event. Its Fields are the batch's own: read them,
// do not change them.
func (b Batch) Event(i int) Event { return b.events[i] }

// Events returns a copy of the events, to edit and Check again. The copy
// is shallow: the events' Fields are shared with the batch.
func (b Batch) Events() []Event {
	out := make([]Event, len(b.events))
	copy(out, b.events)
	return out
}

// AssignIDs gives every event without an id its idempotent id under
// scheme s (see Event.AssignID), in place: the events of a Batch made by
// Check are the caller's, whose ID fields are set. The events passed
// validation, whose numbers are canonical, so their numbers are hashed as
// they are.
func (b Batch) AssignIDs(tenant, table string, s IDScheme) {
	for i := range b.events {
		b.events[i].assignID(tenant, table, s, true, b.sortedNames(i))
	}
}

// AssignID is AssignIDs for event i alone, for a caller that learns each
// event's scheme from the table it goes to, and returns its id.
func (b Batch) AssignID(i int, tenant, table string, s IDScheme) string {
	b.events[i].assignID(tenant, table, s, true, b.sortedNames(i))
	return b.events[i].ID
}

// Check validates events against lim at time now (Validate, normalizing
// each in place) and refuses a client id used twice, as the
// decoders do. When any event is bad it returns a *BatchError naming each
// bad one by its index and no Batch. The Batch holds events itself, not a
// copy. Invalid limits give an error wrapping ErrInvalidLimits.
func Check(events []Event, lim Limits, now time.Time) (Batch, error) {
	if err := lim.Validate(); err != nil {
		return Batch{}, err
	}
	lim = lim.WithDefaults()
	var problems []Problem
	var ids idIndex
	for i := range events {
		reason := validate(&events[i], &lim, now)
		if reason == "" {
			reason = ids.repeat(events[i].ID, i)
		}
		if reason != "" {
			problems = append(problems, Problem{Index: i, Reason: reason})
		}
	}
	if problems != nil {
		return Batch{}, &BatchError{Problems: problems}
	}
	return Batch{events: events}, nil
}

// Join returns the events of several batches as one, in order, for a
// writer that stores separate requests together (the MQTT subscriber
// writes the messages that arrived meanwhile in one call). Each batch was
// checked on its own, and so was its rule that a client id names one
// event: events of different batches may share an id, as two requests
// may, and the engine stores an event repeated within one write once.
func Join(batches ...Batch) Batch {
	n := 0
	for _, b := range batches {
		n += len(b.events)
	}
	events := make([]Event, 0, n)
	var names [][]string
	for _, b := range batches {
		if b.names != nil && names == nil {
			names = make([][]string, len(events), n)
		}
		events = append(events, b.events...)
		if names != nil {
			if b.names != nil {
				names = append(names, b.names...)
			} else {
				names = append(names, make([][]string, len(b.events))...)
			}
		}
	}
	return Batch{events: events, names: names}
}
