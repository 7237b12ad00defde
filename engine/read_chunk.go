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
// that holds none.
func chunkWindow(t physTable) time.Duration {
	if t.entry == nil {
		return 0
	}
	return t.entry.ChunkWindow()
}

// windowOf returns the start, in Unix nanoseconds, of the window of the
// time of a sort key.
func windowOf(sk string, window time.Duration) (int64, bool) {
	if len(sk) < itemenc.TimeKeyLen {
		return 0, false
	}
	t, ok := itemenc.ParseTimeKey(sk[:itemenc.TimeKeyLen])
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
