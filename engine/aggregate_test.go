package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
)

func TestAggregateAgreesWithTheEvents(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		start := time.Date(2017, 4, 29, 0, 0, 0, 0, time.UTC) // across a month boundary
		f := open(t, b, 2, start)
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(7, 7))
		var all []event.Event
		for day := range 4 {
			f.clock.Set(start.Add(time.Duration(day) * 24 * time.Hour))
			var batch []event.Event
			for range 60 {
				at := start.Add(time.Duration(day)*24*time.Hour + time.Duration(rng.IntN(24*3600))*time.Second)
				fields := map[string]any{"speed": json.Number(fmt.Sprint(rng.IntN(200)))}
				if rng.IntN(4) == 0 {
					delete(fields, "speed")
				}
				batch = append(batch, ev(at, fmt.Sprint("car-", rng.IntN(3)), fields))
			}
			_, err := f.db.Write(ctx, "acme", "t", batch)
			require.NoError(t, err)
			all = append(all, batch...)
		}
		// A retry on the first of May writes day 2 again, into May's table.
		f.clock.Set(time.Date(2017, 5, 1, 0, 30, 0, 0, time.UTC))
		_, err := f.db.Write(ctx, "acme", "t", append([]event.Event(nil), all[60:120]...))
		require.NoError(t, err)

		from, to := start, start.Add(4*24*time.Hour-time.Nanosecond)
		for _, bucket := range []time.Duration{time.Hour, 6 * time.Hour, 24 * time.Hour} {
			got, err := f.db.Aggregate(ctx, "acme", engine.AggregateQuery{
				Table: "t", From: from, To: to, Bucket: bucket, Fields: []string{"speed"},
				Funcs: []string{"count", "sum", "min", "max", "avg"},
			})
			require.NoError(t, err)
			want := map[time.Time]*exactSummary{}
			for _, e := range all {
				k := e.Time.Truncate(bucket)
				if want[k] == nil {
					want[k] = &exactSummary{}
				}
				want[k].add(t, e, "speed")
			}
			require.Len(t, got, len(want), "bucket %s", bucket)
			for i, bk := range got {
				if i > 0 {
					require.True(t, got[i-1].Start.Before(bk.Start))
				}
				w := want[bk.Start]
				require.NotNil(t, w, "unexpected bucket %s", bk.Start)
				require.Equal(t, bk.Start.Add(bucket), bk.End)
				w.require(t, bk, "speed")
			}
		}
	})
}

func TestAggregateFillAndFirstLast(t *testing.T) {
	f := open(t, backends.Pebble(), 1, apr10)
	ctx := context.Background()
	_, err := f.db.Write(ctx, "acme", "t", []event.Event{
		ev(apr10.Add(10*time.Minute), "s", map[string]any{"gear": "D"}),
		ev(apr10.Add(20*time.Minute), "s", map[string]any{"gear": "N"}),
		ev(apr10.Add(3*time.Hour), "s", map[string]any{"gear": "P"}),
	})
	require.NoError(t, err)
	q := engine.AggregateQuery{Table: "t", From: apr10, To: apr10.Add(4*time.Hour - time.Second), Bucket: time.Hour, Fields: []string{"gear"}, Funcs: []string{"first", "last", "count"}}
	got, err := f.db.Aggregate(ctx, "acme", q)
	require.NoError(t, err)
	require.Len(t, got, 2, "empty buckets are left out")
	require.Equal(t, map[string]any{"first": "D", "last": "N", "count": int64(2)}, got[0].Values["gear"])

	q.Fill = true
	got, err = f.db.Aggregate(ctx, "acme", q)
	require.NoError(t, err)
	require.Len(t, got, 4)
	require.Equal(t, int64(0), got[1].Events)
	require.Empty(t, got[2].Values)
	require.Equal(t, apr10.Add(3*time.Hour), got[3].Start)
}

func TestAggregateRefusesBadRequests(t *testing.T) {
	f := open(t, backends.Pebble(), 1, apr10)
	ctx := context.Background()
	_, err := f.db.Write(ctx, "acme", "t", []event.Event{ev(apr10, "s", map[string]any{"gear": "D", "v": num(1)})})
	require.NoError(t, err)
	base := engine.AggregateQuery{Table: "t", From: apr10, To: apr10.Add(time.Hour), Bucket: time.Minute, Fields: []string{"v"}, Funcs: []string{"sum"}}
	for name, tc := range map[string]struct {
		change func(*engine.AggregateQuery)
		want   string
	}{
		"unknown function":  {func(q *engine.AggregateQuery) { q.Funcs = []string{"mode"} }, `unknown function "mode"`},
		"bucket too small":  {func(q *engine.AggregateQuery) { q.Bucket = 500 * time.Millisecond }, "shorter than the shortest allowed"},
		"not a day divisor": {func(q *engine.AggregateQuery) { q.Bucket = 7 * time.Minute }, "does not divide a day"},
		"too many buckets":  {func(q *engine.AggregateQuery) { q.Bucket = time.Second; q.To = apr10.Add(48 * time.Hour) }, "more than the 100000 allowed"},
		"no fields":         {func(q *engine.AggregateQuery) { q.Fields = nil }, "at least one field"},
		"inverted":          {func(q *engine.AggregateQuery) { q.From = q.To.Add(time.Second) }, "inverted range"},
		"not numeric":       {func(q *engine.AggregateQuery) { q.Fields = []string{"gear"} }, `field "gear" holds a value that is not a number in the bucket starting 2017-04-10T12:00:00Z (a string, in the event at 2017-04-10T12:00:00Z)`},
	} {
		t.Run(name, func(t *testing.T) {
			q := base
			tc.change(&q)
			_, err := f.db.Aggregate(ctx, "acme", q)
			require.ErrorIs(t, err, engine.ErrBadQuery)
			require.ErrorContains(t, err, tc.want)
		})
	}
	_, err = f.db.Aggregate(ctx, "acme", engine.AggregateQuery{Table: "nope", From: apr10, To: apr10, Bucket: time.Hour, Fields: []string{"v"}, Funcs: []string{"sum"}})
	require.ErrorIs(t, err, engine.ErrUnknownTable)
}

