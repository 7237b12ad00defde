package engine

import (
	"container/heap"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/storage"
)

// Query returns a page of the events of a logical table in a time range,
// in time order, each event once. See the package documentation for how
// the read fans out and merges.
func (db *DB) Query(ctx context.Context, tenant string, q Query) (Page, error) {
	var p Page
	_, cursor, gaps, err := db.query(ctx, tenant, q, false, func(s *source) error {
		p.Events = append(p.Events, s.cur)
		return nil
	})
	if err != nil {
		return Page{}, err
	}
	p.NextCursor, p.Gaps = cursor, gaps
	return p, nil
}

// JSONPage is one page of a query's answer as JSON (DB.QueryJSON).
type JSONPage struct {
	// Events is the dst QueryJSON was given with the page's events
	// appended, in the order of Page.Events, each as
	// event.Event.AppendJSON writes it, separated by commas: the inside
	// of a JSON array.
	Events []byte
	// Count is the number of events.
	Count int
	// NextCursor is Page.NextCursor.
	NextCursor string
	// Gaps is Page.Gaps.
	Gaps []Gap
}

// QueryJSON answers a query as Query does, with the page's events
// written as JSON, appended to dst, byte for byte what AppendJSON writes
// of Query's events. It writes the events of row-layout items straight
// from the stored attributes, building no event's Fields: the read a
// server answers with JSON.
func (db *DB) QueryJSON(ctx context.Context, tenant string, q Query, dst []byte) (JSONPage, error) {
	written := 0
	n, cursor, gaps, err := db.query(ctx, tenant, q, true, func(s *source) error {
		if written > 0 {
			dst = append(dst, ',')
		}
		written++
		if s.js != nil {
			dst = append(dst, s.js...)
			return nil
		}
		var err error
		dst, err = s.cur.AppendJSON(dst)
		return err
	})
	if err != nil {
		return JSONPage{}, err
	}
	return JSONPage{Events: dst, Count: n, NextCursor: cursor, Gaps: gaps}, nil
}

// query reads a page of a query, calling emit with the source of each of
// its events in turn (merger.next), and returns how many there were and
// the cursor after the last when more follow, and the gaps of the range
// left to read. json reads row items as their events' JSON (source.json).
func (db *DB) query(ctx context.Context, tenant string, q Query, json bool, emit func(*source) error) (int, string, []Gap, error) {
	done, err := db.enter()
	if err != nil {
		return 0, "", nil, err
	}
	defer done()
	start := time.Now()
	limit, err := db.checkQuery(&q)
	if err != nil {
		return 0, "", nil, err
	}
	fp := fingerprint(tenant, q)
	var pos *position
	if q.Cursor != "" {
		p, err := decodeCursor(db.meta.secret, fp, q.Cursor)
		if err != nil {
			return 0, "", nil, err
		}
		pos = &p
	}
	exists, err := db.meta.tableExists(ctx, tenant, q.Table)
	if err != nil {
		return 0, "", nil, err
	}
	if !exists {
		return 0, "", nil, fmt.Errorf("%w: %q", ErrUnknownTable, q.Table)
	}

	pol := db.policy(q.Table)
	spec := sourceSpec{tenant: tenant, q: q, layout: pol.Layout.Kind, limit: limit, pos: pos, json: json}
	from, to := spec.span()
	var gaps []Gap
	spec.tables, gaps, err = db.catalog.tablesAndGaps(ctx, pol.Family, from, to)
	if err != nil {
		return 0, "", nil, err
	}
	m, err := db.openSources(ctx, spec)
	if err != nil {
		return 0, "", nil, err
	}
	defer m.close()
	n, cursor, err := m.page(limit, emit, func(p position) string { return encodeCursor(db.meta.secret, fp, p) })
	db.metrics.observeQuery(readEvents, n, time.Since(start), err)
	if err != nil {
		return 0, "", nil, err
	}
	return n, cursor, gaps, nil
}

// eachEvent calls fn with every event of spec, in the merge's order, each
// once, until fn returns an error.
func (db *DB) eachEvent(ctx context.Context, spec sourceSpec, fn func(ev event.Event) error) error {
	m, err := db.openSources(ctx, spec)
	if err != nil {
		return err
	}
	defer m.close()
	emit := func(s *source) error { return fn(s.cur) }
	for {
		ok, err := m.next(emit)
		if err != nil || !ok {
			return err
		}
	}
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
	if err := checkFilter(q.Filter, q.Fields); err != nil {
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

// checkFilter refuses a filter the stores would refuse, or one naming
// timetable's own attributes (tt_...), which no event field can be.
func checkFilter(f *storage.Filter, fields []string) error {
	if f == nil {
		return nil
	}
	if err := f.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrBadQuery, err)
	}
	if err := checkPushdown(f, fields); err != nil {
		return err
	}
	for _, name := range f.AppendAttrs(nil) {
		if strings.HasPrefix(name, "tt_") {
			return fmt.Errorf("%w: filter: field %q: names starting with tt_ are timetable's own", ErrBadQuery, name)
		}
	}
	return nil
}

