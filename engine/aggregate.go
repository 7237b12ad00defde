package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/timetabledb/timetable/event"
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

// MinBucket is the shortest bucket an aggregate query may ask for.
const MinBucket = time.Second

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
	// Fields are the fields to summarise; at least one.
	Fields []string
	// Funcs are the functions to apply to every field; at least one.
	Funcs []string
	// Fill returns empty buckets too (count 0, other results absent).
	Fill bool
}

// Bucket is one time bucket of an aggregate.
type Bucket struct {
	// Start and End are the exact span the bucket covers, [Start, End):
	// a whole aligned bucket, or, at the edges of the query's range, the
	// part of it inside [From, To] (To is inclusive, so such a bucket
	// ends a nanosecond after To).
	Start, End time.Time
	// Partial marks an edge bucket cut by the range: its events are
	// those of its span, not of the whole aligned bucket.
	Partial bool
	// Events is the number of events in the bucket.
	Events int64
	// Values holds, per field, per function, the result. Sums, averages,
	// minimums and maximums are float64; counts int64; first and last the
	// value as stored.
	Values map[string]map[string]any
}

// MarshalJSON writes a bucket as the HTTP API and the CLI show it:
// {"start": RFC 3339, "end": RFC 3339, "partial": true (edge buckets only),
// "events": N, "values": {field: {fn: result}}}.
func (b Bucket) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Start   string                    `json:"start"`
		End     string                    `json:"end"`
		Partial bool                      `json:"partial,omitempty"`
		Events  int64                     `json:"events"`
		Values  map[string]map[string]any `json:"values"`
	}{b.Start.Format(time.RFC3339Nano), b.End.Format(time.RFC3339Nano), b.Partial, b.Events, b.Values})
}

// Aggregate summarises events in time buckets. It streams over the same
// parallel, merged read path as Query, each event once, and keeps one
// bucket's accumulators at a time: memory grows with the number of
// buckets returned, not the number of events read.
//
// For a table with rollups and a bucket of whole hours or days, whole
// hours or days come from the materialized rollups instead (see Rollups
// in the package documentation), with the same answer.
//
// Sums and averages are computed in float64. A non-numeric value of a
// field asked for sum, min, max or avg is an error (ErrBadQuery) naming
// the field and the event's time.
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
	if u, ok := db.rollupUnitFor(q); ok {
		return db.aggregateRollups(ctx, tenant, q, f, u)
	}
	tables, err := db.catalog.tables(ctx, f, q.From, q.To)
	if err != nil {
		return nil, err
	}
	rq := Query{Table: q.Table, Series: q.Series, From: q.From, To: q.To, Fields: q.Fields}
	m, err := db.openSources(ctx, tenant, rq, tables, q.From, q.To, 0, nil)
	if err != nil {
		return nil, err
	}
	defer m.close()

	var out []Bucket
	var cur *accumulator
	next := alignDown(q.From, q.Bucket) // the first bucket not yet emitted
	emit := func(a *accumulator) {
		if q.Fill {
			for ; next.Before(a.start); next = next.Add(q.Bucket) {
				out = append(out, q.bucketAt(next))
			}
		}
		out = append(out, a.bucket())
		next = a.start.Add(q.Bucket)
	}
	for {
		ev, ok, err := m.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		start := alignDown(ev.Time, q.Bucket)
		if cur == nil || !start.Equal(cur.start) {
			if cur != nil {
				emit(cur)
			}
			cur = newAccumulator(start, q)
		}
		if err := cur.add(ev); err != nil {
			return nil, err
		}
	}
	if cur != nil {
		emit(cur)
	}
	if q.Fill {
		for end := alignDown(q.To, q.Bucket); !next.After(end); next = next.Add(q.Bucket) {
			out = append(out, q.bucketAt(next))
		}
	}
	return out, nil
}

// maxBuckets bounds the buckets one aggregate query may span.
const maxBuckets = 100000

