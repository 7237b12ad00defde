package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/period"
)

// MinBucket is the shortest bucket an aggregate query may ask for.
const MinBucket = time.Second

// Bucket is one time bucket of an aggregate.
type Bucket struct {
	// Start and End are the exact span the bucket covers, [Start, End):
	// a whole aligned bucket (a calendar month is as long as its month),
	// or, at the edges of the query's range, the part of it inside
	// [From, To] (To is inclusive, so such a bucket ends a nanosecond
	// after To).
	Start, End time.Time
	// Partial marks an edge bucket cut by the range: its events are
	// those of its span, not of the whole aligned bucket.
	Partial bool
	// Events is the number of events in the bucket.
	Events int64
	// Values holds, per field, per function, the result: counts are
	// int64; sums, minimums and maximums exact decimals, and averages
	// decimals of AvgDigits significant digits, as json.Number in the
	// canonical form of event numbers; first and last the value as
	// stored.
	Values map[string]map[string]any
}

// MarshalJSON writes a bucket as the HTTP API and the CLI show it:
// {"start": RFC 3339, "end": RFC 3339, "partial": true (edge buckets only),
// "events": N, "values": {field: {fn: result}}}.
func (b Bucket) MarshalJSON() ([]byte, error) {
	return b.AppendJSON(nil)
}

// AppendJSON appends the bucket's MarshalJSON encoding to dst: the bytes
// encoding/json writes for a bucketJSON, written without reflection (an
// aggregate's answer is mostly this), counts and numbers as they are and
// any other value through encoding/json.
func (b Bucket) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"start":"`...)
	dst = b.Start.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","end":"`...)
	dst = b.End.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, '"')
	if b.Partial {
		dst = append(dst, `,"partial":true`...)
	}
	dst = append(dst, `,"events":`...)
	dst = strconv.AppendInt(dst, b.Events, 10)
	dst = append(dst, `,"values":`...)
	if b.Values == nil {
		return append(dst, "null}"...), nil
	}
	dst = append(dst, '{')
	var err error
	// The names of a few fields and functions, the common case, are
	// sorted on the stack.
	var fewFields, fewFns [8]string
	for i, field := range sortedKeys(fewFields[:0], b.Values) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, field)
		dst = append(dst, ':')
		results := b.Values[field]
		if results == nil {
			dst = append(dst, "null"...)
			continue
		}
		dst = append(dst, '{')
		for j, fn := range sortedKeys(fewFns[:0], results) {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, fn)
			dst = append(dst, ':')
			if dst, err = appendResult(dst, results[fn]); err != nil {
				return nil, fmt.Errorf("encode bucket %s: %s %s: %w", b.Start.Format(time.RFC3339Nano), field, fn, err)
			}
		}
		dst = append(dst, '}')
	}
	return append(dst, "}}"...), nil
}

// sortedKeys appends a map's keys to keys, in the order encoding/json
// writes them.
func sortedKeys[V any](keys []string, m map[string]V) []string {
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// appendResult appends one result of a bucket as encoding/json does.
func appendResult(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case int64:
		return strconv.AppendInt(dst, v, 10), nil
	case json.Number:
		if event.IsJSONNumber(string(v)) {
			return append(dst, v...), nil
		}
	}
	b, err := json.Marshal(v)
	return append(dst, b...), err
}

// appendJSONString appends s as encoding/json writes a string: a plain
// one, of printable ASCII that HTML does not escape, as it is, and any
// other through encoding/json.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always encodes
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// bucketJSON is a Bucket as JSON.
type bucketJSON struct {
	Start   string                    `json:"start"`
	End     string                    `json:"end"`
	Partial bool                      `json:"partial,omitempty"`
	Events  int64                     `json:"events"`
	Values  map[string]map[string]any `json:"values"`
}

// UnmarshalJSON reads what MarshalJSON writes, numbers among the values
// as json.Number, so that a bucket read from the HTTP API prints as the
// engine's own does.
func (b *Bucket) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var j bucketJSON
	if err := dec.Decode(&j); err != nil {
		return err
	}
	*b = Bucket{Partial: j.Partial, Events: j.Events, Values: j.Values}
	var err error
	if b.Start, err = time.Parse(time.RFC3339Nano, j.Start); err != nil {
		return fmt.Errorf("bucket start: %w", err)
	}
	if b.End, err = time.Parse(time.RFC3339Nano, j.End); err != nil {
		return fmt.Errorf("bucket end: %w", err)
	}
	return nil
}

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
		if err := q.Calendar.Validate(); err != nil {
			return fmt.Errorf("%w: calendar buckets: %v", ErrBadQuery, err)
		}
		if q.Calendar.Unit > period.Day {
			// At least a week long: 1970 to 2262 is fewer than
			// maxBuckets of them.
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
	if n := q.To.Sub(alignDown(q.From, q.Bucket))/q.Bucket + 1; n > maxBuckets {
		return fmt.Errorf("%w: %d buckets of %s, more than the %d allowed: use a longer bucket or a shorter range", ErrBadQuery, n, q.Bucket, maxBuckets)
	}
	return nil
}

// maxBuckets bounds the buckets one aggregate query may span.
const maxBuckets = 100000

// bucketStart returns the start of the query bucket holding t.
func (q *AggregateQuery) bucketStart(t time.Time) time.Time {
	if q.Calendar.Unit != 0 {
		return q.Calendar.Of(t).Start
	}
	return alignDown(t, q.Bucket)
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
func (bs *buckets) add(start time.Time, p *part) error {
	bs.fill(start)
	b, err := p.bucket(bs.q, start)
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