// sourceSpec is what openSources merges: the partitions of a tenant's
// query in some physical tables, for a page or for every event.
type sourceSpec struct {
	tenant string
	q      Query
	// layout is the logical table's item layout (its TablePolicy's): map
	// partitions are read in whole milliseconds.
	layout family.Layout
	tables []physTable
	// limit is the events of the page asked for; 0 reads every event
	// (an aggregate).
	limit int
	// pos, when not nil, is the cursor the read resumes after.
	pos *position
	// only, when not nil, reads that one series, the empty one included
	// (q.Series cannot name it: empty means every series).
	only *string
	// json reads row items as their events' JSON (source.json).
	json bool
}

// span returns the range left to read: the query's, cut at the cursor.
func (s sourceSpec) span() (from, to time.Time) {
	from, to = s.q.From, s.q.To
	if s.pos != nil {
		if s.q.Desc {
			to = s.pos.time
		} else {
			from = s.pos.time
		}
	}
	return from, to
}

// openSources returns the merge of a query's partitions: every shard of
// the series asked for, or of every series, in every table. Its first
// events are read by the time it returns; the rest as the merge needs
// them. The caller closes the merge.
func (db *DB) openSources(ctx context.Context, spec sourceSpec) (*merger, error) {
	r := db.newFanOut(ctx, spec)
	series, one := spec.q.Series, spec.q.Series != ""
	if spec.only != nil {
		series, one = *spec.only, true
	}
	switch {
	case one:
		var sources []*source
		for _, t := range spec.tables {
			for shard := range t.shards {
				sources = append(sources, r.source(t, series, shard, pageSizes{first: sourceLimit(spec.limit), max: sourceLimit(spec.limit)}))
			}
		}
		if spec.limit > 0 {
			return db.startLazily(r, sources)
		}
		return db.start(r, sources, nil)
	case spec.limit > 0:
		return db.mergeFirstOfEverySeries(r, spec.tables, spec.limit)
	default:
		return db.mergeEverySeries(r, spec.tables)
	}
}

// fanOut is what every partition of one query reads: its range, cursor,
// layout and fields.
type fanOut struct {
	// ctx serves every storage query of the merge, which outlives
	// openSources.
	ctx      context.Context
	db       *DB
	tenant   string
	q        Query
	from, to time.Time
	pos      *position
	// low and high bound the sort keys; partitions of map items are read
	// in whole milliseconds (perMillisecond), which win cuts.
	low, high      string
	perMillisecond bool
	win            selection
	attrs          []string
	// pushed is the filter the store applies to row-layout partitions
	// (nil without one): the query's, or any map item, which the engine
	// filters event by event (selection.filter).
	pushed *storage.Filter
	// json reads row items as their events' JSON (source.json).
	json bool
}

func (db *DB) newFanOut(ctx context.Context, spec sourceSpec) *fanOut {
	tenant, q, pos := spec.tenant, spec.q, spec.pos
	from, to := spec.span()
	r := &fanOut{
		ctx: ctx, db: db, tenant: tenant, q: q, from: from, to: to, pos: pos,
		low: itemenc.TimeKey(from), high: itemenc.HighKey(to),
		perMillisecond: spec.layout == family.LayoutMap,
		win:            selection{from: from, to: to, desc: q.Desc, pos: pos, filter: q.Filter, fields: q.Fields},
		json:           spec.json,
	}
	if r.perMillisecond {
		r.low, r.high = itemenc.TimeKey(itemenc.Millisecond(from)), itemenc.HighKey(itemenc.LastInstant(to))
	}
	if pos != nil {
		r.win.posSK = itemenc.SortKey(pos.time, pos.id)
	}
	// timetable's own attributes are no event's fields: the projection
	// never asks for them, so that a row item read with it holds the
	// event's fields alone (itemenc.RowEvent).
	r.attrs = projection(q.Fields, q.Filter)
	if q.Filter != nil && !r.perMillisecond {
		r.pushed = pushdown(*q.Filter)
	}
	return r
}

