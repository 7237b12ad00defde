package cli

import (
	"fmt"
	"time"

	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// chunkSpan is the window sample events are packed in to measure a
// chunk's bytes an event: long enough to hold a whole sample.
const chunkSpan = 100 * 365 * 24 * time.Hour

// maxChunkSample bounds the events of one series packed at once.
const maxChunkSample = 10000

// chunkSizes measures the chunk layout on events (package engine/chunk,
// as the engine packs them): for each series of two events or more, the
// item of its first event alone and the items of its first events
// together (up to maxChunkSample), as storage.ItemSize counts them. A
// chunk item is then fixed bytes plus perEvent bytes an event: perEvent
// from the difference of the two, weighted by the events measured.
func chunkSizes(evs []event.Event, tenant, table string) (fixed, perEvent float64, err error) {
	bySeries := map[string][]event.Event{}
	var order []string
	for _, ev := range evs {
		if _, ok := bySeries[ev.Series]; !ok {
			order = append(order, ev.Series)
		}
		bySeries[ev.Series] = append(bySeries[ev.Series], ev)
	}
	size := func(s string, evs []event.Event) (float64, error) {
		items, alone, err := chunk.Pack(chunk.Series{Tenant: tenant, Table: table, Series: s, Shards: 1}, chunkSpan, evs)
		if err != nil {
			return 0, fmt.Errorf("pack sample events of series %q: %w", s, err)
		}
		if len(alone) > 0 {
			return 0, fmt.Errorf("sample events of series %q are too large for a chunk", s)
		}
		n := 0
		for _, it := range items {
			n += storage.ItemSize(it)
		}
		return float64(n), nil
	}
	var extra, events, first float64
	series := 0.0
	for _, s := range order {
		evs := bySeries[s]
		if len(evs) < 2 {
			continue
		}
		evs = evs[:min(len(evs), maxChunkSample)]
		one, err := size(s, evs[:1])
		if err != nil {
			return 0, 0, err
		}
		all, err := size(s, evs)
		if err != nil {
			return 0, 0, err
		}
		extra += all - one
		events += float64(len(evs) - 1)
		first += one
		series++
	}
	if series == 0 {
		return 0, 0, fmt.Errorf("measure chunks: the sample needs two events of one series or more")
	}
	perEvent = extra / events
	return first/series - perEvent, perEvent, nil
}
