package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/period"
)

// Week, month and quarter buckets are calendar periods: a month bucket is
// as long as its month, weeks start where the period package starts
// them, edge buckets are cut and marked partial as fixed ones are, and
// rollups serve them with the answer raw events give.
func TestAggregateCalendarBuckets(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		jan1 := time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC) // a Sunday
		date := func(m time.Month, d int) time.Time { return time.Date(2017, m, d, 0, 0, 0, 0, time.UTC) }
		f := openRollups(t, b, date(time.April, 1))
		ctx := context.Background()
		// Two events a day from January to March, at the first and the
		// last nanosecond of the day.
		var evs []event.Event
		for d := jan1; d.Before(date(time.April, 1)); d = d.AddDate(0, 0, 1) {
			for _, at := range []time.Time{d, d.AddDate(0, 0, 1).Add(-time.Nanosecond)} {
				evs = append(evs, ev(at, "s", map[string]any{"v": json.Number("0.1")}))
			}
		}
		_, err := f.db.Write(ctx, "acme", "t", evs)
		require.NoError(t, err)
		f.clock.Advance(time.Hour) // past the settle window

		type span struct {
			start, end time.Time
			partial    bool
			events     int64
			sum        json.Number // of "0.1" each: exact, 6.2 and not 6.199999999999999
		}
		agg := func(from, to time.Time, calendar period.Granularity, fill bool) []span {
			t.Helper()
			q := engine.AggregateQuery{Table: "t", From: from, To: to, Calendar: calendar, Fields: []string{"v"}, Funcs: []string{"sum"}, Fill: fill}
			raw, err := f.raw.Aggregate(ctx, "acme", q)
			require.NoError(t, err)
			for range 2 { // computed, then read from the stored rollups
				got, err := f.db.Aggregate(ctx, "acme", q)
				require.NoError(t, err)
				require.Equal(t, raw, got)
			}
			var out []span
			for _, b := range raw {
				s := span{b.Start, b.End, b.Partial, b.Events, ""}
				if v, ok := b.Values["v"]; ok {
					s.sum = v["sum"].(json.Number)
				}
				out = append(out, s)
			}
			return out
		}
		endOf := func(t time.Time) time.Time { return t.Add(-time.Nanosecond) }
		month := period.Granularity{Unit: period.CalendarMonth}

		// Months of 31, 28 and 31 days.
		require.Equal(t, []span{
			{date(time.January, 1), date(time.February, 1), false, 62, "6.2"},
			{date(time.February, 1), date(time.March, 1), false, 56, "5.6"},
			{date(time.March, 1), date(time.April, 1), false, 62, "6.2"},
		}, agg(jan1, endOf(date(time.April, 1)), month, false))
		// Cut at the edges: from noon on the 15th of January to the first
		// instant of the 10th of March.
		require.Equal(t, []span{
			{date(time.January, 15).Add(12 * time.Hour), date(time.February, 1), true, 33, "3.3"},
			{date(time.February, 1), date(time.March, 1), false, 56, "5.6"},
			{date(time.March, 1), date(time.March, 10).Add(1), true, 19, "1.9"},
		}, agg(date(time.January, 15).Add(12*time.Hour), date(time.March, 10), month, false))
		// Filled: December and April are empty, and as long as they are.
		require.Equal(t, []span{
			{time.Date(2016, 12, 1, 0, 0, 0, 0, time.UTC), date(time.January, 1), false, 0, ""},
			{date(time.January, 1), date(time.February, 1), false, 62, "6.2"},
			{date(time.February, 1), date(time.March, 1), false, 56, "5.6"},
			{date(time.March, 1), date(time.April, 1), false, 62, "6.2"},
			{date(time.April, 1), date(time.May, 1), false, 0, ""},
		}, agg(time.Date(2016, 12, 1, 0, 0, 0, 0, time.UTC), endOf(date(time.May, 1)), month, true))

		// Weeks start on Sunday, as periods do unless told otherwise, or
		// on the day asked.
		require.Equal(t, []span{
			{date(time.January, 4), date(time.January, 8), true, 8, "0.8"},
			{date(time.January, 8), date(time.January, 15), false, 14, "1.4"},
			{date(time.January, 15), date(time.January, 21), true, 12, "1.2"},
		}, agg(date(time.January, 4), endOf(date(time.January, 21)), period.Granularity{Unit: period.Week}, false))
		require.Equal(t, []span{
			{date(time.January, 4), date(time.January, 9), true, 10, "1"},
			{date(time.January, 9), date(time.January, 16), false, 14, "1.4"},
			{date(time.January, 16), date(time.January, 21), true, 10, "1"},
		}, agg(date(time.January, 4), endOf(date(time.January, 21)), period.Granularity{Unit: period.Week, WeekStart: time.Monday}, false))

		require.Equal(t, []span{
			{jan1, date(time.April, 1), false, 180, "18"},
		}, agg(jan1, endOf(date(time.April, 1)), period.Granularity{Unit: period.Quarter}, false))

		var days int
		for k := range rollupItems(t, f) {
			if strings.Contains(k, "#~rday ") {
				days++
			}
		}
		require.Positive(t, days, "daily rollups serve calendar buckets")
	})
}

