package config

import "github.com/timetabledb/timetable/family"

// WritePath is which conditional write the map layout tries first; the
// rule, and which to choose, are in docs/layouts.md.
type WritePath string

// Write paths of the map layout.
const (
	// WritePathAuto picks create-first or append-first per write, from
	// what the engine saw of the series.
	WritePathAuto WritePath = "auto"
	// WritePathCreateFirst tries a conditional create of the
	// millisecond's item first and appends when it exists: best when a
	// millisecond mostly holds one event.
	WritePathCreateFirst WritePath = "create_first"
	// WritePathAppendFirst tries an append to an existing item first and
	// creates it when missing: best when most events share their
	// millisecond with others.
	WritePathAppendFirst WritePath = "append_first"
)

// DefaultEventsPerItem is how many events a map-layout item holds before
// the next events of its millisecond go to a continuation item: Fineo's
// cap.
const DefaultEventsPerItem = 250

// MaxEventsPerItem bounds events_per_item: more would only make the item
// hit DynamoDB's 400 KB limit first.
const MaxEventsPerItem = 100000

// TableLayout is the resolved layout of one logical table: the kind of
// items its events go into, and for the map layout how they are written.
type TableLayout struct {
	Kind          family.Layout
	WritePath     WritePath
	EventsPerItem int
}

// Layout returns how a logical table lays out its events: its own
// settings, else its family's layout, with the defaults filled in.
func (c Config) Layout(table string) TableLayout {
	t := c.Tables[table]
	l := TableLayout{Kind: t.Layout, WritePath: t.WritePath, EventsPerItem: t.EventsPerItem}
	if l.Kind == "" {
		l.Kind = c.Family(table).Layout
	}
	if l.Kind == "" {
		l.Kind = family.LayoutRow
	}
	if l.WritePath == "" {
		l.WritePath = WritePathAuto
	}
	if l.EventsPerItem == 0 {
		l.EventsPerItem = DefaultEventsPerItem
	}
	return l
}
