package engine

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
)

// Query returns a page of the events of a logical table in a time range,
// in time order, each event once. See the package documentation for how
// the read fans out and merges.
func (db *DB) Query(ctx context.Context, tenant string, q Query) (Page, error) {
	done, err := db.enter()
	if err != nil {
		return Page{}, err
	}
	defer done()
	start := time.Now()
	limit, err := db.checkQuery(&q)
	if err != nil {
		return Page{}, err
	}
	fp := fingerprint(tenant, q)
	var pos *position
	if q.Cursor != "" {
		p, err := decodeCursor(db.meta.secret, fp, q.Cursor)
		if err != nil {
			return Page{}, err
		}
		pos = &p
	}
	exists, err := db.meta.tableExists(ctx, tenant, q.Table)
	if err != nil {
		return Page{}, err
	}
	if !exists {
		return Page{}, fmt.Errorf("%w: %q", ErrUnknownTable, q.Table)
	}

	from, to := q.From, q.To
	if pos != nil {
		if q.Desc {
			to = pos.time
		} else {
			from = pos.time
		}
	}
	f := db.opts.Config.Family(q.Table)
	tables, err := db.catalog.tables(ctx, f, from, to)
	if err != nil {
		return Page{}, err
	}
	m, err := db.openSources(ctx, tenant, q, tables, from, to, limit, pos)
	if err != nil {
		return Page{}, err
	}
	defer m.close()
	page, err := m.page(limit, func(p position) string { return encodeCursor(db.meta.secret, fp, p) })
	db.metrics.observeQuery(len(page.Events), time.Since(start), err)
	return page, err
}

// checkRange checks a closed range of event times and puts it in UTC.
func checkRange(from, to *time.Time) error {
	if to.IsZero() {
		return fmt.Errorf("%w: the range needs an end", ErrBadQuery)
	}
	*from, *to = from.UTC(), to.UTC()
	if from.After(*to) {
		return fmt.Errorf("%w: inverted range: from %s is after to %s", ErrBadQuery, from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano))
	}
	return nil
}

// checkQuery validates a query and returns its limit.
func (db *DB) checkQuery(q *Query) (int, error) {
	if err := checkTableName(q.Table); err != nil {
		return 0, err
	}
	if err := checkRange(&q.From, &q.To); err != nil {
		return 0, err
	}
	limit := q.Limit
	switch {
	case limit == 0:
		limit = db.opts.DefaultLimit
	case limit < 0:
		return 0, fmt.Errorf("%w: limit %d is negative", ErrBadQuery, limit)
	case limit > db.opts.MaxLimit:
		return 0, fmt.Errorf("%w: limit %d is over the maximum of %d", ErrBadQuery, limit, db.opts.MaxLimit)
	}
	return limit, nil
}

// source is one storage query: one partition (series and shard) of one
// physical table.
type source struct {
	table  string
	series string
	// ctx and store serve the follow-up queries of nextItem.
	ctx   context.Context
	store storage.Store
	q     storage.Query
	it    storage.Iterator
	// read counts the items the iterator returned, and lastSK is the last
	// one's sort key: an iterator that stops after q.Limit items is
	// followed by another from lastSK.
	read   int
	lastSK string
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
}

