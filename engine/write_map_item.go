package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/storage"
)

// closedSize marks a closed item: no append fits under it.
const closedSize = storage.MaxItemSize + 1

// sizeSlack allows for the growth of the itemenc.MapSize number itself, whose
// own bytes it does not count.
const sizeSlack = 16

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
	ids, _ := it.Attrs[itemenc.MapIDs].([]any)
	for _, v := range ids {
		if id, ok := v.(string); ok {
			st.ids[id] = struct{}{}
		}
	}
	st.count = len(ids)
	st.size = closedSize
	if n, ok := it.Attrs[itemenc.MapSize].(json.Number); ok {
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

// nanosValue returns the itemenc.MapNanos entry of an event.
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
	g.bytes += len(e.id) + 1 // the itemenc.MapIDs element
	if e.nanos != 0 {
		g.entry(itemenc.MapNanos, e.id, nanosValue(e.nanos))
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
	return n + len(itemenc.MapIDs) + 3 + newMapSize(itemenc.MapNanos)
}

// newItemFields returns the field maps of a new item before any event.
func newItemFields() map[string]bool { return map[string]bool{itemenc.MapNanos: true} }

// mapItemFor builds a new map item holding events, with its size bound
// recorded, and attrs extra attributes (the TTL).
func mapItemFor(pk, sk string, events []mapEvent, extra map[string]any) storage.Item {
	attrs := make(map[string]any, 4+len(extra))
	ids := make([]any, len(events))
	for i, e := range events {
		ids[i] = e.id
		if e.nanos != 0 {
			m, _ := attrs[itemenc.MapNanos].(map[string]any)
			if m == nil {
				m = map[string]any{}
				attrs[itemenc.MapNanos] = m
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
	attrs[itemenc.MapIDs] = ids
	if attrs[itemenc.MapNanos] == nil {
		// Made empty, so that a blind append of an event off the
		// millisecond finds it.
		attrs[itemenc.MapNanos] = map[string]any{}
	}
	for k, v := range extra {
		attrs[k] = v
	}
	it := storage.Item{PK: pk, SK: sk, Attrs: attrs}
	attrs[itemenc.MapSize] = json.Number(strconv.Itoa(storage.ItemSize(it) + len(itemenc.MapSize) + sizeSlack))
	return it
}
