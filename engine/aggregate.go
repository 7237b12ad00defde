package engine

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
	"golang.org/x/sync/errgroup"

	"github.com/timetabledb/timetable/engine/internal/agg"
	"github.com/timetabledb/timetable/period"
)

// Aggregation functions, package agg's, by name.
const (
	FnCount = agg.FnCount // events that have the field
	FnSum   = agg.FnSum
	FnMin   = agg.FnMin
	FnMax   = agg.FnMax
	FnAvg   = agg.FnAvg
	FnFirst = agg.FnFirst // the field's value in the bucket's earliest event
	FnLast  = agg.FnLast  // the field's value in the bucket's latest event
	// The functions that need more than a running total: they are
	// computed from raw events only (AggregateQuery.Rollups says so).
	FnCountDistinct = agg.FnCountDistinct
	FnP50           = agg.FnP50
	FnP90           = agg.FnP90
	FnP99           = agg.FnP99
	FnDelta         = agg.FnDelta // the increase of a counter over the bucket, resets included
	FnRate          = agg.FnRate  // delta per second of the bucket's span
	FnMedian        = agg.FnMedian
	FnStddev        = agg.FnStddev
)

// Percentile names the function of the percentile q (above 0, at most
// 100): "p95", "p99.9"; p50, p90 and p99 are FnP50, FnP90 and FnP99.
// Any such name is a function as they are: nearest-rank, exact up to
// QuantileExact values per bucket.
func Percentile(q float64) string { return "p" + strconv.FormatFloat(q, 'f', -1, 64) }

// knownFunction reports whether fn is an aggregation function: one of
// Functions or a percentile of any rank.
func knownFunction(fn string) bool {
	_, ok := agg.Quantile(fn)
	return ok || slices.Contains(Functions, fn)
}

// AvgDigits is the significant digits of an average (agg.AvgDigits).
const AvgDigits = agg.AvgDigits

// DistinctExact is how many distinct values count_distinct counts
// exactly, per field and bucket, before it estimates (agg.DistinctExact).
const DistinctExact = agg.DistinctExact

// QuantileExact is how many values of a field p50, p90 and p99 answer
// exactly, per bucket (agg.QuantileExact).
const QuantileExact = agg.QuantileExact

// QuantileAccuracy is the relative accuracy of p50, p90 and p99 past
// QuantileExact values (agg.QuantileAccuracy).
const QuantileAccuracy = agg.QuantileAccuracy

// Rank is how a percentile picks its value: agg.Rank.
type Rank = agg.Rank

// Ranks of percentiles (AggregateQuery.Rank).
const (
	RankNearest  = agg.RankNearest  // ⌈q·n⌉, the nearest rank
	RankInfluxQL = agg.RankInfluxQL // ⌊n·q + 0.5⌋, none when 0, as InfluxQL's percentile
)

// Bucket is one time bucket of an aggregate: agg.Bucket.
type Bucket = agg.Bucket

// Functions lists the aggregation functions, in the order results show
// them; a percentile of any other rank is one too (Percentile).
var Functions = []string{FnCount, FnSum, FnMin, FnMax, FnAvg, FnFirst, FnLast, FnCountDistinct, FnP50, FnP90, FnP99, FnMedian, FnStddev, FnDelta, FnRate}

// AggregateQuery asks for fields of a logical table summarised in UTC-aligned
// time buckets.
type AggregateQuery struct {
	Table  string
	Series string // empty: every series
	// From and To bound event times, both inclusive, except that a To
	// that starts a bucket (and is not From) ends the range just before
	// it: from 00:00 to 01:00 by the hour is one bucket.
	From, To time.Time
	// Bucket is the bucket length: at least a second, and a divisor of a
	// day (1m, 5m, 1h, 6h, 1d, ...), so buckets align to UTC midnight.
	Bucket time.Duration
	// Offset shifts buckets of one length from UTC midnight: they start
	// at midnight + Offset + k·Bucket, as InfluxQL's GROUP BY time(1h,
	// 15m). At least 0 and less than Bucket; zero with Calendar. Rollups
	// serve an offset bucket only when Offset is whole units of theirs.
	Offset time.Duration
	// Rank is how percentiles pick their value while a bucket keeps its
	// values (QuantileExact): RankNearest, the zero value, or
	// RankInfluxQL.
	Rank Rank
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
		case FnSum, FnMin, FnMax, FnAvg, FnMedian, FnStddev, FnDelta, FnRate:
			return true
		}
		_, ok := agg.Quantile(fn)
		return ok
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
	return db.aggregate(ctx, tenant, q, db.policy(q.Table))
}

