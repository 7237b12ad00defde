package engine

import (
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// The format of a data table's items is package itemenc's; engine keeps
// the names its callers knew.

// TableEvent is an event as a physical table holds it: with the tenant and
// the logical table it belongs to. It is itemenc.TableEvent.
type TableEvent = itemenc.TableEvent

// ItemEvents appends to dst the events an item of a physical table holds,
// as itemenc.ItemEvents does, and returns the extended slice.
func ItemEvents(dst []TableEvent, it storage.Item) []TableEvent {
	return itemenc.ItemEvents(dst, it)
}

// RowItem returns the item of an event, whose ID is set, in shard shard
// of the row layout, as itemenc.RowItem does.
func RowItem(tenant, table string, ev event.Event, shard int) storage.Item {
	return itemenc.RowItem(tenant, table, ev, shard)
}
