package engine_test

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/backends"
)

// TestAggregateOffsetMedianStddevPercentiles checks buckets shifted by
// an offset, median, stddev and percentiles of any rank against answers
// worked out by hand.
func TestAggregateOffsetMedianStddevPercentiles(t *testing.T) {
	f := open(t, backends.Pebble(), 1, apr10)
	ctx := context.Background()
	var batch []event.Event
	for _, p := range []struct {
		min int
		v   string
	}{{5, "2"}, {20, "4"}, {35, "4"}, {50, "4"}, {65, "5"}, {80, "5"}, {100, "7"}, {115, "9"}} {
		batch = append(batch, ev(apr10.Add(time.Duration(p.min)*time.Minute), "s", map[string]any{"v": json.Number(p.v)}))
	}
	_, err := f.db.Write(ctx, "acme", "t", batch)
	require.NoError(t, err)
	funcs := []string{engine.FnCount, engine.FnMedian, engine.FnStddev, "p75", engine.Percentile(95), "p0.1"}

	// 1h buckets from 11:15: {2}, {4, 4, 4, 5}, {5, 7, 9}.
	q := engine.AggregateQuery{Table: "t", Series: "s", From: apr10.Add(-time.Hour), To: apr10.Add(3 * time.Hour),
		Bucket: time.Hour, Offset: 15 * time.Minute, Fields: []string{"v"}, Funcs: funcs}
	got, err := f.db.Aggregate(ctx, "acme", q)
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.Equal(t, apr10.Add(-45*time.Minute), got[0].Start)
	require.Equal(t, apr10.Add(15*time.Minute), got[1].Start)
	require.Equal(t, apr10.Add(75*time.Minute), got[2].Start)
	require.Equal(t, map[string]any{"count": int64(1), "median": json.Number("2"), "p75": json.Number("2"), "p95": json.Number("2"), "p0.1": json.Number("2")},
		got[0].Values["v"], "one value has no sample standard deviation")
	// {4, 4, 4, 5}: Σx 17, Σx² 73, (4·73 - 17²) / (4·3) = 1/4.
	require.Equal(t, map[string]any{"count": int64(4), "median": json.Number("4"), "stddev": json.Number("0.5"), "p75": json.Number("4"), "p95": json.Number("5"), "p0.1": json.Number("4")},
		got[1].Values["v"])
	// {5, 7, 9}: deviations 2, 0, 2: (4 + 0 + 4) / 2 = 4.
	require.Equal(t, map[string]any{"count": int64(3), "median": json.Number("7"), "stddev": json.Number("2"), "p75": json.Number("9"), "p95": json.Number("9"), "p0.1": json.Number("5")},
		got[2].Values["v"])

	// InfluxQL's rank: ⌊n·q + 0.5⌋, none when 0. p75 of {5, 7, 9}: 2.25
	// is rank 2, where the nearest rank is 3.
	q.Rank = engine.RankInfluxQL
	got, err = f.db.Aggregate(ctx, "acme", q)
	require.NoError(t, err)
	require.Equal(t, json.Number("7"), got[2].Values["v"]["p75"])
	require.Equal(t, json.Number("9"), got[2].Values["v"]["p95"]) // 2.85: rank 3
	require.NotContains(t, got[2].Values["v"], "p0.1", "rank 0 has no value")
	require.Equal(t, json.Number("4"), got[1].Values["v"]["p75"]) // 3.5: rank 3
	q.Rank = engine.RankNearest

	// Every series, no offset: {2, 4, 4, 4} and {5, 5, 7, 9}.
	q.Series, q.Offset = "", 0
	got, err = f.db.Aggregate(ctx, "acme", q)
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, json.Number("4"), got[0].Values["v"]["median"])
	require.Equal(t, json.Number("1"), got[0].Values["v"]["stddev"]) // (4·52 - 14²) / 12
	require.Equal(t, json.Number("6"), got[1].Values["v"]["median"], "the mean of the two middle values")
	sd, err := strconv.ParseFloat(string(got[1].Values["v"]["stddev"].(json.Number)), 64)
	require.NoError(t, err)
	require.InDelta(t, math.Sqrt(11.0/3), sd, 1e-15) // (4·180 - 26²) / 12 = 11/3
	require.Len(t, got[1].Values["v"]["stddev"], 39, "38 significant digits")

	for _, bad := range []engine.AggregateQuery{
		{Table: "t", From: apr10, To: apr10.Add(time.Hour), Bucket: time.Hour, Offset: time.Hour, Fields: []string{"v"}, Funcs: []string{"count"}},
		{Table: "t", From: apr10, To: apr10.Add(time.Hour), Bucket: time.Hour, Offset: -time.Minute, Fields: []string{"v"}, Funcs: []string{"count"}},
		{Table: "t", From: apr10, To: apr10.Add(time.Hour), Bucket: time.Hour, Fields: []string{"v"}, Funcs: []string{"p0"}},
		{Table: "t", From: apr10, To: apr10.Add(time.Hour), Bucket: time.Hour, Fields: []string{"v"}, Funcs: []string{"p100.5"}},
		{Table: "t", From: apr10, To: apr10.Add(time.Hour), Bucket: time.Hour, Fields: []string{"v"}, Funcs: []string{"p095"}},
	} {
		_, err := f.db.Aggregate(ctx, "acme", bad)
		require.ErrorIs(t, err, engine.ErrBadQuery, "%+v", bad)
	}
}
