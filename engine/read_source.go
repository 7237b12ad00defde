package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/storage"
)

// source is one storage query: one partition (series and shard) of one
// physical table.
type source struct {
	table  string
	series string
	// period is the event period of the source's table: every event it
	// holds lies in it (a zero period bounds nothing). A lazy merge opens
	// the source only once the period could hold the merge's next event
	// (merger.openDue).
	period period.Period
	// ctx and store serve the queries of nextItem.
	ctx   context.Context
	store itemQuerier
	// q is the query of the next page: q.Limit items (no limit when 0)
	// after q.After, the last item read. Each page is twice the one
	// before, up to maxPage.
	q       storage.Query
	maxPage int
	// whole reads each page whole into page and lets its iterator go at
	// once; otherwise it reads the page item by item as the merge asks,
	// and read counts the items it returned. done says the partition has
	// no more pages.
	whole bool
	page  []sourceItem
	it    storage.Iterator
	read  int
	done  bool
	// json, for a read that writes its events as JSON (DB.QueryJSON) of a
	// partition read as row-layout, takes each row item straight to its
	// event's JSON (source.readItem), written by a pooled fieldWriter into
	// chunks of arena, and its sort key into chunks of keys.
	json  bool
	arena []byte
	keys  strings.Builder
	// fw is the fieldWriter the source keeps once it reads a second
	// item, and took counts the items it lent one for until then.
	fw   *fieldWriter
	took int
	// perMillisecond reads a millisecond at a time, for partitions holding
	// map-layout items: their events are decoded into buf, sorted, and
	// filtered by win. pending is an item read ahead.
	perMillisecond bool
	win            selection
	pending        *sourceItem
	buf            []itemenc.DecodedEvent
	// window, when not zero, reads a chunk window at a time, for
	// partitions of a chunk-layout table (read_chunk.go): the items whose
	// sort keys' times lie in one window, chunks and rows, decoded
	// together, each event once, and cut by win as a millisecond is.
	// scheme is the table's id scheme, which gives a chunk's events
	// without a client id their ids.
	window time.Duration
	scheme event.IDScheme
	// lazy is the window being read (read_window.go), nil between
	// windows; spans reads its items' spans. items and spare are the
	// memory of the next window's items and reading, reused.
	lazy  *lazyWindow
	spans chunk.SpanReader
	items []sourceItem
	spare *lazyWindow
	// bounds, while a source read item by item reads the rest of a
	// window, holds q's Low and High, which are cut to the window so that
	// no page reads past it (boundWindow), and end the key its
	// following items lie past.
	bounds *windowBounds
	// cur is the current event, and sk its sort key, valid while ok. js,
	// when not nil, is the event's JSON, and cur holds no fields.
	cur event.Event
	js  []byte
	sk  string
	ok  bool
}

// sourceItem is an item as a source holds it: a row item of a JSON read as
// its event's time, id and JSON, any other item as it is. item.SK is
// always the item's sort key.
type sourceItem struct {
	item storage.Item
	time time.Time
	id   string
	js   []byte
	// spanned, for a chunk of a source read a window at a time, says
	// span is the chunk's, item holds its sort key alone and data its
	// chunk (source.readChunk); left says its span misses the source's
	// selection, and item holds its sort key alone.
	span          chunk.Span
	data          []byte
	spanned, left bool
}

// selection is the part of a per-millisecond source's events the query wants: a
// map item holds a whole millisecond, and a range or a cursor may cut
// one.
type selection struct {
	from, to time.Time
	desc     bool
	// pos, when resuming, is the last event returned, and posSK its sort
	// key.
	pos   *position
	posSK string
	// filter, when not nil, keeps only the events it matches; fields, when
	// not nil, are the only fields returned (the filter may read others).
	filter *storage.Filter
	fields []string
}

// selects reports whether an event of the series is in the selection.
func (w *selection) selects(d itemenc.DecodedEvent, series string) bool {
	if d.Event.Time.Before(w.from) || d.Event.Time.After(w.to) {
		return false
	}
	// A row item read as JSON matched the filter the store applied
	// (fanOut.pushed).
	if w.filter != nil && d.JSON == nil && !w.filter.Match(d.Event.Fields) {
		return false
	}
	if w.pos == nil {
		return true
	}
	c := strings.Compare(d.SK, w.posSK)
	if c == 0 {
		c = strings.Compare(series, w.pos.series)
	}
	if w.desc {
		return c < 0
	}
	return c > 0
}

