package engine

import (
	"context"
	"fmt"
	"github.com/timetabledb/timetable/storage"
	"slices"
	"time"

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
var Functions = []string{FnCount, FnSum, FnMin, FnMax, FnAvg, FnFirst, FnLast}

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
}

// numeric reports whether the query asks for a function of numbers.
func (q *AggregateQuery) numeric() bool {
	return slices.ContainsFunc(q.Funcs, func(fn string) bool {
		return fn == FnSum || fn == FnMin || fn == FnMax || fn == FnAvg
	})
}

// Aggregate summarises events in time buckets. It streams over the same
// parallel, merged read path as Query, each event once, and keeps one
// bucket's summary at a time: memory grows with the number of buckets
// returned, not the number of events read.
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
func (db *DB) Aggregate(ctx context.Context, tenant string, q AggregateQuery) ([]Bucket, error) {
	done, err := db.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if err := db.checkAggregate(&q); err != nil {
		return nil, err
	}
	exists, err := db.meta.tableExists(ctx, tenant, q.Table)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTable, q.Table)
	}
	f := db.opts.Config.Family(q.Table)
	if u, ok := db.rollupUnitFor(q); ok && q.Filter == nil {
		return db.aggregateRollups(ctx, tenant, q, f, u)
	}
	tables, err := db.catalog.tables(ctx, f, q.From, q.To)
	if err != nil {
		return nil, err
	}
	rq := Query{Table: q.Table, Series: q.Series, From: q.From, To: q.To, Fields: q.Fields, Filter: q.Filter}
	m, err := db.openSources(ctx, sourceSpec{tenant: tenant, q: rq, tables: tables})
	if err != nil {
		return nil, err
	}
	defer m.close()

	out := newBuckets(&q)
	var cur *part
	var start, end time.Time // cur's bucket
	for {
		ev, ok, err := m.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if cur == nil || !ev.Time.Before(end) {
			if cur != nil {
				if err := out.add(start, cur); err != nil {
					return nil, err
				}
			}
			start = q.bucketStart(ev.Time)
			end, cur = q.bucketEnd(start), &part{}
		}
		cur.add(ev, q.Fields)
	}
	if cur != nil {
		if err := out.add(start, cur); err != nil {
			return nil, err
		}
	}
	return out.done(), nil
}

func (db *DB) checkAggregate(q *AggregateQuery) error {
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
	return nil
}
