package event

import "fmt"

// idIndex remembers the client ids of a request, to refuse one used
// twice: two events of one request with the same id would be stored as
// one item when they share a time, and are a client's mistake when they
// do not.
type idIndex map[string]int

// repeat records the id of event i and returns why it is refused when an
// earlier event of the request has it, or "". Events without a client id
// ("") are never refused: their ids are derived from their content, so a
// repeated event is the same event, stored once.
func (x *idIndex) repeat(id string, i int) string {
	if id == "" {
		return ""
	}
	if *x == nil {
		*x = idIndex{}
	}
	if j, ok := (*x)[id]; ok {
		return fmt.Sprintf("id %q: event %d of this request has it too; a client id names one event of a request", id, j)
	}
	(*x)[id] = i
	return ""
}
