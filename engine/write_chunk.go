package engine

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// packChunks turns the row items of a write to a chunk-layout table
// (its registry entry records the layout and window) into chunk items:
// the events of each series and window of the request's span go into
// one item, or as many as keep each under DynamoDB's item limit
// (chunk.Pack). Nothing is read first: a chunk is written whole, keyed
// by its content, so a retried request writes the very items it wrote,
// and a reader drops an event that two chunks of a window hold. An
// event too large to be a chunk alone keeps its row item.
//
// Events without a client id are packed without one, as chunks hold no
// id per event: a reader gives each the id its row would have had. A
// chunk item stands for every event of its series and window in the
// write (tableWrite.appendEvents), so a failed write of one of a
// window's chunks reports the whole window unwritten, which a retry
// writes again without duplicates.
//
// With the family's ttl, a chunk expires when its newest event does
// (chunk.Expiry): its events' row items would expire earlier, by up to
// the window.
func (w *tableWrite) packChunks(events event.Batch, window, ttl time.Duration) error {
	n := len(w.items)
	// The items by series, each series' in their order: a counting sort
	// of their indexes (a span holds a request's events series by
	// series, but a table's share of them need not).
	group := make([]int32, events.SeriesCount()) // 1 + each batch series' group
	var names []string
	var starts []int32 // starts[g] is where series g's items start in order
	gs := make([]int32, n)
	for j := range w.items {
		i := w.events[j]
		g := group[events.SeriesIndex(i)] - 1
		if g < 0 {
			g = int32(len(names))
			group[events.SeriesIndex(i)] = g + 1
			names = append(names, events.Series(i))
			starts = append(starts, 0)
		}
		gs[j] = g
		starts[g]++
	}
	starts = append(starts, int32(n))
	for g, at := len(names)-1, int32(n); g >= 0; g-- {
		at -= starts[g]
		starts[g] = at
	}
	order := make([]int32, n) // item indexes, series by series
	next := slices.Clone(starts[:len(names)])
	for j, g := range gs {
		order[next[g]] = int32(j)
		next[g]++
	}
	// The events, from the batch's columns, their fields in lists
	// (chunk.PackFields) rather than maps: an event's fields are read
	// once, into its chunk's columns.
	evs := make([]event.Event, n)
	fields := make([][]event.Field, n)
	flat := make([]event.Field, 0, 4*n) // the lists' memory
	for k, j := range order {
		i := w.events[j]
		evs[k] = event.Event{Time: events.Time(i), ID: events.ClientID(i)}
		from := len(flat)
		flat = events.AppendFields(flat, i)
		fields[k] = flat[from:len(flat):len(flat)]
	}

	// At most an item an event.
	items := make([]storage.Item, 0, n)
	idx := make([]int, 0, n)
	repeats := make([][]int, 0, n)
	in := make([]int, 0, n) // the events of each window, one after the other
	var windows []eventWindow
	var chunkStarts []int64 // the window start of each of a series' chunks
	var keys keyText
	for g, name := range names {
		gevs, gfields, rows := evs[starts[g]:starts[g+1]], fields[starts[g]:starts[g+1]], order[starts[g]:starts[g+1]]
		var packed []storage.Item
		var alone []event.Event
		var err error
		packed, chunkStarts, alone, err = chunk.PackFields(chunk.Series{Tenant: w.tenant, Table: w.ltable, Series: name, Shards: w.table.shards, Expiry: chunk.Expiry{TTL: ttl}}, window, gevs, gfields, chunkStarts[:0])
		if err != nil {
			return fmt.Errorf("pack the chunks of series %q: %w", name, err)
		}
		// The request's events of each window, which its chunks stand
		// for; PackWindows returns the chunks in the order of their
		// windows, and the start of each one's.
		windows = windows[:0]
		for k, ev := range gevs {
			windows = append(windows, eventWindow{start: chunk.WindowStart(ev.Time, window).UnixNano(), k: int32(k)})
		}
		if !slices.IsSortedFunc(windows, eventWindow.compare) {
			slices.SortStableFunc(windows, eventWindow.compare)
		}
		var held []int // the events of the last chunk's window
		lastStart, at := int64(0), 0
		for k, it := range packed {
			if start := chunkStarts[k]; held == nil || start != lastStart {
				for at < len(windows) && windows[at].start < start {
					at++
				}
				from := len(in)
				for ; at < len(windows) && windows[at].start == start; at++ {
					j := rows[windows[at].k]
					in = append(in, w.events[j])
					if int(j) < len(w.repeats) {
						in = append(in, w.repeats[j]...)
					}
				}
				if len(in) == from {
					return fmt.Errorf("pack the chunks of series %q: chunk %q is of a window none of the series' events is in", name, it.SK)
				}
				held, lastStart = in[from:len(in):len(in)], start
			}
			items = append(items, it)
			idx = append(idx, held[0])
			repeats = append(repeats, held[1:])
		}
		if len(alone) == 0 {
			continue
		}
		// The series' events with their fields, to find those left
		// out among them.
		for k := range gevs {
			gevs[k].Fields = events.Fields(w.events[rows[k]])
		}
		used := make([]bool, len(gevs))
		for _, ev := range alone {
			k := findEvent(gevs, used, ev)
			if k < 0 {
				return fmt.Errorf("pack the chunks of series %q: an event left out of its chunk is not among the series' events", name)
			}
			used[k] = true
			j := rows[k]
			var r []int
			if int(j) < len(w.repeats) {
				r = w.repeats[j]
			}
			it := w.items[j]
			if it.SK == "" {
				// Made without keys (prepareSpan): its provisional
				// ones, which assignKeys makes its own below.
				it = provisionalKeys(it, w.tenant, w.ltable, name, events.Time(w.events[j]), w.table.shards, &keys)
			}
			it, err := rowItem(it, events, w.events[j], ttl)
			if err != nil {
				return fmt.Errorf("pack the chunks of series %q: %w", name, err)
			}
			if w.idsLater && events.ClientID(w.events[j]) == "" {
				// Its row's keys are provisional (splitByTable), and
				// its repeats in the request not found yet: the same
				// time and fields.
				it, _ = w.assignKeys(it, events, w.events[j], name, true, &keys)
				for k := findEvent(gevs, used, ev); k >= 0; k = findEvent(gevs, used, ev) {
					used[k] = true
					r = append(slices.Clip(r), w.events[rows[k]])
				}
			}
			items = append(items, it)
			idx = append(idx, w.events[j])
			repeats = append(repeats, r)
		}
	}
	w.items, w.events, w.repeats = items, idx, repeats
	return nil
}