// project drops the fields a filter read that the query does not return.
func (w *selection) project(fields map[string]any) {
	if w.filter == nil || w.fields == nil {
		return
	}
	for name := range fields {
		if !slices.Contains(w.fields, name) {
			delete(fields, name)
		}
	}
}

// returns reports whether an attribute of a row item read is a field the
// query returns: not one of timetable's own, nor one a filter read that
// the query does not return (project).
func (w *selection) returns(name string) bool {
	if itemenc.OwnAttribute(name) {
		return false
	}
	return w.filter == nil || w.fields == nil || slices.Contains(w.fields, name)
}

// advance moves a source to its next event.
func (s *source) advance() error {
	for {
		if len(s.buf) > 0 {
			d := s.buf[0]
			s.buf = s.buf[1:]
			s.cur, s.js, s.sk, s.ok = d.Event, d.JSON, d.SK, true
			return nil
		}
		if s.lazy != nil {
			if err := s.fillLazy(); err != nil {
				s.ok = false
				return fmt.Errorf("query table %q: %w", s.table, err)
			}
			continue
		}
		e, ok, err := s.nextItem()
		if err != nil {
			s.ok = false
			if errors.Is(err, storage.ErrTableNotFound) {
				return nil
			}
			return fmt.Errorf("query table %q: %w", s.table, err)
		}
		if !ok {
			s.ok = false
			return nil
		}
		if s.window == 0 && chunk.IsSortKey(e.item.SK) {
			// A chunk in a table whose entry records no chunk window:
			// read it at the default window all the same.
			s.window, s.perMillisecond = family.DefaultChunkWindow, false
		}
		if s.window > 0 {
			if err := s.fillWindow(e); err != nil {
				s.ok = false
				if errors.Is(err, storage.ErrTableNotFound) {
					return nil
				}
				return fmt.Errorf("query table %q: %w", s.table, err)
			}
			continue
		}
		if !s.perMillisecond {
			if e.js != nil {
				s.cur, s.js, s.sk, s.ok = e.event(s.series), e.js, e.item.SK, true
				return nil
			}
			if !itemenc.IsMapSortKey(e.item.SK) {
				if ev, ok := itemenc.RowEvent(e.item, s.series, s.q.Attrs != nil); ok {
					s.win.project(ev.Fields)
					s.cur, s.js, s.sk, s.ok = ev, nil, e.item.SK, true
					return nil
				}
				continue // not an event item
			}
			// A map item in a row-layout table: its layout changed.
			s.perMillisecond = true
		}
		if err := s.fill(e); err != nil {
			s.ok = false
			if errors.Is(err, storage.ErrTableNotFound) {
				return nil
			}
			return fmt.Errorf("query table %q: %w", s.table, err)
		}
	}
}

// fill decodes the millisecond of item first, every item of it, into buf,
// in merge order and cut to the selection.
func (s *source) fill(first sourceItem) error {
	if len(first.item.SK) < itemenc.TimeKeyLen {
		return nil
	}
	ms := first.item.SK[:itemenc.MillisecondKeyLen]
	buf := s.decode(nil, first)
	for {
		e, ok, err := s.nextItem()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if !strings.HasPrefix(e.item.SK, ms) {
			s.pending = &e
			break
		}
		buf = s.decode(buf, e)
	}
	buf = itemenc.SortDecoded(buf, s.q.Desc)
	s.buf = slices.DeleteFunc(buf, func(d itemenc.DecodedEvent) bool { return !s.win.selects(d, s.series) })
	for _, d := range s.buf {
		s.win.project(d.Event.Fields)
	}
	return nil
}

// decode appends the events of an item of either layout to dst.
func (s *source) decode(dst []itemenc.DecodedEvent, e sourceItem) []itemenc.DecodedEvent {
	if e.js != nil {
		return append(dst, itemenc.DecodedEvent{Event: e.event(s.series), SK: e.item.SK, JSON: e.js})
	}
	it := e.item
	if itemenc.IsMapSortKey(it.SK) {
		return itemenc.DecodeMapItem(dst, it, s.series)
	}
	if ev, ok := itemenc.RowEvent(it, s.series, s.q.Attrs != nil); ok {
		dst = append(dst, itemenc.DecodedEvent{Event: ev, SK: it.SK})
	}
	return dst
}