// keep reports whether an event of the series is in the window.
func (w *window) keep(d decodedEvent, series string) bool {
	if d.ev.Time.Before(w.from) || d.ev.Time.After(w.to) {
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
				if ev, ok := rowEvent(item, s.series); ok {
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

// rowEvent decodes a row-layout item.
func rowEvent(item storage.Item, series string) (event.Event, bool) {
	t, id, err := parseSortKey(item.SK)
	if err != nil {
		return event.Event{}, false
	}
	fields := item.Attrs
	for k := range fields {
		if strings.HasPrefix(k, "tt_") {
			delete(fields, k)
		}
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
	return nil
}

// decode appends the events of an item of either layout to dst.
func (s *source) decode(dst []decodedEvent, it storage.Item) []decodedEvent {
	if isMapSortKey(it.SK) {
		return decodeMapItem(dst, it, s.series)
	}
	if ev, ok := rowEvent(it, s.series); ok {
		dst = append(dst, decodedEvent{ev: ev, sk: it.SK})
	}
	return dst
}

// nextItem returns the next item of the partition, reading on past an
// iterator that stopped at its limit.
func (s *source) nextItem() (storage.Item, bool, error) {
	if s.pending != nil {
		it := *s.pending
		s.pending = nil
		return it, true, nil
	}
	for {
		if s.it.Next() {
			it := s.it.Item()
			s.read++
			s.lastSK = it.SK
			return it, true, nil
		}
		if err := s.it.Err(); err != nil {
			return storage.Item{}, false, err
		}
		if s.q.Limit == 0 || s.read < s.q.Limit {
			return storage.Item{}, false, nil
		}
		// The iterator stopped at its limit, not at the end: a grouped
		// source may need more items than events.
		s.it.Close()
		s.q.After, s.read = s.lastSK, 0
		s.it = s.store.Query(s.ctx, s.q)
	}
}

// openSources starts a storage query for every table, series and shard,
// and reads their first events in parallel.
func (db *DB) openSources(ctx context.Context, tenant string, q Query, tables []physTable, from, to time.Time, limit int, pos *position) (*merger, error) {
	m := &merger{desc: q.Desc}
	grouped := db.opts.Config.Layout(q.Table).Layout == family.LayoutMap
	win := window{from: from, to: to, desc: q.Desc, pos: pos}
	if pos != nil {
		win.posSK = sortKey(pos.time, pos.id)
	}
	attrs := q.Fields
	if attrs != nil {
		attrs = append(slices.Clip(attrs), mapIDs, mapNanos)
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(db.opts.QueryParallelism)
	for _, t := range tables {
		g.Go(func() error {
			series := []string{q.Series}
			if q.Series == "" {
				var err error
				series, err = listSeries(gctx, db.store, t.name, tenant, q.Table)
				if errors.Is(err, storage.ErrTableNotFound) {
					// Deleted since the catalog was read: it holds
					// nothing any more.
					db.forgetTable(t)
					return nil
				}
				if err != nil {
					return err
				}
			}
			for _, s := range series {
				for shard := range t.shards {
					sq := storage.Query{
						Table: t.name, PK: partitionKey(tenant, q.Table, s, shard),
						Low: timeKey(from), High: highKey(to),
						Desc: q.Desc, Limit: sourceLimit(limit), Attrs: attrs,
					}
					switch {
					case grouped:
						// Whole milliseconds: the window cuts them.
						sq.Low, sq.High = timeKey(millisecond(from)), highKey(lastInstant(to))
					case pos != nil:
						resume(&sq, s, *pos)
					}
					mu.Lock()
					m.sources = append(m.sources, &source{table: t.name, series: s, ctx: ctx, store: db.store, q: sq, grouped: grouped, win: win})
					mu.Unlock()
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// Pebble's iterators are cheap and DynamoDB's first pages are the
	// slow part: fetch every source's first page at once.
	// The iterators outlive this function, so they take ctx, not a
	// group's context that ends with Wait.
	var first errgroup.Group
	first.SetLimit(db.opts.QueryParallelism)
	for _, s := range m.sources {
		first.Go(func() error {
			s.it = db.store.Query(ctx, s.q)
			return s.advance()
		})
	}
	if err := first.Wait(); err != nil {
		m.close()
		return nil, err
	}
	for _, s := range m.sources {
		if s.ok {
			m.heap = append(m.heap, s)
		}
	}
	heap.Init(m)
	return m, nil
}

// sourceLimit returns the limit of each storage query of a page of limit
// events: one more, since the merge must see whether anything follows the
// last event; no limit when the page has none (limit 0).
func sourceLimit(limit int) int {
	if limit <= 0 {
		return 0
	}
	return limit + 1
}

// resume narrows a partition's query to the events after pos in merge
// order (time, id, series): an event at pos's very time and id is still
// due in a series that sorts after pos's.
func resume(q *storage.Query, series string, pos position) {
	key := sortKey(pos.time, pos.id)
	if q.Desc {
		if series < pos.series {
			q.High = key
		} else {
			q.After = key
		}
		return
	}
	if series > pos.series {
		q.Low = key
	} else {
		q.After = key
	}
}

// merger merges sources in time order. It implements heap.Interface.
type merger struct {
	desc    bool
	sources []*source
	heap    []*source
	// lastSK and lastSeries name the event next returned last, if
	// emitted.
	lastSK, lastSeries string
	emitted            bool
}

func (m *merger) Len() int      { return len(m.heap) }
func (m *merger) Swap(i, j int) { m.heap[i], m.heap[j] = m.heap[j], m.heap[i] }
func (m *merger) Less(i, j int) bool {
	c := compareSources(m.heap[i], m.heap[j])
	if m.desc {
		return c > 0
	}
	return c < 0
}
func (m *merger) Push(x any) { m.heap = append(m.heap, x.(*source)) }
func (m *merger) Pop() any {
	s := m.heap[len(m.heap)-1]
	m.heap = m.heap[:len(m.heap)-1]
	return s
}

// compareSources orders sources by their current events' time, id and
// series. Sort keys order by time and then id, so comparing them does.
func compareSources(a, b *source) int {
	if c := strings.Compare(a.sk, b.sk); c != 0 {
		return c
	}
	return strings.Compare(a.series, b.series)
}

// next returns the next event of the merge, each event once: the same
// event found in two tables (a retry across a month boundary stored it
// twice) is skipped. It reports false at the end.
func (m *merger) next() (event.Event, bool, error) {
	for len(m.heap) > 0 {
		s := m.heap[0]
		ev, dup := s.cur, m.emitted && s.sk == m.lastSK && s.series == m.lastSeries
		m.lastSK, m.lastSeries, m.emitted = s.sk, s.series, true
		if err := s.advance(); err != nil {
			return event.Event{}, false, err
		}
		if s.ok {
			heap.Fix(m, 0)
		} else {
			heap.Pop(m)
		}
		if !dup {
			return ev, true, nil
		}
	}
	return event.Event{}, false, nil
}

// more reports whether an event other than the last one returned remains.
// It drops repeats of the last event off the merge to find out.
func (m *merger) more() (bool, error) {
	for len(m.heap) > 0 {
		s := m.heap[0]
		if !(m.emitted && s.sk == m.lastSK && s.series == m.lastSeries) {
			return true, nil
		}
		if err := s.advance(); err != nil {
			return false, err
		}
		if s.ok {
			heap.Fix(m, 0)
		} else {
			heap.Pop(m)
		}
	}
	return false, nil
}

// page takes up to limit events off the merge, and makes the cursor when
// more remain.
func (m *merger) page(limit int, cursor func(position) string) (Page, error) {
	var p Page
	for len(p.Events) < limit {
		ev, ok, err := m.next()
		if err != nil {
			return Page{}, err
		}
		if !ok {
			return p, nil
		}
		p.Events = append(p.Events, ev)
	}
	more, err := m.more()
	if err != nil {
		return Page{}, err
	}
	if more {
		last := p.Events[len(p.Events)-1]
		p.NextCursor = cursor(position{time: last.Time, id: last.ID, series: last.Series})
	}
	return p, nil
}

func (m *merger) close() {
	for _, s := range m.sources {
		if s.it != nil {
			s.it.Close()
		}
	}
}