// Buckets state the exact span they cover: edge buckets cut by the range
// are marked partial and count exactly their events; fill stops at To;
// count alone needs no field. Raw aggregates and rollups agree.
func TestAggregateEdges(t *testing.T) {
	for _, rollups := range []bool{false, true} {
		t.Run(fmt.Sprintf("rollups=%v", rollups), func(t *testing.T) {
			store, cfg := backends.Pebble().Open(t)
			day := time.Date(2017, 4, 10, 0, 0, 0, 0, time.UTC)
			at := func(h, m int) time.Time { return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }
			clk := clock.NewManual(day.Add(48 * time.Hour))
			db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clk, Rollups: rollups, RollupSettle: time.Minute})
			require.NoError(t, err)
			defer db.Close()
			var evs []event.Event
			for _, m := range []time.Time{at(11, 50), at(12, 10), at(12, 40), at(13, 0), at(13, 30)} {
				evs = append(evs, ev(m, "s", map[string]any{"v": num(1)}))
			}
			_, err = db.Write(context.Background(), "acme", "t", evs)
			require.NoError(t, err)
			clk.Advance(time.Hour) // past the settle window

			type span struct {
				start, end time.Time
				partial    bool
				events     int64
			}
			agg := func(from, to time.Time, fill bool, fields ...string) []span {
				t.Helper()
				bs, err := db.Aggregate(context.Background(), "acme", engine.AggregateQuery{Table: "t", From: from, To: to, Bucket: time.Hour, Fields: fields, Funcs: []string{"count"}, Fill: fill})
				require.NoError(t, err)
				var out []span
				for _, b := range bs {
					out = append(out, span{b.Start, b.End, b.Partial, b.Events})
				}
				return out
			}
			// A To that starts a bucket ends the range before it: no
			// bucket a nanosecond wide, and the event at 13:00 is the
			// next hour's.
			require.Equal(t, []span{
				{at(12, 0), at(13, 0), false, 2},
			}, agg(at(12, 0), at(13, 0), false, "v"))
			// Any other To is inclusive.
			require.Equal(t, []span{
				{at(12, 0), at(13, 0), false, 2},
				{at(13, 0), at(13, 0).Add(2), true, 1},
			}, agg(at(12, 0), at(13, 0).Add(1), false, "v"))
			// From = To is the instant.
			require.Equal(t, []span{
				{at(13, 0), at(13, 0).Add(1), true, 1},
			}, agg(at(13, 0), at(13, 0), false, "v"))
			// An unaligned From: the bucket covers 12:30 to 13:00.
			require.Equal(t, []span{
				{at(12, 30), at(13, 0), true, 1},
				{at(13, 0), at(13, 15).Add(1), true, 1},
			}, agg(at(12, 30), at(13, 15), false, "v"))
			// Fill ends with the bucket before an aligned To.
			require.Equal(t, []span{
				{at(10, 0), at(11, 0), false, 0},
				{at(11, 0), at(12, 0), false, 1},
				{at(12, 0), at(13, 0), false, 2},
				{at(13, 0), at(14, 0), false, 2},
			}, agg(at(10, 0), at(14, 0), true, "v"))
			// Count alone needs no field.
			require.Equal(t, []span{
				{at(11, 0), at(12, 0), false, 1},
				{at(12, 0), at(13, 0), false, 2},
				{at(13, 0), at(13, 59).Add(1), true, 2},
			}, agg(at(11, 0), at(13, 59), false))
			_, err = db.Aggregate(context.Background(), "acme", engine.AggregateQuery{Table: "t", From: at(11, 0), To: at(13, 0), Bucket: time.Hour, Funcs: []string{"sum"}})
			require.ErrorIs(t, err, engine.ErrBadQuery)
		})
	}
}

