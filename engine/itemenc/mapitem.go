package itemenc

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// Attributes of a map-layout item besides the field maps. Field names
// cannot start with "tt_" (package event), so these never meet a field.
const (
	// MapIDs lists the item's event ids, in the order they were appended.
	MapIDs = "tt_ids"
	// MapNanos maps the id of each event not on a whole millisecond to its
	// nanoseconds past the item's millisecond; every item has it, maybe
	// empty.
	MapNanos = "tt_ns"
	// MapSize is an upper bound of the item's size in bytes, which appends
	// add to and check, or more than storage.MaxItemSize once the item is
	// closed.
	MapSize = "tt_sz"
)

// MillisecondKeyLen is the length of the sort-key prefix that names a
// millisecond: the fixed-width time up to its third fractional digit.
const MillisecondKeyLen = len("2006-01-02T15:04:05.000")

// Millisecond returns the millisecond an instant falls in.
func Millisecond(t time.Time) time.Time { return t.Truncate(time.Millisecond) }

// LastInstant returns the last nanosecond of t's millisecond.
func LastInstant(t time.Time) time.Time { return Millisecond(t).Add(time.Millisecond - 1) }

// DecodedEvent is an event read from an item, with the sort key it would
// have in the row layout, which orders it in the merge.
type DecodedEvent struct {
	Event event.Event
	SK    string
	// JSON, when not nil, is the event's JSON, and Event holds no
	// fields: a row item a JSON read turned into its JSON as it read it
	// (engine's source.readItem).
	JSON []byte
}

// DecodeMapItem appends the events of a map item to dst. Events whose id
// the item lists but no field map holds have no fields.
func DecodeMapItem(dst []DecodedEvent, it storage.Item, series string) []DecodedEvent {
	ms, ok := ParseTimeKey(it.SK[:TimeKeyLen])
	if !ok {
		return dst
	}
	ids, _ := it.Attrs[MapIDs].([]any)
	if len(ids) == 0 {
		return dst
	}
	nanos, _ := it.Attrs[MapNanos].(map[string]any)
	at := make(map[string]int, len(ids))
	for _, v := range ids {
		id, ok := v.(string)
		if !ok {
			continue
		}
		if _, dup := at[id]; dup {
			continue
		}
		t := ms
		if n, ok := nanos[id].(json.Number); ok {
			if v, err := strconv.ParseInt(string(n), 10, 64); err == nil && v > 0 && v < int64(time.Millisecond) {
				t = ms.Add(time.Duration(v))
			}
		}
		at[id] = len(dst)
		dst = append(dst, DecodedEvent{Event: event.Event{Time: t, Series: series, ID: id, Fields: map[string]any{}}, SK: SortKey(t, id)})
	}
	for name, v := range it.Attrs {
		m, ok := v.(map[string]any)
		if !ok || strings.HasPrefix(name, "tt_") {
			continue
		}
		for id, val := range m {
			if i, ok := at[id]; ok {
				dst[i].Event.Fields[name] = val
			}
		}
	}
	return dst
}

// SortDecoded orders the events of one millisecond by sort key (time,
// then id), descending when desc, and drops repeats of one event.
func SortDecoded(evs []DecodedEvent, desc bool) []DecodedEvent {
	slices.SortFunc(evs, func(a, b DecodedEvent) int {
		if desc {
			return cmp.Compare(b.SK, a.SK)
		}
		return cmp.Compare(a.SK, b.SK)
	})
	return slices.CompactFunc(evs, func(a, b DecodedEvent) bool { return a.SK == b.SK })
}
