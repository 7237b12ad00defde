package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/period"
)

// TestBucketSpanIsBucketStartAndEnd: bucketSpan, which a worker of an
// aggregate of every series finds buckets with in integers, gives the
// buckets bucketStart and bucketEnd give, for buckets of one length with
// and without an offset and for calendar ones, at their edges and
// before 1970.
func TestBucketSpanIsBucketStartAndEnd(t *testing.T) {
	queries := []AggregateQuery{
		{Bucket: time.Hour},
		{Bucket: time.Minute},
		{Bucket: 6 * time.Hour, Offset: 90 * time.Minute},
		{Bucket: 24 * time.Hour, Offset: time.Nanosecond},
		{Bucket: time.Second},
		{Calendar: period.Granularity{Unit: period.CalendarMonth}},
		{Calendar: period.Granularity{Unit: period.Week, WeekStart: time.Monday}},
	}
	var times []time.Time
	for _, base := range []time.Time{time.Date(2026, 11, 5, 13, 0, 0, 0, time.UTC), time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC), time.Unix(0, 0).UTC()} {
		for _, d := range []time.Duration{0, -1, 1, 30 * time.Minute, 90*time.Minute - 1, 90 * time.Minute, 36 * time.Hour, -36 * time.Hour} {
			times = append(times, base.Add(d))
		}
	}
	for _, q := range queries {
		for _, at := range times {
			start, end := q.bucketSpan(at.UnixNano())
			s := q.bucketStart(at)
			require.Equal(t, s.UnixNano(), start, "%+v at %v", q, at)
			require.Equal(t, q.bucketEnd(s).UnixNano(), end, "%+v at %v", q, at)
		}
	}
}
