package engine

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
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
	// mapIDs lists the item's event ids, in the order they were appended.
	mapIDs = "tt_ids"
	// mapNanos maps the id of each event not on a whole millisecond to its
	// nanoseconds past the item's millisecond; every item has it, maybe
	// empty.
	mapNanos = "tt_ns"
	// mapSize is an upper bound of the item's size in bytes, which appends
	// add to and check, or more than storage.MaxItemSize once the item is
	// closed.
	mapSize = "tt_sz"
)

// closedSize marks a closed item: no append fits under it.
const closedSize = storage.MaxItemSize + 1

// sizeSlack allows for the growth of the mapSize number itself, whose
// own bytes it does not count.
const sizeSlack = 16

// msKeyLen is the length of the sort-key prefix that names a millisecond:
// the fixed-width time up to its third fractional digit.
const msKeyLen = len("2006-01-02T15:04:05.000")

// millisecond returns the millisecond an instant falls in.
func millisecond(t time.Time) time.Time { return t.Truncate(time.Millisecond) }

// lastInstant returns the last nanosecond of t's millisecond.
func lastInstant(t time.Time) time.Time { return millisecond(t).Add(time.Millisecond - 1) }

// mapEvent is an event on its way into a map item.
type mapEvent struct {
	idx    int // in the tableWrite's items
	id     string
	nanos  int64
	fields map[string]any
}

// mapItemState is what an appender knows of a stored map item: read from
// the store (fresh) or predicted from its own appends.
type mapItemState struct {
	fresh  bool
	exists bool
	ids    map[string]struct{}
	count  int
	size   int
	fields map[string]bool
}

// stateOf reads a map item's state from the item.
func stateOf(it storage.Item) mapItemState {
	st := mapItemState{fresh: true, exists: true, ids: map[string]struct{}{}, fields: map[string]bool{}}
	ids, _ := it.Attrs[mapIDs].([]any)
	for _, v := range ids {
		if id, ok := v.(string); ok {
			st.ids[id] = struct{}{}
		}
	}
	st.count = len(ids)
	st.size = closedSize
	if n, ok := it.Attrs[mapSize].(json.Number); ok {
		if v, err := strconv.ParseFloat(string(n), 64); err == nil && v <= closedSize {
			st.size = int(v)
		}
	}
	for name, v := range it.Attrs {
		if _, ok := v.(map[string]any); ok {
			st.fields[name] = true
		}
	}
	return st
}

// entrySize returns the bytes one event adds to a map attribute: its key
// and value and the element overhead.
func entrySize(id string, v any) int { return len(id) + storage.ValueSize(v) + 1 }

// newMapSize returns the bytes a new map attribute costs besides its
// entries: its name and the container overhead.
func newMapSize(name string) int { return len(name) + 3 }

// nanosValue returns the mapNanos entry of an event.
func nanosValue(n int64) json.Number { return json.Number(strconv.FormatInt(n, 10)) }

// growth adds up, event by event, the bytes appending events to an item
// grows it by.
type growth struct {
	// have holds the field maps the item has, or the events so far add.
	have  map[string]bool
	bytes int
}

// newGrowth starts counting for an item with the field maps in have.
func newGrowth(have map[string]bool) *growth {
	g := &growth{have: maps.Clone(have)}
	if g.have == nil {
		g.have = map[string]bool{}
	}
	return g
}

// add counts one more event.
func (g *growth) add(e mapEvent) {
	g.bytes += len(e.id) + 1 // the mapIDs element
	if e.nanos != 0 {
		g.entry(mapNanos, e.id, nanosValue(e.nanos))
	}
	for f, v := range e.fields {
		g.entry(f, e.id, v)
	}
}

func (g *growth) entry(f, id string, v any) {
	g.bytes += entrySize(id, v)
	if !g.have[f] {
		g.have[f] = true
		g.bytes += newMapSize(f)
	}
}

// appendCost returns what appending events adds to an item whose map
// attributes are those in have (new maps cost their names too).
func appendCost(events []mapEvent, have map[string]bool) int {
	g := newGrowth(have)
	for _, e := range events {
		g.add(e)
	}
	return g.bytes
}

