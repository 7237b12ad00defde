package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/filter"
	"github.com/timetabledb/timetable/internal/backends"
)

// TestMoreFunctions checks count_distinct, the percentiles, delta and
// rate against values computed here from the events written.
func TestMoreFunctions(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		start := time.Date(2017, 4, 10, 0, 0, 0, 0, time.UTC)
		f := open(t, b, 2, start.Add(48*time.Hour))
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(1, 2))
		var evs []event.Event
		var temps []float64
		hosts := map[string]bool{}
		// Two counters over one hour: c0 counts up by 1..5 a step, c1
		// also, and is reset to 0 halfway.
		counters := map[string]int{}
		increase := 0
		for i := range 400 {
			at := start.Add(time.Duration(i) * 9 * time.Second) // one hour
			series := fmt.Sprintf("c%d", i%2)
			step := 1 + rng.IntN(5)
			if series == "c1" && i == 201 {
				counters[series] = 0 // reset
			} else if i >= 2 {
				counters[series] += step
				increase += step
			}
			temp := rng.IntN(1000)
			host := fmt.Sprintf("h%d", rng.IntN(37))
			hosts[host] = true
			temps = append(temps, float64(temp))
			evs = append(evs, ev(at, series, map[string]any{"n": num(counters[series]), "temp": num(temp), "host": host}))
		}
		_, err := f.db.Write(ctx, "acme", "m", evs)
		require.NoError(t, err)

		q := engine.AggregateQuery{Table: "m", From: start, To: start.Add(time.Hour - 1), Bucket: time.Hour,
			Fields: []string{"host", "temp", "n"}, Funcs: []string{"count_distinct", "p50", "p90", "p99", "delta", "rate"}}
		_, err = f.db.Aggregate(ctx, "acme", q)
		require.ErrorIs(t, err, engine.ErrBadQuery, "percentiles of strings")
		require.ErrorContains(t, err, `field "host"`)

		q.Fields, q.Funcs = []string{"host"}, []string{"count_distinct"}
		bs, err := f.db.Aggregate(ctx, "acme", q)
		require.NoError(t, err)
		require.Len(t, bs, 1)
		require.Equal(t, int64(len(hosts)), bs[0].Values["host"]["count_distinct"])

		q.Fields, q.Funcs = []string{"temp"}, []string{"p50", "p90", "p99", "count_distinct"}
		bs, err = f.db.Aggregate(ctx, "acme", q)
		require.NoError(t, err)
		sort.Float64s(temps)
		for fn, rank := range map[string]float64{"p50": 0.5, "p90": 0.9, "p99": 0.99} {
			exact := temps[int(rank*float64(len(temps)-1))]
			got, err := strconv.ParseFloat(string(bs[0].Values["temp"][fn].(json.Number)), 64)
			require.NoError(t, err)
			require.InDelta(t, exact, got, math.Max(exact*engine.QuantileAccuracy*1.01, 1), "%s: %v against %v", fn, got, exact)
		}

		q.Fields, q.Funcs = []string{"n"}, []string{"delta", "rate"}
		bs, err = f.db.Aggregate(ctx, "acme", q)
		require.NoError(t, err)
		require.Equal(t, json.Number(strconv.Itoa(increase)), bs[0].Values["n"]["delta"], "the increase of both counters, the reset counted from zero")
		rate, _ := strconv.ParseFloat(string(bs[0].Values["n"]["rate"].(json.Number)), 64)
		require.InDelta(t, float64(increase)/3600, rate, 1e-9)
	})
}

// TestDistinctPastExact counts more distinct values than DistinctExact:
// the estimate stays within its documented bound.
func TestDistinctPastExact(t *testing.T) {
	start := time.Date(2017, 4, 10, 0, 0, 0, 0, time.UTC)
	f := open(t, backends.Pebble(), 1, start.Add(48*time.Hour))
	ctx := context.Background()
	const n = engine.DistinctExact * 3
	var evs []event.Event
	for i := range n {
		evs = append(evs, ev(start.Add(time.Duration(i)*time.Millisecond), "s", map[string]any{"id": fmt.Sprintf("device-%d", i%(n-500))}))
	}
	_, err := f.db.Write(ctx, "acme", "m", evs)
	require.NoError(t, err)
	bs, err := f.db.Aggregate(ctx, "acme", engine.AggregateQuery{Table: "m", From: start, To: start.Add(time.Hour), Bucket: 24 * time.Hour,
		Fields: []string{"id"}, Funcs: []string{"count_distinct", "count"}})
	require.NoError(t, err)
	got := bs[0].Values["id"]["count_distinct"].(int64)
	require.InEpsilon(t, n-500, got, 0.025)
	require.Equal(t, int64(n), bs[0].Values["id"]["count"])
}