func TestParseBucket(t *testing.T) {
	for s, want := range map[string]struct {
		bucket   time.Duration
		calendar period.Granularity
	}{
		"1m":          {bucket: time.Minute},
		"1h":          {bucket: time.Hour},
		"hour":        {bucket: time.Hour},
		"1d":          {bucket: 24 * time.Hour},
		"day":         {bucket: 24 * time.Hour},
		"1w":          {calendar: period.Granularity{Unit: period.Week}},
		"week":        {calendar: period.Granularity{Unit: period.Week}},
		"Week:Monday": {calendar: period.Granularity{Unit: period.Week, WeekStart: time.Monday}},
		"1mo":         {calendar: period.Granularity{Unit: period.CalendarMonth}},
		"month":       {calendar: period.Granularity{Unit: period.CalendarMonth}},
		"quarter":     {calendar: period.Granularity{Unit: period.Quarter}},
		// Parsed, and refused by Aggregate as longer than a day.
		"2w": {bucket: 14 * 24 * time.Hour},
	} {
		bucket, calendar, err := engine.ParseBucket(s)
		require.NoError(t, err, s)
		require.Equal(t, want.bucket, bucket, s)
		require.Equal(t, want.calendar, calendar, s)
	}
	for _, s := range []string{"", "hourly", "1y", "week:someday", "month:monday"} {
		_, _, err := engine.ParseBucket(s)
		require.ErrorContains(t, err, "1w or week:<weekday> for weeks, 1mo for months", s)
	}
}

func TestAggregateRefusesBadCalendarBuckets(t *testing.T) {
	f := open(t, backends.Pebble(), 1, apr10)
	ctx := context.Background()
	_, err := f.db.Write(ctx, "acme", "t", []event.Event{ev(apr10, "s", map[string]any{"v": num(1)})})
	require.NoError(t, err)
	base := engine.AggregateQuery{Table: "t", From: apr10, To: apr10.Add(time.Hour), Funcs: []string{"count"}}
	for name, tc := range map[string]struct {
		change func(*engine.AggregateQuery)
		want   string
	}{
		"a week as a duration": {func(q *engine.AggregateQuery) { q.Bucket = 7 * 24 * time.Hour }, "longer than a day: use calendar buckets"},
		"both": {func(q *engine.AggregateQuery) {
			q.Bucket, q.Calendar = time.Hour, period.Granularity{Unit: period.Week}
		}, "set one"},
		"too many hours": {func(q *engine.AggregateQuery) {
			q.Calendar, q.To = period.Granularity{Unit: period.Hour}, apr10.AddDate(20, 0, 0)
		}, "more than the 100000 allowed"},
		"invalid calendar": {func(q *engine.AggregateQuery) {
			q.Calendar = period.Granularity{Unit: period.CalendarMonth, WeekStart: time.Monday}
		}, "applies only to weekly periods"},
	} {
		t.Run(name, func(t *testing.T) {
			q := base
			tc.change(&q)
			_, err := f.db.Aggregate(ctx, "acme", q)
			require.ErrorIs(t, err, engine.ErrBadQuery)
			require.ErrorContains(t, err, tc.want)
		})
	}
	// A day given as a calendar period is the bucket of 24 hours.
	q := base
	q.Calendar, q.To, q.Fill = period.Granularity{Unit: period.Day}, apr10.Add(30*time.Hour), true
	got, err := f.db.Aggregate(ctx, "acme", q)
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, apr10.Add(12*time.Hour), got[0].End)
}