// A table whose layout changed holds rows and map items in the same
// partitions: its aggregates, of every series and of one, under either
// layout's configuration, summarise every event once, first and last
// included.
func TestAggregateAcrossALayoutChange(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		store, cfg := b.Open(t)
		cfg.Families[0].Shards = 2
		fam := cfg.Families[0].Name
		configs := layoutConfigs(cfg, func(kind family.Layout) map[string]family.Table {
			return map[string]family.Table{"t": {Family: fam, Layout: kind}}
		})
		ctx := context.Background()
		clk := clock.NewManual(apr10.Add(24 * time.Hour))
		var evs []event.Event
		for i := range 200 {
			evs = append(evs, ev(apr10.Add(time.Duration(i)*37*time.Second), []string{"a", "b"}[i%2], map[string]any{"v": num(i % 17)}))
		}
		for i, kind := range layouts {
			db, err := engine.Open(ctx, store, engine.Options{Schema: configs[kind], Clock: clk})
			require.NoError(t, err)
			_, err = db.Write(ctx, "acme", "t", slices.Clone(evs[i*100:(i+1)*100]))
			require.NoError(t, err)
			require.NoError(t, db.Close())
		}
		for _, kind := range layouts {
			db, err := engine.Open(ctx, store, engine.Options{Schema: configs[kind], Clock: clk})
			require.NoError(t, err)
			t.Cleanup(func() { db.Close() })
			for _, series := range []string{"", "a"} {
				q := engine.AggregateQuery{Table: "t", Series: series, From: apr10, To: apr10.Add(3 * time.Hour), Bucket: time.Hour,
					Fields: []string{"v"}, Funcs: []string{"count", "sum", "min", "max", "first", "last"}}
				got, err := db.Aggregate(ctx, "acme", q)
				require.NoError(t, err)
				want := map[time.Time]*exactSummary{}
				first, last := map[time.Time]any{}, map[time.Time]any{}
				for _, e := range evs { // in time order
					if series != "" && e.Series != series {
						continue
					}
					k := e.Time.Truncate(time.Hour)
					if want[k] == nil {
						want[k], first[k] = &exactSummary{}, e.Fields["v"]
					}
					want[k].add(t, e, "v")
					last[k] = e.Fields["v"]
				}
				require.Len(t, got, len(want), "layout %s, series %q", kind, series)
				for _, bk := range got {
					want[bk.Start].require(t, bk, "v")
					require.Equal(t, first[bk.Start], bk.Values["v"]["first"], "layout %s, series %q, bucket %s", kind, series, bk.Start)
					require.Equal(t, last[bk.Start], bk.Values["v"]["last"], "layout %s, series %q, bucket %s", kind, series, bk.Start)
				}
			}
		}
	})
}

// A summary keeps only what the query's functions need: each function
// asked alone gives what it gives asked with all the others.
func TestAggregateFunctionsAlone(t *testing.T) {
	f := open(t, backends.Pebble(), 2, apr10.Add(24*time.Hour))
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 12))
	var evs []event.Event
	for i := range 300 {
		evs = append(evs, ev(apr10.Add(time.Duration(i)*41*time.Second), fmt.Sprint("s", i%3), map[string]any{
			"v": json.Number(fmt.Sprintf("%d.%d", rng.IntN(100)-50, rng.IntN(10))), "n": num(i + rng.IntN(3)),
		}))
	}
	_, err := f.db.Write(ctx, "acme", "t", evs)
	require.NoError(t, err)
	for _, series := range []string{"", "s1"} {
		q := engine.AggregateQuery{Table: "t", Series: series, From: apr10, To: apr10.Add(4 * time.Hour), Bucket: time.Hour,
			Fields: []string{"v", "n"}, Funcs: engine.Functions}
		all, err := f.db.Aggregate(ctx, "acme", q)
		require.NoError(t, err)
		require.NotEmpty(t, all)
		for _, fn := range engine.Functions {
			q.Funcs = []string{fn}
			alone, err := f.db.Aggregate(ctx, "acme", q)
			require.NoError(t, err)
			require.Len(t, alone, len(all))
			for i, b := range alone {
				require.Equal(t, all[i].Events, b.Events)
				for _, field := range q.Fields {
					require.Equal(t, map[string]any{fn: all[i].Values[field][fn]}, b.Values[field], "%s of %s, series %q, bucket %s", fn, field, series, b.Start)
				}
			}
		}
	}
}

// An aggregate of every series over a range that holds no series answers
// empty buckets: the workers are never fewer than one.
func TestAggregateOfEverySeriesWithNoSeriesInTheRange(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		f := open(t, b, 1, apr10)
		ctx := context.Background()
		_, err := f.db.Write(ctx, "acme", "cars", []event.Event{ev(apr10.Add(10*time.Minute), "s", map[string]any{"speed": num(3)})})
		require.NoError(t, err)
		from := apr10.AddDate(-1, 0, 0)
		q := engine.AggregateQuery{Table: "cars", From: from, To: from.Add(2 * time.Hour), Bucket: time.Hour, Funcs: []string{"count"}}
		got, err := f.db.Aggregate(ctx, "acme", q)
		require.NoError(t, err)
		require.Empty(t, got)
		q.Fill = true
		got, err = f.db.Aggregate(ctx, "acme", q)
		require.NoError(t, err)
		require.Len(t, got, 2, "an aligned to adds no bucket")
		for _, bk := range got {
			require.Zero(t, bk.Events)
		}
	})
}
