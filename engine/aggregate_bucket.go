package engine

import (
	"fmt"
	"strings"
	"time"

	"github.com/timetabledb/timetable/engine/internal/agg"
	"github.com/timetabledb/timetable/period"
)

// MinBucket is the shortest bucket an aggregate query may ask for.
const MinBucket = time.Second

// ParseBucket reads the buckets of an aggregate as the HTTP API and the
// CLI take them, into the AggregateQuery fields of the same names:
//
//   - a duration that divides a day, as period.ParseDuration reads it
//     ("1s", "5m", "1h", "6h", "1d"): bucket is set;
//   - "1w" or "week", weeks starting on Sunday at 00:00 UTC as the weekly
//     periods of package period do by default, or "week:monday" (any
//     English weekday) for weeks starting on another day; "1mo" or
//     "month", calendar months; "quarter", calendar quarters: calendar
//     is set.
//
// "hour" and "day" are read as the durations 1h and 1d.
func ParseBucket(s string) (bucket time.Duration, calendar period.Granularity, err error) {
	name := strings.ToLower(strings.TrimSpace(s))
	switch name {
	case "1w":
		name = "week"
	case "1mo":
		name = "month"
	}
	if g, err := period.ParseGranularity(name); err == nil {
		if g.Unit <= period.Day {
			return g.Nominal(), period.Granularity{}, nil
		}
		return 0, g, nil
	}
	if d, err := period.ParseDuration(s); err == nil {
		return d, period.Granularity{}, nil
	}
	return 0, period.Granularity{}, fmt.Errorf("bucket %q: use a duration that divides a day (1m, 1h, 1d), 1w or week:<weekday> for weeks, 1mo for months, or quarter", s)
}

// checkBuckets validates the query's buckets: a fixed length that divides
// a day, or calendar periods. Hours and days given as calendar periods
// become the fixed lengths they are.
func (q *AggregateQuery) checkBuckets() error {
	if q.Calendar != (period.Granularity{}) {
		if q.Bucket != 0 {
			return fmt.Errorf("%w: both a bucket length (%s) and calendar buckets (%s): set one", ErrBadQuery, q.Bucket, q.Calendar)
		}
		if q.Offset != 0 {
			return fmt.Errorf("%w: an offset (%s) shifts buckets of one length, not calendar buckets (%s)", ErrBadQuery, q.Offset, q.Calendar)
		}
		if err := q.Calendar.Validate(); err != nil {
			return fmt.Errorf("%w: calendar buckets: %v", ErrBadQuery, err)
		}
		if q.Calendar.Unit > period.Day {
			// At least a week long: 1970 to 2262 is fewer than
			// maxBuckets of them.
			q.alignTo()
			return nil
		}
		q.Bucket, q.Calendar = q.Calendar.Nominal(), period.Granularity{}
	}
	switch {
	case q.Bucket < MinBucket:
		return fmt.Errorf("%w: bucket %s is shorter than the shortest allowed, %s", ErrBadQuery, q.Bucket, MinBucket)
	case q.Bucket > 24*time.Hour:
		return fmt.Errorf("%w: bucket %s is longer than a day: use calendar buckets for weeks (1w) and months (1mo)", ErrBadQuery, q.Bucket)
	case (24*time.Hour)%q.Bucket != 0:
		return fmt.Errorf("%w: bucket %s does not divide a day, so buckets would not align to UTC midnight", ErrBadQuery, q.Bucket)
	}
	if q.Offset < 0 || q.Offset >= q.Bucket {
		return fmt.Errorf("%w: offset %s: buckets of %s take an offset of at least 0 and less than the bucket", ErrBadQuery, q.Offset, q.Bucket)
	}
	q.alignTo()
	if n := q.To.Sub(q.bucketStart(q.From))/q.Bucket + 1; n > maxBuckets {
		return fmt.Errorf("%w: %d buckets of %s, more than the %d allowed: use a longer bucket or a shorter range", ErrBadQuery, n, q.Bucket, maxBuckets)
	}
	return nil
}

// alignTo ends the range before To when To is the start of a bucket
// and not also From: the range then ends with the bucket before, whole,
// rather than with a bucket a nanosecond wide holding the events of the
// instant To alone. "from=00:00&to=01:00&bucket=1h" is one hour, one
// bucket.
func (q *AggregateQuery) alignTo() {
	if q.To.After(q.From) && q.bucketStart(q.To).Equal(q.To) {
		q.To = q.To.Add(-time.Nanosecond)
	}
}

