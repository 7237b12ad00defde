package engine

import (
	"time"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// Query selects events of one logical table.
type Query struct {
	// Table is the logical table.
	Table string
	// Series selects one series; empty selects every series.
	Series string
	// From and To bound event times, both inclusive.
	From, To time.Time
	// Desc returns the newest events first.
	Desc bool
	// Limit caps the events returned; zero means Options.DefaultLimit, and
	// more than Options.MaxLimit is an error.
	Limit int
	// Cursor resumes a previous query from its Page.NextCursor. The other
	// fields must be the same as in that query, but Limit may change.
	Cursor string
	// Fields, when not empty, are the only fields returned.
	Fields []string
	// Filter, when not nil, returns only the events whose fields it
	// matches (package filter reads one from text). A row-layout table
	// has it applied by the store (DynamoDB's FilterExpression), a
	// map-layout one by the engine as it decodes; either way a page holds
	// Limit events unless the range runs out, and its cursor resumes after
	// its last event.
	Filter *storage.Filter
}

// Page is one page of a query's answer.
type Page struct {
	// Events are in time order (newest first when Desc), each once.
	Events []event.Event
	// NextCursor resumes the query after the last event of this page; it
	// is empty when there are no more events.
	NextCursor string
	// Gaps are the parts of the range left to read whose events are
	// gone (Gap): empty when every table of the range was read, live or
	// from its archive.
	Gaps []Gap
}
