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
// another layout) are fetched together and decoded lazily
// (read_window.go): by their spans, in the merge's order, each event
// once, as chunk.WindowEvents decodes a whole window; their events are
// cut to the range, cursor and filter, and projected, as the map
// layout's milliseconds are (source.fill). The store neither filters nor
// projects a chunk-layout partition: a chunk's attributes are not its
// events' fields.

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

// fillWindow reads the window of item first, every item of it, and
// starts its lazy decoding (read_window.go): buf gets its first events
// in merge order, cut to the selection.
func (s *source) fillWindow(first sourceItem) error {
	start, ok := windowOf(first.item.SK, s.window)
	if !ok {
		return nil // not an event item
	}
	// The window's items' keys lie from its time prefix up to the next
	// window's (chunk.LowKey).
	low := chunk.LowKey(time.Unix(0, start).UTC(), s.window)
	high := chunk.LowKey(time.Unix(0, start+int64(s.window)).UTC(), s.window)
	lw := s.spare.reset(s.q.PK, s.q.Desc)
	s.spare = nil
	if err := lw.add(first, &s.win, &s.spans); err != nil {
		return err
	}
	s.boundWindow(start)
	for {
		e, ok, err := s.nextItem()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if e.item.SK < low || e.item.SK >= high {
			s.ahead = e
			s.pending = &s.ahead
			break
		}
		if err := lw.add(e, &s.win, &s.spans); err != nil {
			return err
		}
	}
	s.unboundWindow()
	lw.order()
	s.lazy = lw
	return s.fillLazy()
}

// fillLazy puts in buf the next events of the window being read that
// the selection takes, until it has one or the window is read.
func (s *source) fillLazy() error {
	for len(s.buf) == 0 && s.lazy != nil {
		buf, err := s.lazy.take(s.buf[:0], s.scheme)
		if err != nil {
			s.lazy = nil
			return err
		}
		if s.lazy.done() {
			s.lazy, s.spare = nil, s.lazy
		}
		s.buf = slices.DeleteFunc(buf, func(d itemenc.DecodedEvent) bool { return !s.win.selects(d, s.series) })
		for _, d := range s.buf {
			s.win.projectAll(d.Event.Fields)
		}
	}
	return nil
}

// readChunk returns the current item of it, a chunk of a source read a
// window at a time, with its span, read from the store's memory
// (chunk.SpanReader.ChunkSpan): a chunk whose span misses the selection
// (its range, or behind its cursor) is returned as its sort key alone,
// not copied out of the store, as it is never decoded; any other as its
// sort key and a copy of its chunk (data), which the window's reading
// decodes if it must. Of a paged read of a window many requests wrote,
// most of a page's chunks lie behind its cursor, and a read of a series'
// latest events decodes few of its newest window's chunks. A chunk
// whose span cannot be read is returned whole, for the window's reading
// to report.
func (s *source) readChunk(it storage.Iterator) (sourceItem, error) {
	var data []byte
	if err := it.Attrs(func(name string, v any) bool {
		if chunk.IsDataAttr(name) {
			data, _ = v.([]byte)
			return false
		}
		return true
	}); err != nil {
		return sourceItem{}, err
	}
	if data != nil {
		sk := it.SortKey()
		sp, ok, err := s.spans.ChunkSpan(sk, data)
		if err == nil && (!ok || !s.win.mayHold(sp)) {
			return sourceItem{item: storage.Item{SK: s.copyKey(sk)}, left: true}, nil
		}
		if err == nil {
			return sourceItem{item: storage.Item{SK: s.copyKey(sk)}, data: s.copyData(data), span: sp, spanned: true}, nil
		}
	}
	return sourceItem{item: it.Item()}, it.Err()
}

// copyData copies a chunk's stored form into the source's arena (see
// maxChunk), where it stays until the source is done with it, and
// returns the copy.
func (s *source) copyData(data []byte) []byte {
	if cap(s.arena)-len(s.arena) < len(data) {
		s.arena = make([]byte, 0, max(len(data), min(2*cap(s.arena), maxChunk)))
	}
	start := len(s.arena)
	s.arena = append(s.arena, data...)
	return s.arena[start:len(s.arena):len(s.arena)]
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
	// low and high are the range of the source's query, and limit its
	// page size.
	low, high string
	limit     int
	// end is the key the items after the window lie past, in the
	// query's direction.
	end string
	// cut is set once the query's Low or High is the window's.
	cut bool
}

// boundWindow cuts the pages a source reads from now on to the window
// starting at start (Unix nanoseconds), whose first item in the query's
// direction it has: the next page ends at the window's edge rather than
// reading an item of the next window, which the merge may never need,
// and is as large as a page may be (a source read item by item reads
// the rest of the window in one page, however many items it holds,
// since its span needs them all). A read of a series' latest events so
// reads one window in at most two pages. The query's range comes back
// once the window is read (nextItem, readPage), or at once when the page
// being read reaches past it (unboundWindow).
func (s *source) boundWindow(start int64) {
	if s.done {
		return // no page follows
	}
	b := &windowBounds{low: s.q.Low, high: s.q.High, limit: s.q.Limit}
	if s.q.Desc {
		b.end = chunk.LowKey(time.Unix(0, start).UTC(), s.window)
		s.q.Low = max(s.q.Low, b.end)
	} else {
		b.end = itemenc.HighKey(time.Unix(0, start+int64(s.window)-1).UTC())
		if s.q.High == "" || b.end < s.q.High {
			s.q.High = b.end
		}
	}
	if s.q.Limit > 0 {
		s.q.Limit = s.windowPage()
	}
	// A source read whole holds its page: the next one is the window's.
	b.cut = s.whole
	s.bounds = b
}

// windowPage is the size of the pages that read the rest of a window:
// as large as the source's pages may be when read whole, which it holds
// in memory, and no limit when read item by item.
func (s *source) windowPage() int {
	if s.whole {
		return s.maxPage
	}
	return 0
}

// unboundWindow gives a source its query's range back after a window
// whose reading ended before its pages were cut to it.
func (s *source) unboundWindow() {
	if s.bounds != nil {
		s.q.Low, s.q.High, s.q.Limit = s.bounds.low, s.bounds.high, s.bounds.limit
		s.bounds = nil
	}
}
