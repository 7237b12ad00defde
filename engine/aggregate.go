package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
	"golang.org/x/sync/errgroup"

	"github.com/timetabledb/timetable/period"
)

// Aggregation functions.
const (
	FnCount = "count" // events that have the field
	FnSum   = "sum"
	FnMin   = "min"
	FnMax   = "max"
	FnAvg   = "avg"
	FnFirst = "first" // the field's value in the bucket's earliest event
	FnLast  = "last"  // the field's value in the bucket's latest event
)

// Functions lists the aggregation functions, in the order results show
// them.
var Functions = []string{FnCount, FnSum, FnMin, FnMax, FnAvg, FnFirst, FnLast, FnCountDistinct, FnP50, FnP90, FnP99, FnDelta, FnRate}

// AggregateQuery asks for fields of a logical table summarised in UTC-aligned
// time buckets.
type AggregateQuery struct {
	Table  string
	Series string // empty: every series
	// From and To bound event times, both inclusive.
	From, To time.Time
	// Bucket is the bucket length: at least a second, and a divisor of a
	// day (1m, 5m, 1h, 6h, 1d, ...), so buckets align to UTC midnight.
	Bucket time.Duration
	// Calendar asks for calendar buckets instead of buckets of one
	// length: weeks starting at 00:00 UTC on its WeekStart, calendar
	// months or calendar quarters, cut as package period cuts periods.
	// Bucket must then be zero. ParseBucket reads either.
	Calendar period.Granularity
	// Fields are the fields to summarise; at least one, unless Funcs is
	// count alone, which counts events.
	Fields []string
	// Funcs are the functions to apply to every field; at least one.
	Funcs []string
	// Fill returns empty buckets too (count 0, other results absent).
	Fill bool
	// Filter, when not nil, summarises only the events it matches (see
	// Query.Filter). Rollups hold every event, so a filtered aggregate
	// always reads the events.
	Filter *storage.Filter
	// GroupBy, for AggregateGroups, summarises each group apart:
	// GroupBySeries for each series, or the name of a field for each of
	// its string values (an event without the field, or with another
	// type in it, is in no group).
	GroupBy string
	// GroupLimit is the most groups one answer holds, in name order
	// (DefaultGroupLimit when zero, at most MaxGroupLimit), and GroupAfter,
	// when not nil, the last group of the previous page (the empty series
	// and the empty string are groups too).
	GroupLimit int
	GroupAfter *string
}

// after reports whether a group's key comes after GroupAfter.
func (q *AggregateQuery) after(key string) bool { return q.GroupAfter == nil || key > *q.GroupAfter }

// numeric reports whether the query asks for a function of numbers.
func (q *AggregateQuery) numeric() bool {
	return slices.ContainsFunc(q.Funcs, func(fn string) bool {
		switch fn {
		case FnSum, FnMin, FnMax, FnAvg, FnP50, FnP90, FnP99, FnDelta, FnRate:
			return true
		}
		return false
	})
}

// Aggregate summarises events in time buckets, each event once. One
// series streams through the merged read path of Query, keeping one
// bucket's summary at a time; every series is summarised series by series,
// QueryParallelism at a time, and the summaries merged by bucket
// (aggregateEachSeries): memory grows with the number of buckets returned
// and the parallelism, not the number of events read.
//
// For a table with rollups and buckets of whole hours or days, or of
// weeks, months or quarters, whole hours or days come from the
// materialized rollups instead (see Rollups in the package
// documentation), with the same answer to the digit.
//
// Sums, minimums and maximums are exact decimals, averages are rounded
// to AvgDigits significant digits (see Aggregates in the package
// documentation). A non-numeric value of a field asked for sum, min, max
// or avg is an error (ErrBadQuery) naming the field and the bucket, and
// the event when it was read raw.
func (db *DB) Aggregate(ctx context.Context, tenant string, q AggregateQuery) (buckets []Bucket, err error) {
	began := time.Now()
	defer func() { db.metrics.observeQuery(readAggregate, 0, time.Since(began), err) }()
	done, err := db.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if q.GroupBy != "" {
		return nil, fmt.Errorf("%w: group_by %q: use AggregateGroups", ErrBadQuery, q.GroupBy)
	}
	if err := db.checkAggregate(ctx, tenant, &q); err != nil {
		return nil, err
	}
	return db.aggregate(ctx, tenant, q)
}