// mapDepthProblem returns why an event's fields cannot be stored in the
// map layout for how deep they nest, or "": a map item holds each field's
// value one level below the field's attribute, in the map of event ids,
// so a value may take one level less than storage.MaxDepth. Of several
// such fields it names the smallest.
func mapDepthProblem(fields map[string]any) string {
	bad := ""
	for name, v := range fields {
		if storage.Depth(v) > storage.MaxDepth-1 && (bad == "" || name < bad) {
			bad = name
		}
	}
	if bad == "" {
		return ""
	}
	return fmt.Sprintf("fields.%s: nested deeper than %d levels, the most the map layout stores (it keeps each field one level down, in a map of event ids): use the row layout for deeper events", bad, storage.MaxDepth-1)
}

// newItemSize returns the size of a new item of the partition and
// millisecond before any event: its key, its empty id list and nanosecond
// map, and extra. A growth from newItemFields adds the events' bytes.
func newItemSize(pk, sk string, extra map[string]any) int {
	n := storage.ItemSize(storage.Item{PK: pk, SK: sk, Attrs: extra})
	return n + len(mapIDs) + 3 + newMapSize(mapNanos)
}

// newItemFields returns the field maps of a new item before any event.
func newItemFields() map[string]bool { return map[string]bool{mapNanos: true} }

// mapItemFor builds a new map item holding events, with its size bound
// recorded, and attrs extra attributes (the TTL).
func mapItemFor(pk, sk string, events []mapEvent, extra map[string]any) storage.Item {
	attrs := make(map[string]any, 4+len(extra))
	ids := make([]any, len(events))
	for i, e := range events {
		ids[i] = e.id
		if e.nanos != 0 {
			m, _ := attrs[mapNanos].(map[string]any)
			if m == nil {
				m = map[string]any{}
				attrs[mapNanos] = m
			}
			m[e.id] = nanosValue(e.nanos)
		}
		for f, v := range e.fields {
			m, _ := attrs[f].(map[string]any)
			if m == nil {
				m = map[string]any{}
				attrs[f] = m
			}
			m[e.id] = v
		}
	}
	attrs[mapIDs] = ids
	if attrs[mapNanos] == nil {
		// Made empty, so that a blind append of an event off the
		// millisecond finds it.
		attrs[mapNanos] = map[string]any{}
	}
	for k, v := range extra {
		attrs[k] = v
	}
	it := storage.Item{PK: pk, SK: sk, Attrs: attrs}
	attrs[mapSize] = json.Number(strconv.Itoa(storage.ItemSize(it) + len(mapSize) + sizeSlack))
	return it
}

// decodedEvent is an event read from an item, with the sort key it would
// have in the row layout, which orders it in the merge.
type decodedEvent struct {
	ev event.Event
	sk string
	// js, when not nil, is the event's JSON, and ev holds no fields: a
	// row item of a JSON read (source.take).
	js []byte
}

// decodeMapItem appends the events of a map item to dst. Events whose id
// the item lists but no field map holds have no fields.
func decodeMapItem(dst []decodedEvent, it storage.Item, series string) []decodedEvent {
	ms, ok := parseTimeKey(it.SK[:timeKeyLen])
	if !ok {
		return dst
	}
	ids, _ := it.Attrs[mapIDs].([]any)
	if len(ids) == 0 {
		return dst
	}
	nanos, _ := it.Attrs[mapNanos].(map[string]any)
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
		dst = append(dst, decodedEvent{ev: event.Event{Time: t, Series: series, ID: id, Fields: map[string]any{}}, sk: sortKey(t, id)})
	}
	for name, v := range it.Attrs {
		m, ok := v.(map[string]any)
		if !ok || strings.HasPrefix(name, "tt_") {
			continue
		}
		for id, val := range m {
			if i, ok := at[id]; ok {
				dst[i].ev.Fields[name] = val
			}
		}
	}
	return dst
}

// sortDecoded orders the events of one millisecond by sort key (time,
// then id), descending when desc, and drops repeats of one event.
func sortDecoded(evs []decodedEvent, desc bool) []decodedEvent {
	slices.SortFunc(evs, func(a, b decodedEvent) int {
		if desc {
			return cmp.Compare(b.sk, a.sk)
		}
		return cmp.Compare(a.sk, b.sk)
	})
	return slices.CompactFunc(evs, func(a, b decodedEvent) bool { return a.sk == b.sk })
}
