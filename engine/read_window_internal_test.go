package engine

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// windowItems returns the items of one series' hour window as a query
// returns them (in key order, reversed for desc): the chunks of several
// requests whose events overlap in time, some events in several chunks,
// some at one instant, some with the same time and client id but other
// fields than the same event in another chunk (the whole window's
// decoding keeps the copy of the item read first), and rows, some of
// them holding events chunks hold too.
func windowItems(t *testing.T, r *rand.Rand, start time.Time, desc bool) []storage.Item {
	t.Helper()
	s := chunk.Series{Tenant: "acme", Table: "t", Series: "s", Shards: 1}
	hot := start.Add(17 * time.Minute)
	var all, items []storage.Item
	var earlier []event.Event
	for req := range 12 {
		var evs []event.Event
		base := start.Add(time.Duration(r.IntN(50)) * time.Minute)
		for i := range 1 + r.IntN(20) {
			if len(earlier) > 0 && r.IntN(4) == 0 {
				e := earlier[r.IntN(len(earlier))]
				if e.ID != "" && r.IntN(2) == 0 {
					e.Fields = map[string]any{"v": json.Number(fmt.Sprint(1000 + req))} // one key, other fields
				}
				evs = append(evs, e)
				continue
			}
			at := base.Add(time.Duration(r.IntN(10*60_000)) * time.Millisecond)
			if r.IntN(5) == 0 {
				at = hot
			}
			e := event.Event{Time: at, Series: "s", Fields: map[string]any{"v": json.Number(fmt.Sprint(req*100 + i))}}
			if r.IntN(3) == 0 {
				e.ID = fmt.Sprintf("c%d-%d", req, i)
			}
			evs = append(evs, e)
		}
		evs = slices.CompactFunc(evs, func(a, b event.Event) bool { return a.ID != "" && a.ID == b.ID })
		earlier = append(earlier, evs...)
		if req%4 == 3 {
			// Rows: as the row layout writes them, with their ids.
			for _, e := range evs {
				e.AssignID("acme", "t", event.LatestIDScheme)
				attrs := map[string]any{}
				for k, v := range e.Fields {
					attrs[k] = v
				}
				all = append(all, storage.Item{PK: itemenc.PartitionKey("acme", "t", "s", 0), SK: itemenc.SortKey(e.Time, e.ID), Attrs: attrs})
			}
			continue
		}
		packed, alone, err := chunk.Pack(s, time.Hour, evs)
		require.NoError(t, err)
		require.Empty(t, alone)
		all = append(all, packed...)
	}
	slices.SortStableFunc(all, func(a, b storage.Item) int {
		if a.SK < b.SK {
			return -1
		}
		if a.SK > b.SK {
			return 1
		}
		return 0
	})
	// A key written twice is one item: the last write.
	for i, it := range all {
		if i+1 < len(all) && all[i+1].SK == it.SK {
			continue
		}
		items = append(items, it)
	}
	if desc {
		slices.Reverse(items)
	}
	return items
}

// cloneItems copies items deep enough that decoding one copy (which
// takes rows' attributes as events' fields) leaves the other alone.
func cloneItems(items []storage.Item) []storage.Item {
	out := make([]storage.Item, len(items))
	for i, it := range items {
		attrs := make(map[string]any, len(it.Attrs))
		for k, v := range it.Attrs {
			attrs[k] = v
		}
		out[i] = storage.Item{PK: it.PK, SK: it.SK, Attrs: attrs}
	}
	return out
}

// TestLazyWindowIsTheWholeWindow requires a window decoded lazily to
// give, for every selection (ranges cut inside the window, cursors at
// events and between them, both orders), exactly the events, copies
// kept and order, of the whole window decoded at once by
// chunk.WindowEvents and cut to the selection, as reads did before.
func TestLazyWindowIsTheWholeWindow(t *testing.T) {
	start := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed, 3))
		for _, desc := range []bool{false, true} {
			items := windowItems(t, r, start, desc)
			whole, err := chunk.WindowEvents(nil, cloneItems(items), event.LatestIDScheme)
			require.NoError(t, err)
			if desc {
				slices.Reverse(whole)
			}
			sels := []selection{{from: start.Add(-time.Hour), to: start.Add(2 * time.Hour)}}
			for range 6 {
				a, b := start.Add(time.Duration(r.IntN(60))*time.Minute), start.Add(time.Duration(r.IntN(60))*time.Minute)
				if len(whole) > 0 && r.IntN(2) == 0 {
					a = whole[r.IntN(len(whole))].Event.Time
				}
				sels = append(sels, selection{from: a, to: b})
			}
			for k := range sels {
				if sels[k].to.Before(sels[k].from) {
					sels[k].from, sels[k].to = sels[k].to, sels[k].from
				}
			}
			// Cursors at events of the window, and at an instant between.
			for range 6 {
				if len(whole) == 0 {
					break
				}
				d := whole[r.IntN(len(whole))]
				p := &position{time: d.Event.Time, id: d.Event.ID, series: "s"}
				if r.IntN(3) == 0 {
					p.id = ""
				}
				sels = append(sels, selection{from: start, to: start.Add(time.Hour), pos: p, posSK: itemenc.SortKey(p.time, p.id)})
			}
			for i, sel := range sels {
				sel.desc = desc
				var want []itemenc.DecodedEvent
				for _, d := range whole {
					if sel.selects(d, "s") {
						want = append(want, d)
					}
				}
				var spans chunk.SpanReader
				var read []sourceItem
				for _, it := range cloneItems(items) {
					read = append(read, sourceItem{item: it})
				}
				lw, err := (*lazyWindow)(nil).reset("", read, &sel, desc, &spans)
				require.NoError(t, err)
				var got []itemenc.DecodedEvent
				for !lw.done() {
					n := len(got)
					got, err = lw.take(got, event.LatestIDScheme)
					require.NoError(t, err)
					require.Greater(t, len(got), n, "take returns events until the window is read")
				}
				got = slices.DeleteFunc(got, func(d itemenc.DecodedEvent) bool { return !sel.selects(d, "s") })
				if len(want)+len(got) > 0 && !reflect.DeepEqual(want, got) {
					t.Fatalf("seed %d desc %v selection %d (%v to %v, pos %v): want %d events, got %d\nwant %v\ngot  %v", seed, desc, i, sel.from, sel.to, sel.pos, len(want), len(got), keys(want), keys(got))
				}
			}
		}
	}
}

func keys(ds []itemenc.DecodedEvent) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = fmt.Sprintf("%s %v", d.SK, d.Event.Fields)
	}
	return out
}
