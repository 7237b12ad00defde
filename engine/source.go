package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// source is one storage query: one partition (series and shard) of one
// physical table.
type source struct {
	table  string
	series string
	// ctx and store serve the queries of nextItem.
	ctx   context.Context
	store storage.Items
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
	page  []storage.Item
	it    storage.Iterator
	read  int
	done  bool
	// grouped reads a millisecond at a time, for partitions holding
	// map-layout items: their events are decoded into buf, sorted, and
	// filtered by win. pending is an item read ahead.
	grouped bool
	win     window
	pending *storage.Item
	buf     []decodedEvent
	// cur is the current event, and sk its sort key, valid while ok.
	cur event.Event
	sk  string
	ok  bool
}

// window is the part of a grouped source's events the query wants: a
// map item holds a whole millisecond, and a range or a cursor may cut
// one.
type window struct {
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

// keep reports whether an event of the series is in the window.
func (w *window) keep(d decodedEvent, series string) bool {
	if d.ev.Time.Before(w.from) || d.ev.Time.After(w.to) {
		return false
	}
	if w.filter != nil && !w.filter.Match(d.ev.Fields) {
		return false
	}
	if w.pos == nil {
		return true
	}
	c := strings.Compare(d.sk, w.posSK)
	if c == 0 {
		c = strings.Compare(series, w.pos.series)
	}
	if w.desc {
		return c < 0
	}
	return c > 0
}

// project drops the fields a filter read that the query does not return.
func (w *window) project(fields map[string]any) {
	if w.filter == nil || w.fields == nil {
		return
	}
	for name := range fields {
		if !slices.Contains(w.fields, name) {
			delete(fields, name)
		}
	}
}

// advance moves a source to its next event.
func (s *source) advance() error {
	for {
		if len(s.buf) > 0 {
			d := s.buf[0]
			s.buf = s.buf[1:]
			s.cur, s.sk, s.ok = d.ev, d.sk, true
			return nil
		}
		item, ok, err := s.nextItem()
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
		if !s.grouped {
			if !isMapSortKey(item.SK) {
				if ev, ok := rowEvent(item, s.series, s.q.Attrs != nil); ok {
					s.win.project(ev.Fields)
					s.cur, s.sk, s.ok = ev, item.SK, true
					return nil
				}
				continue // not an event item
			}
			// A map item in a row-layout table: its layout changed.
			s.grouped = true
		}
		if err := s.fill(item); err != nil {
			s.ok = false
			if errors.Is(err, storage.ErrTableNotFound) {
				return nil
			}
			return fmt.Errorf("query table %q: %w", s.table, err)
		}
	}
}

// ownAttribute reports whether an attribute name is timetable's own
// (tt_...), which no event field can be (package event).
func ownAttribute(name string) bool { return strings.HasPrefix(name, "tt_") }

// rowEvent decodes a row-layout item. An item read whole may hold
// timetable's own attributes, which it drops; one read with a projection
// (projected) holds only the fields the read asked for, never an own
// attribute (newReading), and the map layout's, which a row item does not
// carry: it is taken as it is, without a walk over its attributes.
func rowEvent(item storage.Item, series string, projected bool) (event.Event, bool) {
	t, id, err := parseSortKey(item.SK)
	if err != nil {
		return event.Event{}, false
	}
	fields := item.Attrs
	if !projected {
		maps.DeleteFunc(fields, func(name string, _ any) bool { return ownAttribute(name) })
	}
	return event.Event{Time: t, Series: series, ID: id, Fields: fields}, true
}

// fill decodes the millisecond of item first, every item of it, into buf,
// in merge order and cut to the window.
func (s *source) fill(first storage.Item) error {
	if len(first.SK) < timeKeyLen {
		return nil
	}
	ms := first.SK[:msKeyLen]
	buf := s.decode(nil, first)
	for {
		it, ok, err := s.nextItem()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if !strings.HasPrefix(it.SK, ms) {
			s.pending = &it
			break
		}
		buf = s.decode(buf, it)
	}
	buf = sortDecoded(buf, s.q.Desc)
	s.buf = slices.DeleteFunc(buf, func(d decodedEvent) bool { return !s.win.keep(d, s.series) })
	for _, d := range s.buf {
		s.win.project(d.ev.Fields)
	}
	return nil
}

// decode appends the events of an item of either layout to dst.
func (s *source) decode(dst []decodedEvent, it storage.Item) []decodedEvent {
	if isMapSortKey(it.SK) {
		return decodeMapItem(dst, it, s.series)
	}
	if ev, ok := rowEvent(it, s.series, s.q.Attrs != nil); ok {
		dst = append(dst, decodedEvent{ev: ev, sk: it.SK})
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
func (s *source) nextItem() (storage.Item, bool, error) {
	if s.pending != nil {
		it := *s.pending
		s.pending = nil
		return it, true, nil
	}
	if s.whole {
		// A filtered page may be empty with more to come.
		for len(s.page) == 0 && !s.done {
			if err := s.readPage(); err != nil {
				return storage.Item{}, false, err
			}
		}
		if len(s.page) == 0 {
			return storage.Item{}, false, nil
		}
		it := s.page[0]
		s.page[0] = storage.Item{} // the merge owns it now
		s.page = s.page[1:]
		return it, true, nil
	}
	for !s.done {
		if s.it == nil {
			s.it, s.read = s.store.Query(s.ctx, s.q), 0
		}
		if s.it.Next() {
			it := s.it.Item()
			s.read++
			s.q.After = it.SK
			return it, true, nil
		}
		after, stopped := s.it.Resume()
		err := s.it.Close()
		s.it = nil
		if err != nil {
			s.done = true
			return storage.Item{}, false, err
		}
		// An iterator that stopped at its limit, not at the end, is
		// followed by the next page: a grouped source may need more
		// items than events, and a filtered one examines items it does
		// not return.
		s.done = !stopped
		s.q.After = after
		s.q.Limit = min(2*s.q.Limit, s.maxPage)
	}
	return storage.Item{}, false, nil
}

// readPage reads the next page of a source that reads pages whole.
func (s *source) readPage() error {
	it := s.store.Query(s.ctx, s.q)
	page := make([]storage.Item, 0, min(s.q.Limit, 1024))
	for it.Next() {
		page = append(page, it.Item())
	}
	after, stopped := it.Resume()
	if err := it.Close(); err != nil {
		s.done = true
		return err
	}
	s.page = page
	if !stopped {
		s.done = true
		return nil
	}
	s.q.After = after
	s.q.Limit = min(2*s.q.Limit, s.maxPage)
	return nil
}

// expect raises the size of the source's next page to n items, up to
// maxPage: what the merge expects to need of it.
func (s *source) expect(n int) {
	if s.q.Limit > 0 {
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
}