func (db *DB) checkAggregate(q *AggregateQuery) error {
	if err := checkTableName(q.Table); err != nil {
		return err
	}
	if err := checkRange(&q.From, &q.To); err != nil {
		return err
	}
	switch {
	case q.Bucket < MinBucket:
		return fmt.Errorf("%w: bucket %s is shorter than the shortest allowed, %s", ErrBadQuery, q.Bucket, MinBucket)
	case (24*time.Hour)%q.Bucket != 0:
		return fmt.Errorf("%w: bucket %s does not divide a day, so buckets would not align to UTC midnight", ErrBadQuery, q.Bucket)
	}
	if n := q.To.Sub(alignDown(q.From, q.Bucket))/q.Bucket + 1; n > maxBuckets {
		return fmt.Errorf("%w: %d buckets of %s, more than the %d allowed: use a longer bucket or a shorter range", ErrBadQuery, n, q.Bucket, maxBuckets)
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

// bucketAt returns the empty bucket of the aligned bucket starting at
// start, with the exact span it covers in the query's range: the one rule
// for the edges, shared by raw aggregates and rollups.
func (q AggregateQuery) bucketAt(start time.Time) Bucket {
	b := Bucket{Start: start, End: start.Add(q.Bucket), Values: map[string]map[string]any{}}
	if b.Start.Before(q.From) {
		b.Start, b.Partial = q.From, true
	}
	if end := q.To.Add(time.Nanosecond); b.End.After(end) {
		b.End, b.Partial = end, true
	}
	return b
}

// alignDown returns the start of the bucket holding t; buckets divide a
// day, so they align to the Unix epoch and to every UTC midnight.
func alignDown(t time.Time, bucket time.Duration) time.Time {
	ns := t.UnixNano()
	b := int64(bucket)
	return time.Unix(0, ns-((ns%b)+b)%b).UTC()
}

// accumulator summarises one bucket.
type accumulator struct {
	start time.Time
	q     *AggregateQuery
	// numeric is set when a function needs numbers.
	numeric bool
	events  int64
	fields  map[string]*fieldAcc
}

type fieldAcc struct {
	count       int64
	sum         float64
	min, max    float64
	first, last any
}

func newAccumulator(start time.Time, q AggregateQuery) *accumulator {
	a := &accumulator{start: start, q: &q, fields: map[string]*fieldAcc{}}
	for _, fn := range q.Funcs {
		switch fn {
		case FnSum, FnMin, FnMax, FnAvg:
			a.numeric = true
		}
	}
	for _, f := range q.Fields {
		a.fields[f] = &fieldAcc{min: math.Inf(1), max: math.Inf(-1)}
	}
	return a
}

func (a *accumulator) add(ev event.Event) error {
	a.events++
	for name, fa := range a.fields {
		v, ok := ev.Fields[name]
		if !ok {
			continue
		}
		if fa.count == 0 {
			fa.first = v
		}
		fa.last = v
		fa.count++
		if !a.numeric {
			continue
		}
		n, isNum := v.(json.Number)
		if !isNum {
			return fmt.Errorf("%w: field %q of the event at %s is %s, not a number: sum, min, max and avg need numbers",
				ErrBadQuery, name, ev.Time.Format(time.RFC3339Nano), kindOf(v))
		}
		x, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return fmt.Errorf("%w: field %q: %v", ErrBadQuery, name, err)
		}
		fa.sum += x
		fa.min = math.Min(fa.min, x)
		fa.max = math.Max(fa.max, x)
	}
	return nil
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}

func (a *accumulator) bucket() Bucket {
	b := a.q.bucketAt(a.start)
	b.Events = a.events
	for name, fa := range a.fields {
		if fa.count == 0 {
			continue
		}
		r := map[string]any{}
		for _, fn := range a.q.Funcs {
			switch fn {
			case FnCount:
				r[fn] = fa.count
			case FnSum:
				r[fn] = fa.sum
			case FnMin:
				r[fn] = fa.min
			case FnMax:
				r[fn] = fa.max
			case FnAvg:
				r[fn] = fa.sum / float64(fa.count)
			case FnFirst:
				r[fn] = fa.first
			case FnLast:
				r[fn] = fa.last
			}
		}
		b.Values[name] = r
	}
	return b
}