// maxBuckets bounds the buckets one aggregate query may span.
const maxBuckets = 100000

// bucketStart returns the start of the query bucket holding t.
func (q *AggregateQuery) bucketStart(t time.Time) time.Time {
	if q.Calendar.Unit != 0 {
		return q.Calendar.Of(t).Start
	}
	return alignDown(t.Add(-q.Offset), q.Bucket).Add(q.Offset)
}

// bucketSpan returns the start and end (Unix nanoseconds) of the query
// bucket holding t (Unix nanoseconds): bucketStart and bucketEnd's, in
// integers for buckets of one length, through times for calendar ones.
func (q *AggregateQuery) bucketSpan(t int64) (start, end int64) {
	if q.Calendar.Unit != 0 {
		s := q.bucketStart(time.Unix(0, t).UTC())
		return s.UnixNano(), q.bucketEnd(s).UnixNano()
	}
	b, off := int64(q.Bucket), int64(q.Offset)
	x := t - off
	start = x - ((x%b)+b)%b + off // alignDown's, shifted by the offset
	return start, start + b
}

// bucketEnd returns the end of the query bucket starting at start: the
// start of the next.
func (q *AggregateQuery) bucketEnd(start time.Time) time.Time {
	if q.Calendar.Unit != 0 {
		return q.Calendar.Of(start).End
	}
	return start.Add(q.Bucket)
}

// bucketAt returns the empty bucket of the aligned bucket starting at
// start, with the exact span it covers in the query's range: the one rule
// for the edges, shared by raw aggregates and rollups.
func (q *AggregateQuery) bucketAt(start time.Time) Bucket {
	b := Bucket{Start: start, End: q.bucketEnd(start), Values: map[string]map[string]any{}}
	if b.Start.Before(q.From) {
		b.Start, b.Partial = q.From, true
	}
	if end := q.To.Add(time.Nanosecond); b.End.After(end) {
		b.End, b.Partial = end, true
	}
	return b
}

// bucketOf returns the query bucket starting at start that s summarises,
// with the query's functions of its fields: an error (ErrBadQuery) when
// a function needs numbers and a field holds something else.
func (q *AggregateQuery) bucketOf(s *agg.Summary, start time.Time) (Bucket, error) {
	b, err := s.Bucket(q.bucketAt(start), start, q.Fields, q.Funcs, q.numeric(), q.Rank)
	if err != nil {
		return Bucket{}, fmt.Errorf("%w: %v", ErrBadQuery, err)
	}
	return b, nil
}

// alignDown returns the start of the fixed-length bucket holding t;
// buckets divide a day, so they align to the Unix epoch and to every UTC
// midnight.
func alignDown(t time.Time, bucket time.Duration) time.Time {
	ns := t.UnixNano()
	b := int64(bucket)
	return time.Unix(0, ns-((ns%b)+b)%b).UTC()
}

// buckets collects an aggregate's answer in time order, adding the empty
// buckets between when the query asks for them.
type buckets struct {
	q    *AggregateQuery
	out  []Bucket
	next time.Time // the start of the first bucket not yet in out
}

func newBuckets(q *AggregateQuery) *buckets {
	return &buckets{q: q, next: q.bucketStart(q.From)}
}

// add adds the bucket starting at start that p summarises; buckets come
// in time order.
func (bs *buckets) add(start time.Time, p *agg.Summary) error {
	bs.fill(start)
	b, err := bs.q.bucketOf(p, start)
	if err != nil {
		return err
	}
	bs.out = append(bs.out, b)
	bs.next = bs.q.bucketEnd(start)
	return nil
}

// fill adds the empty buckets before until, when the query asks for them.
func (bs *buckets) fill(until time.Time) {
	for ; bs.q.Fill && bs.next.Before(until); bs.next = bs.q.bucketEnd(bs.next) {
		bs.out = append(bs.out, bs.q.bucketAt(bs.next))
	}
}

// done returns the answer, filled to the end of the range.
func (bs *buckets) done() []Bucket {
	bs.fill(bs.q.To.Add(time.Nanosecond))
	return bs.out
}
