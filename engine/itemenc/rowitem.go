package itemenc

import (
	"maps"
	"strings"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// RowItem returns the item of an event, whose ID is set, in shard shard
// of the row layout.
func RowItem(tenant, table string, ev event.Event, shard int) storage.Item {
	return storage.Item{PK: PartitionKey(tenant, table, ev.Series, shard), SK: SortKey(ev.Time, ev.ID), Attrs: ev.Fields}
}

// OwnAttribute reports whether an attribute name is timetable's own
// (tt_...), which no event field can be (package event).
func OwnAttribute(name string) bool { return strings.HasPrefix(name, "tt_") }

// RowEvent decodes a row-layout item. An item read whole may hold
// timetable's own attributes, which it drops; one read with a projection
// (projected) holds only the fields the read asked for, never an own
// attribute (the engine's reads see to it), and the map layout's, which a row item does not
// carry: it is taken as it is, without a walk over its attributes.
func RowEvent(item storage.Item, series string, projected bool) (event.Event, bool) {
	t, id, err := ParseSortKey(item.SK)
	if err != nil {
		return event.Event{}, false
	}
	fields := item.Attrs
	if !projected {
		maps.DeleteFunc(fields, func(name string, _ any) bool { return OwnAttribute(name) })
	}
	return event.Event{Time: t, Series: series, ID: id, Fields: fields}, true
}
