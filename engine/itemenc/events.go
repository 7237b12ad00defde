package itemenc

import (
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// TableEvent is an event as a physical table holds it: with the tenant and
// the logical table it belongs to, which a physical table shares among
// many.
type TableEvent struct {
	Tenant string
	Table  string
	event.Event
}

// ItemEvents appends to dst the events an item of a physical table holds,
// as a scan returns the item, and returns the extended slice: one for an
// event of the row layout, the events of a millisecond for an item of the
// map layout, none for the table's other items (series index entries,
// rollups and their version markers). It decodes as queries do, so an
// archive of the table holds the events a query would return. Reading
// a row item takes its attributes as the event's fields: the caller must
// not use the item again.
func ItemEvents(dst []TableEvent, it storage.Item) []TableEvent {
	tenant, table, series, _, err := ParsePartitionKey(it.PK)
	if err != nil {
		return dst
	}
	if IsMapSortKey(it.SK) {
		for _, d := range DecodeMapItem(nil, it, series) {
			dst = append(dst, TableEvent{Tenant: tenant, Table: table, Event: d.Event})
		}
		return dst
	}
	if ev, ok := RowEvent(it, series, false); ok {
		dst = append(dst, TableEvent{Tenant: tenant, Table: table, Event: ev})
	}
	return dst
}