// aggregate answers a checked query of one group: from rollups where it
// can, else from the events.
func (db *DB) aggregate(ctx context.Context, tenant string, q AggregateQuery) ([]Bucket, error) {
	f := db.opts.Config.Family(q.Table)
	if u, ok, _ := db.rollupUnitFor(q); ok {
		return db.aggregateRollups(ctx, tenant, q, f, u)
	}
	tables, err := db.catalog.tables(ctx, f, q.From, q.To)
	if err != nil {
		return nil, err
	}
	if q.Series == "" {
		return db.aggregateEachSeries(ctx, tenant, q, tables)
	}
	spec := sourceSpec{tenant: tenant, q: q.eventQuery(), tables: tables}
	s := newBucketStream(&q)
	err = db.walk(ctx, spec, q.Series, q.Fields, s.addItem)
	if errors.Is(err, errNotRows) {
		return db.streamEvents(ctx, spec, newBucketStream(&q))
	}
	if err != nil {
		return nil, err
	}
	return s.done()
}

// streamEvents summarises the merged events of spec into s.
func (db *DB) streamEvents(ctx context.Context, spec sourceSpec, s *bucketStream) ([]Bucket, error) {
	m, err := db.openSources(ctx, spec)
	if err != nil {
		return nil, err
	}
	defer m.close()
	for {
		ev, ok, err := m.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return s.done()
		}
		if err := s.add(ev); err != nil {
			return nil, err
		}
	}
}

