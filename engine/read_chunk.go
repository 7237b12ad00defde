package engine

import (
	"slices"
	"time"

	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/storage"
)

// Reads of chunk-layout tables. A chunk's sort key is the time of its
// first event, and its events reach to the end of its window, so a
// partition of a chunk-layout table is read a window at a time: its key
// range starts at the window of the range's start (chunk.LowKey), and the
// items whose sort keys' times lie in one window (chunks, and the rows of
// events too large to be a chunk, or written while the table was of
// another layout) are decoded together by chunk.WindowEvents, which keeps
// each event once, then sorted, cut to the range, cursor and filter, and
// projected, as the map layout's milliseconds are (source.fill). The
// store neither filters nor projects a chunk-layout partition: a chunk's
// attributes are not its events' fields.

// chunkWindow returns the window of a table's chunks: zero for a table
// that holds none, and for an archived table, whose archive reader
// returns every event as a row item, each once (archivedRows).
func chunkWindow(t physTable) time.Duration {
	if t.entry == nil || archivedRows(t) {
		return 0
	}
	return t.entry.ChunkWindow()
}

// windowOf returns the start, in Unix nanoseconds, of the window of the
// time of a sort key.
func windowOf(sk string, window time.Duration) (int64, bool) {
	t, ok := chunk.KeyTime(sk)
	if !ok {
		return 0, false
	}
	return chunk.WindowStart(t, window).UnixNano(), true
}

// fillWindow decodes the window of item first, every item of it, into
// buf, in merge order and cut to the selection.
func (s *source) fillWindow(first sourceItem) error {
	start, ok := windowOf(first.item.SK, s.window)
	if !ok {
		return nil // not an event item
	}
	items := []storage.Item{first.item}
	s.boundWindow(start)
	for {
		e, ok, err := s.nextItem()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if w, ok := windowOf(e.item.SK, s.window); !ok || w != start {
			s.pending = &e
			break
		}
		items = append(items, e.item)
	}
	s.unboundWindow()
	buf, err := chunk.WindowEvents(s.buf[:0], items, s.scheme)
	if err != nil {
		return err
	}
	if s.q.Desc {
		slices.Reverse(buf)
	}
	s.buf = slices.DeleteFunc(buf, func(d itemenc.DecodedEvent) bool { return !s.win.selects(d, s.series) })
	for _, d := range s.buf {
		s.win.projectAll(d.Event.Fields)
	}
	return nil
}

// projectAll keeps of fields those the query returns, all when it names
// none: for events the store did not project.
func (w *selection) projectAll(fields map[string]any) {
	if w.fields == nil {
		return
	}
	for name := range fields {
		if !slices.Contains(w.fields, name) {
			delete(fields, name)
		}
	}
}

// windowBounds are a source's range while it reads the rest of a window
// (source.boundWindow).
type windowBounds struct {
	// low and high are the range of the source's query.
	low, high string
	// end is the key the items after the window lie past, in the
	// query's direction.
	end string
	// cut is set once the query's Low or High is the window's.
	cut bool
}

// boundWindow cuts the pages a source reads item by item from now on
// to the window starting at start (Unix nanoseconds), whose first item
// in the query's direction it has: the next page ends at the window's
// edge rather than reading an item of the next window, which the merge
// may never need. A read of a series' latest events, whose newest window
// holds enough of them in one chunk, so reads that one item. The query's
// range comes back once the window is read (nextItem), or at once when
// the page being read reaches past it (unboundWindow).
func (s *source) boundWindow(start int64) {
	if s.whole {
		return // a page read whole holds what it holds
	}
	b := &windowBounds{low: s.q.Low, high: s.q.High}
	if s.q.Desc {
		b.end = chunk.LowKey(time.Unix(0, start).UTC(), s.window)
		s.q.Low = max(s.q.Low, b.end)
	} else {
		b.end = itemenc.HighKey(time.Unix(0, start+int64(s.window)-1).UTC())
		if s.q.High == "" || b.end < s.q.High {
			s.q.High = b.end
		}
	}
	s.bounds = b
}

// unboundWindow gives a source its query's range back after a window
// whose reading ended before its pages were cut to it.
func (s *source) unboundWindow() {
	if s.bounds != nil {
		s.q.Low, s.q.High = s.bounds.low, s.bounds.high
		s.bounds = nil
	}
}