// nextItem returns the next item of the partition, a page at a time.
//
// A source of a read of every series reads its pages whole, so that a
// partition waiting its turn in the merge, one of thousands, holds its
// page and no iterator; its first page is small, which costs little when
// the merge needs few of its events, as when it reads a partition's first
// event only to learn where it stands, and the doubling keeps the number
// of storage queries logarithmic when the merge needs many. A source of a
// read of one series, one of a few, reads its page item by item as the
// merge asks, and wastes none of it when the merge stops.
func (s *source) nextItem() (sourceItem, bool, error) {
	if s.pending != nil {
		e := *s.pending
		s.pending = nil
		return e, true, nil
	}
	if s.whole {
		// A filtered page may be empty with more to come.
		for len(s.page) == 0 && !s.done {
			if err := s.readPage(); err != nil {
				return sourceItem{}, false, err
			}
		}
		if len(s.page) == 0 {
			return sourceItem{}, false, nil
		}
		e := s.page[0]
		s.page[0] = sourceItem{} // the merge owns it now
		s.page = s.page[1:]
		return e, true, nil
	}
	for !s.done {
		if s.it == nil {
			s.it, s.read = s.store.Query(s.ctx, s.q), 0
		}
		if s.it.Next() {
			e, err := s.readItem(s.it)
			if err != nil {
				s.it.Close()
				s.it, s.done = nil, true
				return sourceItem{}, false, err
			}
			s.read++
			s.q.After = e.item.SK
			return e, true, nil
		}
		after, stopped := s.it.Resume()
		err := s.it.Close()
		s.it = nil
		if err != nil {
			s.done = true
			return sourceItem{}, false, err
		}
		if !stopped && s.bounds != nil && s.bounds.cut {
			// The window's range is read: the items past it follow,
			// in the next page of the range as it was.
			s.q.Low, s.q.High, s.q.After, s.q.Limit = s.bounds.low, s.bounds.high, s.bounds.end, s.bounds.limit
			s.bounds = nil
			return sourceItem{}, false, nil
		}
		// An iterator that stopped at its limit, not at the end, is
		// followed by the next page: a per-millisecond source may need more
		// items than events, and a filtered one examines items it does
		// not return.
		s.done = !stopped
		s.q.After = after
		s.q.Limit = min(2*s.q.Limit, s.maxPage)
		if s.bounds != nil && !s.done {
			s.bounds.cut = true // the next page is the window's
			if s.q.Limit > 0 {
				s.q.Limit = s.windowPage()
			}
		}
	}
	return sourceItem{}, false, nil
}

// readPage reads the next page of a source that reads pages whole.
func (s *source) readPage() error {
	it := s.store.Query(s.ctx, s.q)
	size := min(s.q.Limit, 1024)
	if s.bounds != nil {
		size = min(size, 64) // a window's rest: its limit bounds it, and most hold few items
	}
	page := make([]sourceItem, 0, size)
	for it.Next() {
		e, err := s.readItem(it)
		if err != nil {
			it.Close()
			s.done = true
			return err
		}
		page = append(page, e)
	}
	after, stopped := it.Resume()
	if err := it.Close(); err != nil {
		s.done = true
		return err
	}
	s.page = page
	if !stopped && s.bounds != nil && s.bounds.cut {
		// The window's range is read: the items past it follow, in
		// the next page of the range as it was.
		s.q.Low, s.q.High, s.q.After, s.q.Limit = s.bounds.low, s.bounds.high, s.bounds.end, s.bounds.limit
		s.bounds = nil
		return nil
	}
	if !stopped {
		s.done = true
		return nil
	}
	s.q.After = after
	s.q.Limit = min(2*s.q.Limit, s.maxPage)
	return nil
}