// TestAggregateGroups checks that every group of a grouped aggregate,
// over its pages, is the aggregate of its events alone: by series, and
// by a field's value (the filtered aggregate), with and without rollups.
func TestAggregateGroups(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		store, cfg := b.Open(t)
		cfg.Families[0].Shards = 2
		cfg.Tables = map[string]family.Table{"rolled": {Family: cfg.Families[0].Name, Rollups: true}}
		start := time.Date(2017, 4, 10, 0, 0, 0, 0, time.UTC)
		clk := clock.NewManual(start.Add(72 * time.Hour))
		db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clk})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(3, 4))
		levels := []string{"ERROR", "INFO", "WARN", "DEBUG", "TRACE", ""} // the empty string is a group
		var evs []event.Event
		for i := range 300 {
			fields := map[string]any{"level": levels[rng.IntN(len(levels))], "temp": num(rng.IntN(100))}
			if i%7 == 0 {
				fields["level"] = num(7) // not a string: in no group
			}
			series := fmt.Sprintf("s%02d", rng.IntN(11))
			if series == "s00" {
				series = "" // the empty series is a group
			}
			evs = append(evs, ev(start.Add(time.Duration(rng.IntN(40*60))*time.Minute), series, fields))
		}
		for _, table := range []string{"plain", "rolled"} {
			_, err := db.Write(ctx, "acme", table, slices.Clone(evs))
			require.NoError(t, err)
		}
		for _, table := range []string{"plain", "rolled"} {
			q := engine.AggregateQuery{Table: table, From: start, To: start.Add(48*time.Hour - 1), Bucket: 6 * time.Hour,
				Fields: []string{"temp"}, Funcs: []string{"count", "sum", "max"}}
			if table == "rolled" {
				require.Equal(t, "used", db.RollupUse(q))
				pq := q
				pq.Funcs = []string{"p99"}
				require.Equal(t, "not used: p99 is not kept in rollups", db.RollupUse(pq))
			}
			for _, by := range []string{engine.GroupBySeries, "level"} {
				var keys []string
				q := q
				q.GroupBy, q.GroupLimit = by, 3
				for page := 0; ; page++ {
					require.Less(t, page, 10)
					got, err := db.AggregateGroups(ctx, "acme", q)
					require.NoError(t, err)
					require.LessOrEqual(t, len(got.Groups), 3)
					for _, g := range got.Groups {
						keys = append(keys, g.Key)
						one := q
						one.GroupBy, one.GroupLimit, one.GroupAfter = "", 0, nil
						if by == engine.GroupBySeries {
							if g.Key == "" {
								// Series cannot name the empty series: its
								// events, counted by hand.
								n := 0
								for _, e := range evs {
									if e.Series == "" {
										n++
									}
								}
								var got int64
								for _, b := range g.Buckets {
									got += b.Events
								}
								require.EqualValues(t, n, got)
								continue
							}
							one.Series = g.Key
						} else {
							one.Filter, err = filter.Parse(fmt.Sprintf("level = %q", g.Key))
							require.NoError(t, err)
						}
						want, err := db.Aggregate(ctx, "acme", one)
						require.NoError(t, err)
						require.Equal(t, want, g.Buckets, "%s %s %s", table, by, g.Key)
					}
					if got.Next == nil {
						break
					}
					q.GroupAfter = got.Next
				}
				require.True(t, slices.IsSorted(keys), "%v", keys)
				if by == "level" {
					require.Equal(t, []string{"", "DEBUG", "ERROR", "INFO", "TRACE", "WARN"}, keys)
				} else {
					require.Len(t, keys, 11)
					require.Equal(t, "", keys[0])
				}
			}
		}
		_, err = db.AggregateGroups(ctx, "acme", engine.AggregateQuery{Table: "plain", From: start, To: start.Add(time.Hour), Bucket: time.Hour,
			Funcs: []string{"count"}, GroupBy: "level", GroupLimit: engine.MaxGroupLimit + 1})
		require.ErrorIs(t, err, engine.ErrBadQuery)
	})
}