// aggregateEachSeries summarises every series on its own, up to
// QueryParallelism at a time, each into parts by bucket, and merges the
// parts: a summary does not need the events of all series in one time
// order, so no merge across series is paid for, and a slow partition
// holds up only its own series. Each series' events still come in time
// order, which first, last, delta and rate rely on.
func (db *DB) aggregateEachSeries(ctx context.Context, tenant string, q AggregateQuery, tables []physTable) ([]Bucket, error) {
	series, err := db.seriesOf(ctx, tenant, q.Table, tables)
	if err != nil {
		return nil, err
	}
	// The series read at once hold their partitions from the query
	// budget, as a merge of every series does.
	perSeries := 0
	for _, t := range tables {
		perSeries += t.shards
	}
	release, err := db.budget.take(ctx, int64(min(len(series), db.opts.QueryParallelism)*perSeries))
	if err != nil {
		return nil, err
	}
	defer release()
	var mu sync.Mutex
	parts := map[int64]*part{}
	// QueryParallelism workers take the series in turn: each grows its
	// stack to what Pebble's seeks need once, where a goroutine per
	// series would grow one each time.
	g, gctx := errgroup.WithContext(ctx)
	var next atomic.Int64
	for range min(len(series), db.opts.QueryParallelism) {
		g.Go(func() error {
			for i := int(next.Add(1)) - 1; i < len(series); i = int(next.Add(1)) - 1 {
				if err := gctx.Err(); err != nil {
					return err // another series failed
				}
				own, err := db.summarise(gctx, sourceSpec{tenant: tenant, q: q.eventQuery(), tables: tables, only: &series[i]}, &q)
				if err != nil {
					return err
				}
				mu.Lock()
				for k, p := range own {
					if all := parts[k]; all != nil {
						all.merge(p, q.Fields)
					} else {
						parts[k] = p
					}
				}
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return partsToBuckets(parts, q)
}

// summarise reads the events of spec's one series into parts by the
// start of their bucket of q (Unix nanos): straight from the stored items
// (walk), or as events when the series holds map-layout items.
func (db *DB) summarise(ctx context.Context, spec sourceSpec, q *AggregateQuery) (map[int64]*part, error) {
	parts := map[int64]*part{}
	var cur *part
	var start, end int64 // cur's bucket's, Unix nanos
	v := newFieldVisitor(q.Fields)
	err := db.walk(ctx, spec, *spec.only, q.Fields, func(k orderKey, it storage.Iterator) error {
		if cur == nil || k.at < start || k.at >= end {
			s := q.bucketStart(time.Unix(0, k.at).UTC())
			start, end = s.UnixNano(), q.bucketEnd(s).UnixNano()
			if cur = parts[start]; cur == nil {
				cur = &part{want: wantsOf(q.Funcs)}
				parts[start] = cur
			}
		}
		return cur.addItem(k, it, v)
	})
	if errors.Is(err, errNotRows) {
		return db.summariseEvents(ctx, spec, q)
	}
	return parts, err
}

// summariseEvents is summarise through the merge of events.
func (db *DB) summariseEvents(ctx context.Context, spec sourceSpec, q *AggregateQuery) (map[int64]*part, error) {
	m, err := db.openSources(ctx, spec)
	if err != nil {
		return nil, err
	}
	defer m.close()
	parts := map[int64]*part{}
	var cur *part
	var end time.Time // cur's bucket's
	for {
		ev, ok, err := m.next()
		if err != nil || !ok {
			return parts, err
		}
		if cur == nil || !ev.Time.Before(end) {
			start := q.bucketStart(ev.Time)
			end, cur = q.bucketEnd(start), &part{want: wantsOf(q.Funcs)}
			parts[start.UnixNano()] = cur
		}
		cur.add(ev, q.Fields)
	}
}

// eventQuery is the read of the events an aggregate summarises.
func (q *AggregateQuery) eventQuery() Query {
	return Query{Table: q.Table, Series: q.Series, From: q.From, To: q.To, Fields: q.Fields, Filter: q.Filter}
}

// bucketStream summarises events that come in time order into the
// query's buckets, one bucket's part at a time.
type bucketStream struct {
	q          *AggregateQuery
	out        *buckets
	cur        *part
	start, end time.Time // cur's bucket
	v          *fieldVisitor
}

func newBucketStream(q *AggregateQuery) *bucketStream {
	return &bucketStream{q: q, out: newBuckets(q), v: newFieldVisitor(q.Fields)}
}

// add adds the next event.
func (s *bucketStream) add(ev event.Event) error {
	if err := s.reach(ev.Time); err != nil {
		return err
	}
	s.cur.add(ev, s.q.Fields)
	return nil
}

// addItem adds the next event, read in place (walk).
func (s *bucketStream) addItem(k orderKey, it storage.Iterator) error {
	if err := s.reach(time.Unix(0, k.at).UTC()); err != nil {
		return err
	}
	return s.cur.addItem(k, it, s.v)
}

// reach makes cur the part of t's bucket, done with the one before.
func (s *bucketStream) reach(t time.Time) error {
	if s.cur != nil && t.Before(s.end) {
		return nil
	}
	if s.cur != nil {
		if err := s.out.add(s.start, s.cur); err != nil {
			return err
		}
	}
	s.start = s.q.bucketStart(t)
	s.end, s.cur = s.q.bucketEnd(s.start), &part{want: wantsOf(s.q.Funcs)}
	return nil
}

// done returns the buckets.
func (s *bucketStream) done() ([]Bucket, error) {
	if s.cur != nil {
		if err := s.out.add(s.start, s.cur); err != nil {
			return nil, err
		}
	}
	return s.out.done(), nil
}

// checkAggregate checks a query, and that the tenant has the table.
func (db *DB) checkAggregate(ctx context.Context, tenant string, q *AggregateQuery) error {
	if err := q.check(); err != nil {
		return err
	}
	exists, err := db.meta.tableExists(ctx, tenant, q.Table)
	if err != nil {
		return err
	}
	if !exists {
		return fmt.Errorf("%w: %q", ErrUnknownTable, q.Table)
	}
	return nil
}

// check validates a query and fills in its defaults.
func (q *AggregateQuery) check() error {
	if err := checkTableName(q.Table); err != nil {
		return err
	}
	if err := checkRange(&q.From, &q.To); err != nil {
		return err
	}
	if err := q.checkBuckets(); err != nil {
		return err
	}
	if err := checkFilter(q.Filter); err != nil {
		return err
	}
	if len(q.Funcs) == 0 {
		return fmt.Errorf("%w: name at least one function: %v", ErrBadQuery, Functions)
	}
	if len(q.Fields) == 0 && slices.ContainsFunc(q.Funcs, func(fn string) bool { return fn != FnCount }) {
		return fmt.Errorf("%w: name at least one field to aggregate (count alone needs none: it counts events)", ErrBadQuery)
	}
	for _, fn := range q.Funcs {
		if !slices.Contains(Functions, fn) {
			return fmt.Errorf("%w: unknown function %q: use %v", ErrBadQuery, fn, Functions)
		}
	}
	return q.checkGroups()
}
