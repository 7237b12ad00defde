package chunk

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// WindowStart returns the start of the window of length window (aligned
// to the Unix epoch, as Pack aligns them) that t falls in.
func WindowStart(t time.Time, window time.Duration) time.Time {
	return time.Unix(0, windowStart(t, int64(window))).UTC()
}

// LowKey returns the sort key a read of a partition's events from from on
// starts at, so that it meets every chunk holding such an event: the
// time prefix (itemenc.AppendTimePrefix) of the start of from's window,
// which sorts before every item of the window, a chunk's short sort key
// (which starts with it) included, and after every item of the windows
// before. Events before from that the range takes in are the reader's to
// cut.
func LowKey(from time.Time, window time.Duration) string {
	return string(itemenc.AppendTimePrefix(make([]byte, 0, itemenc.TimeKeyLen), WindowStart(from, window)))
}

// WindowEvents appends to dst the events of items, items of one
// partition (as a query returns them: chunks, rows and map items) whose
// sort keys' times lie in one window, and returns them in the merge's
// order (itemenc's sort key of the row layout: time, then id), each
// once. An event of a chunk without a client id gets its id as the row
// layout gives it when writing (event.Event.AssignID under scheme, for
// the partition key's tenant and logical table), so an event stored
// twice, in two chunks or in a chunk and a row, has the same time and id
// both times (the same fields, or the same client id), and is kept once.
// Items that hold no events (other kinds of item) are skipped; a chunk
// that cannot be read is an error wrapping ErrCorrupt. Row items' fields
// are taken from the items, which the caller must not use again.
func WindowEvents(dst []itemenc.DecodedEvent, items []storage.Item, scheme event.IDScheme) ([]itemenc.DecodedEvent, error) {
	base := len(dst)
	var evs []event.Event
	for _, it := range items {
		var err error
		if dst, err = ItemDecoded(dst, it, scheme, &evs); err != nil {
			return dst[:base], err
		}
	}
	out := dst[base:]
	slices.SortStableFunc(out, func(a, b itemenc.DecodedEvent) int { return cmp.Compare(a.SK, b.SK) })
	out = slices.CompactFunc(out, func(a, b itemenc.DecodedEvent) bool { return a.SK == b.SK })
	return dst[:base+len(out)], nil
}

// ItemEvents appends to dst the events an item of a physical table
// holds, as a scan returns the item: those of a chunk, each without a
// client id given the id its row would have (event.Event.AssignID under
// scheme, the table's id scheme), and those of any other item as
// itemenc.ItemEvents decodes them. Events two chunks of a window both
// hold are returned for each: an archive keeps them as the table did,
// and a read drops the repeat (WindowEvents). A chunk that cannot be
// read is an error wrapping ErrCorrupt.
func ItemEvents(dst []itemenc.TableEvent, it storage.Item, scheme event.IDScheme) ([]itemenc.TableEvent, error) {
	if !IsSortKey(it.SK) {
		return itemenc.ItemEvents(dst, it), nil
	}
	tenant, table, _, _, err := itemenc.ParsePartitionKey(it.PK)
	if err != nil {
		return dst, nil // not an item of events
	}
	evs, err := Unpack(nil, it)
	if err != nil {
		return dst, fmt.Errorf("chunk %q %q: %w", it.PK, it.SK, err)
	}
	for _, ev := range evs {
		ev.AssignID(tenant, table, scheme)
		dst = append(dst, itemenc.TableEvent{Tenant: tenant, Table: table, Event: ev})
	}
	return dst, nil
}

// ItemDecoded appends to dst the events of one item of a partition's
// window, as WindowEvents does for a window's items (an event of a chunk
// without a client id given its id under scheme), in the item's order,
// repeats and all; for an item of no events it appends none. Row items'
// fields are taken from the item, which the caller must not use again.
func ItemDecoded(dst []itemenc.DecodedEvent, it storage.Item, scheme event.IDScheme, scratch *[]event.Event) ([]itemenc.DecodedEvent, error) {
	tenant, table, series, _, err := itemenc.ParsePartitionKey(it.PK)
	if err != nil {
		return dst, nil
	}
	switch {
	case IsSortKey(it.SK):
		evs, err := Unpack((*scratch)[:0], it)
		*scratch = evs
		if err != nil {
			return dst, fmt.Errorf("chunk %q %q: %w", it.PK, it.SK, err)
		}
		for _, ev := range evs {
			ev.AssignID(tenant, table, scheme)
			dst = append(dst, itemenc.DecodedEvent{Event: ev, SK: itemenc.SortKey(ev.Time, ev.ID)})
		}
		clear(evs)
	case itemenc.IsMapSortKey(it.SK):
		dst = itemenc.DecodeMapItem(dst, it, series)
	default:
		if ev, ok := itemenc.RowEvent(it, series, false); ok {
			dst = append(dst, itemenc.DecodedEvent{Event: ev, SK: it.SK})
		}
	}
	return dst, nil
}