// AggregateGaps returns the gaps of an aggregate query's range, as a
// query's page names them (Page.Gaps): the parts whose table was deleted
// with no archive the engine can read, which the buckets of Aggregate
// and AggregateGroups leave out, so that an answer over them does not
// read as a period without events.
func (db *DB) AggregateGaps(ctx context.Context, tenant string, q AggregateQuery) ([]Gap, error) {
	done, err := db.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if err := db.checkAggregate(ctx, tenant, &q); err != nil {
		return nil, err
	}
	_, gaps, err := db.catalog.tablesAndGaps(ctx, db.policy(q.Table).Family, q.From, q.To)
	return gaps, err
}

// aggregate answers a checked query of one group: from rollups where it
// can, else from the events.
func (db *DB) aggregate(ctx context.Context, tenant string, q AggregateQuery, pol family.TablePolicy) ([]Bucket, error) {
	tables, err := db.catalog.tables(ctx, pol.Family, q.From, q.To)
	if err != nil {
		return nil, err
	}
	// Rollups live in tables: a range that reaches an archived table is
	// summarised from its events (and no rollup is stored into a home
	// table deleted long ago).
	if u, ok, _ := rollupUnitFor(q, pol.Rollups); ok && !slices.ContainsFunc(tables, func(t physTable) bool { return t.archive != nil }) {
		return db.aggregateRollups(ctx, tenant, q, pol, u, tables)
	}
	if q.Series == "" {
		return db.aggregateEachSeries(ctx, tenant, q, pol.Layout.Kind, tables)
	}
	s := newBucketStream(&q)
	spec := sourceSpec{tenant: tenant, q: q.eventQuery(), layout: pol.Layout.Kind, tables: tables}
	if err := db.aggregateReads(ctx, spec, q.Series, &q, s.at, s.addItem, s.add, nil); err != nil {
		return nil, err
	}
	return s.done()
}