// pageSizes sizes the pages of a source: the first holds first items (no
// limit when 0), each next one twice the one before, up to max. whole
// reads each page whole (see source.nextItem).
type pageSizes struct {
	first, max int
	whole      bool
}

// source returns the reader of one partition: a series' shard in a
// table.
func (r *fanOut) source(t physTable, series string, shard int, p pageSizes) *source {
	sq := storage.Query{
		Table: t.name, PK: itemenc.PartitionKey(r.tenant, r.q.Table, series, shard),
		Low: r.low, High: r.high, Desc: r.q.Desc, Limit: p.first, Attrs: r.attrs, Filter: r.pushed,
	}
	window := chunkWindow(t)
	if window > 0 {
		// A chunk-layout partition is read a window at a time
		// (read_chunk.go), from the window of the range's start, its
		// items whole, neither filtered nor projected by the store; its
		// first page is of one item, since one chunk holds many events.
		sq.Low, sq.Attrs, sq.Filter = min(sq.Low, chunk.LowKey(r.from, window)), nil, nil
		if sq.Limit > 0 {
			sq.Limit = 1
		}
	}
	if r.pos != nil && !r.perMillisecond && window == 0 {
		resume(&sq, series, *r.pos)
	}
	// A partition read in whole milliseconds or windows filters its
	// events itself: it decodes them all.
	json := r.json && !r.perMillisecond && window == 0
	return &source{table: t.name, series: series, period: t.ref.Period, ctx: r.ctx, store: r.db.itemsOf(t), q: sq, maxPage: max(p.first, p.max), whole: p.whole, json: json,
		perMillisecond: r.perMillisecond && window == 0, win: r.win, window: window, scheme: t.entry.IDScheme()}
}

// start reads the first event of every source (firsts). It returns
// their merge, which calls release (if not nil) when closed; on an error
// it closes the sources and calls release itself.
func (db *DB) start(r *fanOut, sources []*source, release func()) (*merger, error) {
	m := &merger{desc: r.q.Desc, sources: sources, release: release}
	if err := firsts(db.opts.QueryParallelism, sources, (*source).advance); err != nil {
		m.close()
		return nil, err
	}
	for _, s := range sources {
		if s.ok {
			m.heap = append(m.heap, s)
		}
	}
	heap.Init(m)
	return m, nil
}

// startLazily returns the merge of the sources of a page of one series,
// which opens a table's partitions only once the table's period could
// hold the merge's next event (merger.openDue): the latest events of a
// series, found in its newest table, never open the older ones. It opens
// the first table's partitions (those of the newest table for a
// descending read, of the oldest for an ascending one) by the time it
// returns.
func (db *DB) startLazily(r *fanOut, sources []*source) (*merger, error) {
	m := &merger{desc: r.q.Desc, sources: sources, parallelism: db.opts.QueryParallelism}
	for _, s := range sources {
		if s.period == (period.Period{}) {
			m.heap = append(m.heap, s) // opened at once: it bounds nothing
		} else {
			m.waiting = append(m.waiting, s)
		}
	}
	if err := firsts(m.parallelism, m.heap, (*source).advance); err != nil {
		m.close()
		return nil, err
	}
	m.heap = slices.DeleteFunc(m.heap, func(s *source) bool { return !s.ok })
	heap.Init(m)
	slices.SortStableFunc(m.waiting, m.compareBounds)
	if err := m.openDue(); err != nil {
		m.close()
		return nil, err
	}
	return m, nil
}

// firsts calls first on every partition reader of a read, in parallel
// (QueryParallelism at a time) when there are several: Pebble's iterators
// are cheap, and DynamoDB's first pages are the slow part. The first
// reader stays on the caller's goroutine, whose stack has grown to what a
// Pebble seek needs, where a new goroutine's would grow again: a read of
// one partition starts no goroutine, and a page of a series, which opens
// one table at a time (startLazily), starts none unless the table has
// several shards.
func firsts[T any](parallelism int, readers []T, first func(T) error) error {
	switch len(readers) {
	case 0:
		return nil
	case 1:
		return first(readers[0])
	}
	var g errgroup.Group
	g.SetLimit(max(1, parallelism-1))
	for _, r := range readers[1:] {
		g.Go(func() error { return first(r) })
	}
	err := first(readers[0])
	if werr := g.Wait(); err == nil {
		err = werr
	}
	return err
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
	key := itemenc.SortKey(pos.time, pos.id)
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
