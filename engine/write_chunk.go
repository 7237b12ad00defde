package engine

import (
	"fmt"
	"reflect"
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
	type seriesEvents struct {
		evs  []event.Event
		rows []int // rows[k] is the index in w.items of evs[k]'s row item
	}
	bySeries := map[string]*seriesEvents{}
	var order []string
	for j := range w.items {
		i := w.events[j]
		name := events.Series(i)
		g := bySeries[name]
		if g == nil {
			g = &seriesEvents{}
			bySeries[name] = g
			order = append(order, name)
		}
		g.evs = append(g.evs, events.Event(i))
		g.rows = append(g.rows, j)
	}
	items := make([]storage.Item, 0, len(order))
	idx := make([]int, 0, len(order))
	repeats := map[int][]int{}
	for _, name := range order {
		g := bySeries[name]
		packed, alone, err := chunk.Pack(chunk.Series{Tenant: w.tenant, Table: w.ltable, Series: name, Shards: w.table.shards, Expiry: chunk.Expiry{TTL: ttl}}, window, g.evs)
		if err != nil {
			return fmt.Errorf("pack the chunks of series %q: %w", name, err)
		}
		// The request's events of each window, which its chunks stand
		// for.
		byWindow := map[int64][]int{}
		for k, j := range g.rows {
			start := chunk.WindowStart(g.evs[k].Time, window).UnixNano()
			byWindow[start] = append(append(byWindow[start], w.events[j]), w.repeats[j]...)
		}
		for _, it := range packed {
			first, ok := chunk.FirstTime(it.SK)
			if !ok {
				return fmt.Errorf("pack the chunks of series %q: chunk key %q has no time", name, it.SK)
			}
			in := byWindow[chunk.WindowStart(first, window).UnixNano()]
			if len(in) > 1 {
				repeats[len(items)] = in[1:]
			}
			items = append(items, it)
			idx = append(idx, in[0])
		}
		used := make([]bool, len(g.evs))
		for _, ev := range alone {
			k := findEvent(g.evs, used, ev)
			if k < 0 {
				return fmt.Errorf("pack the chunks of series %q: an event left out of its chunk is not among the series' events", name)
			}
			used[k] = true
			j := g.rows[k]
			if r := w.repeats[j]; len(r) > 0 {
				repeats[len(items)] = r
			}
			items = append(items, w.items[j])
			idx = append(idx, w.events[j])
		}
	}
	w.items, w.events, w.repeats = items, idx, repeats
	return nil
}

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
