// This file is the map layout from the writer's side: a new map item,
// and the sizes an appender adds up to know, without building the item,
// whether events still fit in it.

package itemenc

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	"github.com/timetabledb/timetable/storage"
)

// ClosedSize marks a closed item: no append fits under it.
const ClosedSize = storage.MaxItemSize + 1

// SizeSlack allows for the growth of the MapSize number itself, whose
// own bytes it does not count.
const SizeSlack = 16

// MapEvent is an event on its way into a map item.
type MapEvent struct {
	Index  int // the writer's own index of the event (the engine's: in its tableWrite's items)
	ID     string
	Nanos  int64
	Fields map[string]any
}

// MapItemState is what an appender knows of a stored map item: read from
// the store (Fresh) or predicted from its own appends.
type MapItemState struct {
	Fresh  bool
	Exists bool
	IDs    map[string]struct{}
	Count  int
	Size   int
	Fields map[string]bool
}

// MapStateOf reads a map item's state from the item.
func MapStateOf(it storage.Item) MapItemState {
	st := MapItemState{Fresh: true, Exists: true, IDs: map[string]struct{}{}, Fields: map[string]bool{}}
	ids, _ := it.Attrs[MapIDs].([]any)
	for _, v := range ids {
		if id, ok := v.(string); ok {
			st.IDs[id] = struct{}{}
		}
	}
	st.Count = len(ids)
	st.Size = ClosedSize
	if n, ok := it.Attrs[MapSize].(json.Number); ok {
		if v, err := strconv.ParseFloat(string(n), 64); err == nil && v <= ClosedSize {
			st.Size = int(v)
		}
	}
	for name, v := range it.Attrs {
		if _, ok := v.(map[string]any); ok {
			st.Fields[name] = true
		}
	}
	return st
}

// MapEntrySize returns the bytes one event adds to a map attribute: its key
// and value and the element overhead.
func MapEntrySize(id string, v any) int { return len(id) + storage.ValueSize(v) + 1 }

// NewMapSize returns the bytes a new map attribute costs besides its
// entries: its name and the container overhead.
func NewMapSize(name string) int { return len(name) + 3 }

// NanosValue returns the MapNanos entry of an event.
func NanosValue(n int64) json.Number { return json.Number(strconv.FormatInt(n, 10)) }

// Growth adds up, event by event, the bytes appending events to an item
// grows it by.
type Growth struct {
	// have holds the field maps the item has, or the events so far add.
	have  map[string]bool
	Bytes int
}

// NewGrowth starts counting for an item with the field maps in have.
func NewGrowth(have map[string]bool) *Growth {
	g := &Growth{have: maps.Clone(have)}
	if g.have == nil {
		g.have = map[string]bool{}
	}
	return g
}

// Add counts one more event.
func (g *Growth) Add(e MapEvent) {
	g.Bytes += len(e.ID) + 1 // the MapIDs element
	if e.Nanos != 0 {
		g.entry(MapNanos, e.ID, NanosValue(e.Nanos))
	}
	for f, v := range e.Fields {
		g.entry(f, e.ID, v)
	}
}

func (g *Growth) entry(f, id string, v any) {
	g.Bytes += MapEntrySize(id, v)
	if !g.have[f] {
		g.have[f] = true
		g.Bytes += NewMapSize(f)
	}
}

// AppendCost returns what appending events adds to an item whose map
// attributes are those in have (new maps cost their names too).
func AppendCost(events []MapEvent, have map[string]bool) int {
	g := NewGrowth(have)
	for _, e := range events {
		g.Add(e)
	}
	return g.Bytes
}

// MapDepthProblem returns why an event's fields cannot be stored in the
// map layout for how deep they nest, or "": a map item holds each field's
// value one level below the field's attribute, in the map of event ids,
// so a value may take one level less than storage.MaxDepth. Of several
// such fields it names the smallest.
func MapDepthProblem(fields map[string]any) string {
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

// NewMapItemSize returns the size of a new item of the partition and
// millisecond before any event: its key, its empty id list and nanosecond
// map, and extra. A Growth from NewMapItemFields adds the events' bytes.
func NewMapItemSize(pk, sk string, extra map[string]any) int {
	n := storage.ItemSize(storage.Item{PK: pk, SK: sk, Attrs: extra})
	return n + len(MapIDs) + 3 + NewMapSize(MapNanos)
}

// NewMapItemFields returns the field maps of a new item before any event.
func NewMapItemFields() map[string]bool { return map[string]bool{MapNanos: true} }

// MapItemFor builds a new map item holding events, with its size bound
// recorded, and attrs extra attributes (the TTL).
func MapItemFor(pk, sk string, events []MapEvent, extra map[string]any) storage.Item {
	attrs := make(map[string]any, 4+len(extra))
	ids := make([]any, len(events))
	for i, e := range events {
		ids[i] = e.ID
		if e.Nanos != 0 {
			m, _ := attrs[MapNanos].(map[string]any)
			if m == nil {
				m = map[string]any{}
				attrs[MapNanos] = m
			}
			m[e.ID] = NanosValue(e.Nanos)
		}
		for f, v := range e.Fields {
			m, _ := attrs[f].(map[string]any)
			if m == nil {
				m = map[string]any{}
				attrs[f] = m
			}
			m[e.ID] = v
		}
	}
	attrs[MapIDs] = ids
	if attrs[MapNanos] == nil {
		// Made empty, so that a blind append of an event off the
		// millisecond finds it.
		attrs[MapNanos] = map[string]any{}
	}
	for k, v := range extra {
		attrs[k] = v
	}
	it := storage.Item{PK: pk, SK: sk, Attrs: attrs}
	attrs[MapSize] = json.Number(strconv.Itoa(storage.ItemSize(it) + len(MapSize) + SizeSlack))
	return it
}