// chunkRowBound is the most bytes of fields (event.Batch.FieldsBytes)
// an event of a chunk-layout part may take for its row item to be made
// without attributes and unchecked (prepareSpan): its fields go into a
// chunk, and are decoded once, by packChunks, rather than also into the
// attributes of a row item that is not written, and checked as such.
//
// Such an event cannot be refused as an item, so nothing is lost by not
// checking it: its fields passed package event's validation, whose rules
// are DynamoDB's, and no value takes more than 8 bytes in an item for
// each byte it takes in the batch (a number, at least 3 bytes encoded, is
// counted 21 at most and 1 more as an element; a null in a list, 1 byte
// encoded, 2), so that 16 KB of fields make at most 128 KB of
// attributes, and with keys of at most 3 KB (its partition key's length
// is checked all the same: prepareSpan) stay under DynamoDB's 400 KB
// (storage.MaxItemSize). Nor is it left out of its chunk to be written
// as a row (chunk.Pack's alone): the block of that one event, its
// columns a few bytes for each of its fields' bytes at most, is as far
// under the limit. Should its row be written after all (a table of the
// family made in another layout, or an event Pack leaves out), rowItem
// builds it and checks it.
const chunkRowBound = 16 << 10

// bareRow reports whether event i's row item is made without
// attributes in a chunk-layout part (chunkRowBound).
func bareRow(events event.Batch, i int) bool { return events.FieldsBytes(i) <= chunkRowBound }

// rowItem returns it, the row item of event i of a chunk-layout part,
// with its attributes, checked: those of an item made without them
// (bareRow) from the batch, with the expiry of the family's ttl. An item
// made with its attributes is returned as it is.
func rowItem(it storage.Item, events event.Batch, i int, ttl time.Duration) (storage.Item, error) {
	if !bareRow(events, i) {
		return it, nil
	}
	it.Attrs = events.Fields(i)
	if ttl > 0 {
		it.Attrs = withExpiry(it.Attrs, events.Time(i), ttl)
	}
	checked, _, err := it.Checked()
	if err != nil {
		return it, fmt.Errorf("event %d as a row item: %w", i, err)
	}
	return checked, nil
}

// eventWindow is the start of the chunk window of a series' event k, in
// Unix nanoseconds.
type eventWindow struct {
	start int64
	k     int32
}

func (a eventWindow) compare(b eventWindow) int { return cmp.Compare(a.start, b.start) }

// findEvent returns the index among evs, not used yet, of ev: the same
// time, id and fields.
func findEvent(evs []event.Event, used []bool, ev event.Event) int {
	for k, e := range evs {
		if !used[k] && e.Time.Equal(ev.Time) && e.ID == ev.ID && reflect.DeepEqual(e.Fields, ev.Fields) {
			return k
		}
	}
	return -1
}