// readItem returns the current item of it as the source keeps it. A row item
// of a JSON read becomes its event's JSON, written from the item's
// attributes in place, and its event's time and id (source.json); any
// other item is decoded whole.
func (s *source) readItem(it storage.Iterator) (sourceItem, error) {
	if s.window > 0 && chunk.IsSortKey(it.SortKey()) {
		return s.readChunk(it)
	}
	if !s.json || itemenc.IsMapSortKey(it.SortKey()) || chunk.IsSortKey(it.SortKey()) {
		item := it.Item()
		return sourceItem{item: item}, it.Err()
	}
	sk := s.copyKey(it.SortKey())
	t, id, err := itemenc.ParseSortKey(sk)
	if err != nil {
		// Not an event item: the merge passes over it (itemenc.RowEvent).
		return sourceItem{item: storage.Item{SK: sk}}, nil
	}
	w := s.writer()
	defer s.unlend(w)
	if err := it.Attrs(w.add); err != nil {
		w.fields.Reset()
		return sourceItem{}, err
	}
	if need := w.fields.Len() + len(s.series) + len(id) + eventHeadRoom; cap(s.arena)-len(s.arena) < need {
		s.arena = make([]byte, 0, max(need, min(2*cap(s.arena), maxChunk)))
	}
	start := len(s.arena)
	if s.arena, err = w.fields.AppendEvent(s.arena, t, s.series, id); err != nil {
		return sourceItem{}, fmt.Errorf("event %s of series %q: %w", sk, s.series, err)
	}
	return sourceItem{item: storage.Item{SK: sk}, time: t, id: id, js: s.arena[start:len(s.arena):len(s.arena)]}, nil
}

// The arena of a JSON read is allocated in chunks, and a new one
// started when the last has too little room left for the next event: the
// events' JSON stays where it was written, as the entries of a page and
// the merge refer to it, and is never copied to grow the arena. A
// source's first chunk holds its first event alone, as a read of every
// series reads one event of each (read_every_series.go), most of which its page
// never holds; each next one is twice the last, up to maxChunk. The sort
// keys' chunks grow the same way. eventHeadRoom is what an event's JSON
// takes besides its fields, series and id (its time, the names, quotes
// and braces); an event whose series or id JSON escapes may take more,
// and its chunk grows, copied, as append grows it.
const (
	maxChunk      = 64 << 10
	eventHeadRoom = 80
)

// fieldWriter gathers the fields of a row item a JSON read returns
// (selection.returns), for FieldsJSON. A source takes one from fieldWriters
// for its first item and gives it back after, and keeps the one it takes
// for its second until it closes: a read of every series has a source
// for each of up to hundreds of thousands of series, most of which read
// one item.
type fieldWriter struct {
	fields event.FieldsJSON
	win    *selection
	add    func(name string, v any) bool
}

var fieldWriters = sync.Pool{New: func() any {
	w := &fieldWriter{}
	w.add = func(name string, v any) bool {
		if w.win.returns(name) {
			w.fields.Add(name, v)
		}
		return true
	}
	return w
}}

// writer returns the fieldWriter of the source's next item, which the
// caller hands to unlend after the item.
func (s *source) writer() *fieldWriter {
	if s.fw != nil {
		return s.fw
	}
	w := fieldWriters.Get().(*fieldWriter)
	w.win = &s.win
	if s.took > 0 {
		s.fw = w // the source's second item: it keeps the writer
	}
	s.took++
	return w
}

// unlend gives w back to fieldWriters unless the source keeps it.
func (s *source) unlend(w *fieldWriter) {
	if w != s.fw {
		w.release()
	}
}

// release puts w back in fieldWriters.
func (w *fieldWriter) release() {
	w.fields.Reset()
	w.win = nil
	fieldWriters.Put(w)
}

// copyKey copies a sort key into the chunk of keys and returns the copy.
// Strings a Builder returns keep their bytes when it grows.
func (s *source) copyKey(sk string) string {
	if s.keys.Cap()-s.keys.Len() < len(sk) {
		last := s.keys.Cap()
		s.keys = strings.Builder{}
		s.keys.Grow(max(len(sk), min(2*last, maxChunk/4)))
	}
	start := s.keys.Len()
	s.keys.WriteString(sk)
	return s.keys.String()[start:]
}

// event returns the event of a row item read as JSON, without its
// fields, which its JSON holds.
func (e sourceItem) event(series string) event.Event {
	return event.Event{Time: e.time, Series: series, ID: e.id}
}

// expect raises the size of the source's next page to n items, up to
// maxPage: what the merge expects to need of it.
func (s *source) expect(n int) {
	if s.q.Limit > 0 && s.window == 0 {
		s.q.Limit = max(s.q.Limit, min(n, s.maxPage))
	}
}

// close lets the source's iterator and page go.
func (s *source) close() {
	if s.it != nil {
		s.it.Close()
		s.it = nil
	}
	s.page = nil
	if s.fw != nil {
		s.fw.release()
		s.fw = nil
	}
}