// aggregateEachSeries summarises every series on its own, up to
// QueryParallelism at a time (and no more than GOMAXPROCS under a CPU
// pool, WithCPU), each worker into its own summaries by
// bucket, and merges the workers' summaries: a summary does not need
// the events of all series in one time order, so no merge across series is paid for,
// and a slow partition holds up only its own series. Each series' events
// still come in time order, which first, last, delta and rate rely on.
func (db *DB) aggregateEachSeries(ctx context.Context, tenant string, q AggregateQuery, layout family.Layout, tables []physTable) ([]Bucket, error) {
	series, err := db.seriesOf(ctx, tenant, q.Table, tables)
	if err != nil {
		return nil, err
	}
	if len(series) == 0 {
		// No series in the range: the buckets are empty (and filled
		// when q.Fill asks).
		return partsToBuckets(map[int64]*agg.Summary{}, q)
	}
	// The series read at once hold their partitions from the query
	// budget, as a merge of every series does.
	perSeries := 0
	for _, t := range tables {
		perSeries += t.shards
	}
	workers := min(len(series), db.opts.QueryParallelism)
	cpu := cpuOf(ctx)
	if cpu != nil {
		// A CPU pool says the store's reads are served from memory and
		// local disk (server.Options.CPU): a worker waits on no
		// network, and more workers than cores would only take turns
		// on them, each preempting the others.
		workers = min(workers, runtime.GOMAXPROCS(0))
	}
	release, err := db.budget.reserve(ctx, tenant, int64(workers*perSeries))
	if err != nil {
		return nil, err
	}
	defer release()
	// The workers take the series in turn: each grows its stack to what
	// Pebble's seeks need once, where a goroutine per series would grow
	// one each time.
	own := make([]map[int64]*agg.Summary, workers)
	g, gctx := errgroup.WithContext(ctx)
	var next atomic.Int64
	for w := range own {
		own[w] = map[int64]*agg.Summary{}
		g.Go(func() error {
			sum := newSummariser(&q, own[w])
			defer sum.close()
			// The worker's turn and CPU slot, held for series after
			// series until cpuTurn has passed.
			var done, slot func()
			var since time.Time
			giveBack := func() {
				if slot != nil {
					slot()
					done()
					slot, done = nil, nil
				}
			}
			defer giveBack()
			for i := int(next.Add(1)) - 1; i < len(series); i = int(next.Add(1)) - 1 {
				if err := gctx.Err(); err != nil {
					return err // another series failed
				}
				if slot == nil {
					turn, err := db.turns.wait(gctx, tenant)
					if err != nil {
						return err
					}
					if slot, err = cpu.AcquireFor(gctx, tenant); err != nil {
						turn()
						return err
					}
					done, since = turn, time.Now()
				}
				spec := sourceSpec{tenant: tenant, q: q.eventQuery(), layout: layout, tables: tables}
				if err := db.summariseInto(gctx, spec, series[i], sum); err != nil {
					return err
				}
				// A series' summary runs on the CPU without blocking
				// (Pebble's blocks are in its cache): the worker
				// gives its turn and slot back after cpuTurn, and lets
				// other goroutines run, so that other requests wait
				// for a turn, not for a time slice of each of these
				// workers.
				if time.Since(since) >= cpuTurn {
					giveBack()
					runtime.Gosched()
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	parts := own[0]
	for _, more := range own[1:] {
		for k, p := range more {
			if all := parts[k]; all != nil {
				all.Merge(p, q.Fields)
			} else {
				parts[k] = p
			}
		}
	}
	return partsToBuckets(parts, q)
}

// summarise adds the events of one series of spec into summaries by the
// start of their bucket of q (Unix nanos).
func (db *DB) summarise(ctx context.Context, spec sourceSpec, series string, q *AggregateQuery, parts map[int64]*agg.Summary) error {
	s := newSummariser(q, parts)
	defer s.close()
	return db.summariseInto(ctx, spec, series, s)
}

// summariseInto adds the events of one series of spec to s.
func (db *DB) summariseInto(ctx context.Context, spec sourceSpec, series string, s *summariser) error {
	return db.aggregateReads(ctx, spec, series, s.q, s.bucketOf, s.addItem, s.addEvent, &s.its)
}

// summariser adds the events of series after series into summaries by
// the start of their bucket of q (Unix nanos), parts: one worker's of
// an aggregate of every series. It is made once per worker, with the
// method values a read calls (bucketOf, addItem, addEvent) and the
// iterators it moves from series to series (its), and its summary of
// the last bucket met (cur) serves the next series too, parts being
// one map.
type summariser struct {
	q          *AggregateQuery
	parts      map[int64]*agg.Summary
	cur        *agg.Summary
	start, end int64             // cur's bucket's, Unix nanos
	v          *agg.FieldVisitor // made for the first row a walk meets
	its        partitionIterators
	bucketOf   bucketOfTime
	addItem    func(k agg.OrderKey, it storage.Iterator) error
	addEvent   func(ev event.Event) error
}

func newSummariser(q *AggregateQuery, parts map[int64]*agg.Summary) *summariser {
	s := &summariser{q: q, parts: parts}
	s.bucketOf, s.addItem, s.addEvent = s.at, s.item, s.event
	return s
}

// at returns the summary of the bucket of time t (Unix nanos), and the
// bucket's end.
func (s *summariser) at(t int64) (*agg.Summary, int64, error) {
	if s.cur == nil || t < s.start || t >= s.end {
		s.start, s.end = s.q.bucketSpan(t)
		if s.cur = s.parts[s.start]; s.cur == nil {
			s.cur = &agg.Summary{Want: agg.NeedsOf(s.q.Funcs)}
			s.parts[s.start] = s.cur
		}
	}
	return s.cur, s.end, nil
}

// item adds an event a walk reads in place.
func (s *summariser) item(k agg.OrderKey, it storage.Iterator) error {
	if s.v == nil {
		s.v = agg.NewFieldVisitor(s.q.Fields)
	}
	p, _, _ := s.at(k.At)
	return p.AddItem(k, it, s.v)
}

// event adds an event read whole.
func (s *summariser) event(ev event.Event) error {
	p, _, _ := s.at(ev.Time.UnixNano())
	p.Add(ev, s.q.Fields)
	return nil
}

// close closes the iterators s kept.
func (s *summariser) close() { s.its.close() }

// eventQuery is the read of the events an aggregate summarises.
func (q *AggregateQuery) eventQuery() Query {
	return Query{Table: q.Table, Series: q.Series, From: q.From, To: q.To, Fields: q.Fields, Filter: q.Filter}
}

// bucketStream summarises events that come in time order into the
// query's buckets, one bucket's summary at a time: cur, made once and
// emptied for each bucket after the first (summary).
type bucketStream struct {
	q          *AggregateQuery
	out        *buckets
	cur        *agg.Summary
	summary    agg.Summary
	start, end time.Time // cur's bucket
	endNanos   int64     // end, Unix nanos
	v          *agg.FieldVisitor
}

func newBucketStream(q *AggregateQuery) *bucketStream {
	return &bucketStream{q: q, out: newBuckets(q), v: agg.NewFieldVisitor(q.Fields)}
}

// add adds the next event.
func (s *bucketStream) add(ev event.Event) error {
	if err := s.reach(ev.Time); err != nil {
		return err
	}
	s.cur.Add(ev, s.q.Fields)
	return nil
}

// addItem adds the next event, read in place (walk).
func (s *bucketStream) addItem(k agg.OrderKey, it storage.Iterator) error {
	if err := s.reach(time.Unix(0, k.At).UTC()); err != nil {
		return err
	}
	return s.cur.AddItem(k, it, s.v)
}

// at returns the summary of the bucket of the next event, at t (Unix
// nanoseconds), done with the one before when t is past it, and the
// bucket's end.
func (s *bucketStream) at(t int64) (*agg.Summary, int64, error) {
	if s.cur == nil || t >= s.endNanos {
		if err := s.reach(time.Unix(0, t).UTC()); err != nil {
			return nil, 0, err
		}
	}
	return s.cur, s.endNanos, nil
}

// reach makes cur the summary of t's bucket, done with the one before.
func (s *bucketStream) reach(t time.Time) error {
	if s.cur != nil && t.Before(s.end) {
		return nil
	}
	if s.cur != nil {
		if err := s.out.add(s.start, s.cur); err != nil {
			return err
		}
	}
	// The bucket before is an answer's now (buckets.add), which shares
	// no memory with its summary: the summary is emptied for this one.
	s.start = s.q.bucketStart(t)
	s.end = s.q.bucketEnd(s.start)
	s.endNanos = s.end.UnixNano()
	s.summary = agg.Summary{Want: agg.NeedsOf(s.q.Funcs)}
	s.cur = &s.summary
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
	if err := checkFilter(q.Filter, q.Fields); err != nil {
		return err
	}
	if len(q.Funcs) == 0 {
		return fmt.Errorf("%w: name at least one function: %v", ErrBadQuery, Functions)
	}
	if len(q.Fields) == 0 && slices.ContainsFunc(q.Funcs, func(fn string) bool { return fn != FnCount }) {
		return fmt.Errorf("%w: name at least one field to aggregate (count alone needs none: it counts events)", ErrBadQuery)
	}
	for _, fn := range q.Funcs {
		if !knownFunction(fn) {
			return fmt.Errorf("%w: unknown function %q: use %v", ErrBadQuery, fn, Functions)
		}
	}
	return q.checkGroups()
}
