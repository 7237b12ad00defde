package engine

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

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
