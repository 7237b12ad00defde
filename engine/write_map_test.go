package engine_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
)

// countingStore counts the conditional updates and reads a write makes
// in data tables (not in the meta table, whose names end in "meta").
type countingStore struct {
	storage.Store
	updates, gets atomic.Int64
}

func (c *countingStore) Update(ctx context.Context, u storage.Update) error {
	if !strings.HasSuffix(u.Table, "meta") {
		c.updates.Add(1)
	}
	return c.Store.Update(ctx, u)
}

func (c *countingStore) GetItem(ctx context.Context, table, pk, sk string) (storage.Item, error) {
	if !strings.HasSuffix(table, "meta") {
		c.gets.Add(1)
	}
	return c.Store.GetItem(ctx, table, pk, sk)
}

// openMap opens an engine whose logical table "m" has the map layout,
// "r" the row layout, both in the same family.
func openMap(t *testing.T, b backends.Backend, path family.WritePath, perItem int) (*engine.DB, *countingStore, string) {
	t.Helper()
	inner, cfg := b.Open(t)
	store := &countingStore{Store: inner}
	if cfg.Tables == nil {
		cfg.Tables = map[string]family.Table{}
	}
	fam := cfg.Families[0].Name
	cfg.Tables["m"] = family.Table{Family: fam, Layout: family.LayoutMap, WritePath: path, EventsPerItem: perItem}
	cfg.Tables["r"] = family.Table{Family: fam, Layout: family.LayoutRow}
	db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clock.NewManual(apr10.Add(time.Hour))})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db, store, cfg.Families[0].Prefix
}

// sameMillisecond returns n distinct events in the millisecond at, some
// on the millisecond and some past it by a few microseconds.
func sameMillisecond(at time.Time, series string, n int) []event.Event {
	evs := make([]event.Event, n)
	for i := range evs {
		evs[i] = ev(at.Add(time.Duration(i%3)*100*time.Microsecond), series, map[string]any{"n": num(i), "s": fmt.Sprintf("event %d", i)})
		if i%5 == 0 {
			evs[i].Fields["odd"] = true // not every event has every field
		}
	}
	return evs
}

// writeInRequests writes events in requests of random sizes up to max.
func writeInRequests(t *testing.T, db *engine.DB, table string, evs []event.Event, max int, rng *rand.Rand) {
	t.Helper()
	for len(evs) > 0 {
		n := min(len(evs), 1+rng.IntN(max))
		batch := slices.Clone(evs[:n])
		written, err := db.Write(context.Background(), "acme", table, batch)
		require.NoError(t, err)
		require.Equal(t, n, written)
		evs = evs[n:]
	}
}

// requireExactlyOnce checks that a query returns exactly want, each once,
// in (time, id) order, with its fields.
func requireExactlyOnce(t *testing.T, got, want []event.Event) {
	t.Helper()
	byID := map[string]event.Event{}
	for _, e := range want {
		e.AssignID("acme", "m", event.LatestIDScheme) // the scheme of the tables a default engine makes
		byID[e.ID] = e
	}
	require.Len(t, got, len(byID))
	seen := map[string]bool{}
	for i, g := range got {
		require.False(t, seen[g.ID], "event %s returned twice", g.ID)
		seen[g.ID] = true
		w, ok := byID[g.ID]
		require.True(t, ok, "unexpected event %s", g.ID)
		require.True(t, w.Time.Equal(g.Time), "time of %s", g.ID)
		require.Equal(t, w.Fields, g.Fields, "fields of %s", g.ID)
		if i > 0 {
			p := got[i-1]
			require.True(t, p.Time.Before(g.Time) || (p.Time.Equal(g.Time) && p.ID < g.ID), "order at %d", i)
		}
	}
}

func reversed(evs []event.Event) []event.Event {
	out := slices.Clone(evs)
	slices.Reverse(out)
	return out
}

func TestMapLayoutManyEventsInOneMillisecond(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		for _, path := range []family.WritePath{family.WritePathCreateFirst, family.WritePathAppendFirst, family.WritePathAuto} {
			t.Run(string(path), func(t *testing.T) {
				db, _, _ := openMap(t, b, path, 0)
				rng := rand.New(rand.NewPCG(1, uint64(len(path))))
				for i, n := range []int{1, 2, 250, 251, 1000} {
					series := fmt.Sprintf("s%d", n)
					at := apr10.Add(time.Duration(i) * time.Minute)
					evs := sameMillisecond(at, series, n)
					// One request, then again in requests of random
					// sizes: a retry of every event.
					writeInRequests(t, db, "m", evs, n, rng)
					writeInRequests(t, db, "m", evs, max(40, n/4), rng)
					q := engine.Query{Table: "m", Series: series, From: at, To: at.Add(time.Millisecond), Limit: 1000}
					requireExactlyOnce(t, queryAll(t, db, "acme", q), evs)
					if path != family.WritePathAuto {
						continue // the items are the same whatever the path
					}
					// Small pages cut items and continuation items.
					q.Limit = 7
					if n > 300 {
						q.Limit = 97
					}
					got := queryAll(t, db, "acme", q)
					requireExactlyOnce(t, got, evs)
					q.Desc = true
					require.Equal(t, reversed(got), queryAll(t, db, "acme", q), "descending")
				}
			})
		}
	})
}

// TestMapLayoutAppendOfManyEvents appends 200 events of one field to a
// millisecond whose item exists: one append of them all would take more
// than DynamoDB's 300 operators (three per id: NOT, contains, AND), so
// the write splits them by the cost of the update it builds.
func TestMapLayoutAppendOfManyEvents(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		for _, path := range []family.WritePath{family.WritePathCreateFirst, family.WritePathAppendFirst} {
			t.Run(string(path), func(t *testing.T) {
				db, _, _ := openMap(t, b, path, 0)
				evs := make([]event.Event, 201)
				for i := range evs {
					evs[i] = ev(apr10, "s", map[string]any{"n": num(i)})
				}
				for _, batch := range [][]event.Event{evs[:1], evs[1:]} {
					written, err := db.Write(context.Background(), "acme", "m", slices.Clone(batch))
					require.NoError(t, err)
					require.Equal(t, len(batch), written)
				}
				q := engine.Query{Table: "m", Series: "s", From: apr10, To: apr10.Add(time.Millisecond), Limit: 1000}
				requireExactlyOnce(t, queryAll(t, db, "acme", q), evs)
			})
		}
	})
}

func TestMapLayoutConcurrentWriters(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		for _, path := range []family.WritePath{family.WritePathCreateFirst, family.WritePathAppendFirst, family.WritePathAuto} {
			t.Run(string(path), func(t *testing.T) {
				// A small cap makes the writers race over continuation
				// items too.
				db, _, _ := openMap(t, b, path, 10)
				evs := sameMillisecond(apr10, "dev", 64)
				var wg sync.WaitGroup
				for w := range 8 {
					wg.Go(func() {
						// Every writer writes every event, in its own
						// order and request sizes.
						rng := rand.New(rand.NewPCG(uint64(w), 7))
						mine := slices.Clone(evs)
						rng.Shuffle(len(mine), func(i, j int) { mine[i], mine[j] = mine[j], mine[i] })
						for len(mine) > 0 {
							n := min(len(mine), 1+rng.IntN(6))
							written, err := db.Write(context.Background(), "acme", "m", slices.Clone(mine[:n]))
							if err != nil || written != n {
								t.Errorf("writer %d: wrote %d of %d: %v", w, written, n, err)
								return
							}
							mine = mine[n:]
						}
					})
				}
				wg.Wait()
				q := engine.Query{Table: "m", Series: "dev", From: apr10, To: apr10.Add(time.Millisecond), Limit: 50}
				requireExactlyOnce(t, queryAll(t, db, "acme", q), evs)
			})
		}
	})
}

func TestMapLayoutContinuationBySize(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		db, store, prefix := openMap(t, b, family.WritePathAuto, 0)
		big := strings.Repeat("x", 90<<10)
		var evs []event.Event
		for i := range 10 {
			evs = append(evs, ev(apr10, "big", map[string]any{"blob": big, "n": num(i)}))
		}
		rng := rand.New(rand.NewPCG(3, 3))
		writeInRequests(t, db, "m", evs, 3, rng)
		writeInRequests(t, db, "m", evs, 10, rng)
		q := engine.Query{Table: "m", Series: "big", From: apr10, To: apr10, Limit: 3}
		requireExactlyOnce(t, queryAll(t, db, "acme", q), evs)

		// The millisecond spans several items, each within DynamoDB's
		// limit.
		var table string
		require.NoError(t, store.ListTables(context.Background(), prefix, func(name string) bool {
			if strings.HasPrefix(name, prefix) {
				table = name
				return false
			}
			return true
		}))
		it := store.Query(context.Background(), storage.Query{Table: table, PK: "acme#m#big#0"})
		defer it.Close()
		items := 0
		for it.Next() {
			items++
			require.LessOrEqual(t, storage.ItemSize(it.Item()), storage.MaxItemSize)
		}
		require.NoError(t, it.Err())
		require.GreaterOrEqual(t, items, 3)
	})
}

func TestMapLayoutRangesCursorsAndFields(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		db, _, _ := openMap(t, b, family.WritePathAuto, 5)
		var evs []event.Event
		for ms := range 20 {
			evs = append(evs, sameMillisecond(apr10.Add(time.Duration(ms)*time.Millisecond), "a", 1+ms%7)...)
			evs = append(evs, sameMillisecond(apr10.Add(time.Duration(ms)*time.Millisecond), "b", 1+ms%4)...)
		}
		for i := range evs {
			// Ids of their own: hashed ids differ between tables.
			evs[i].ID = fmt.Sprintf("id-%03d", i)
		}
		rng := rand.New(rand.NewPCG(5, 5))
		writeInRequests(t, db, "m", evs, 9, rng)
		// The same events in a row-layout table of the same family give
		// the reference answers.
		writeInRequests(t, db, "r", evs, 50, rng)

		for _, c := range []struct{ from, to time.Time }{
			{apr10, apr10.Add(time.Second)},
			{apr10.Add(100 * time.Microsecond), apr10.Add(3*time.Millisecond + 100*time.Microsecond)},
			{apr10.Add(2*time.Millisecond + 150*time.Microsecond), apr10.Add(2*time.Millisecond + 150*time.Microsecond)},
			{apr10.Add(7 * time.Millisecond), apr10.Add(7 * time.Millisecond)},
		} {
			for _, desc := range []bool{false, true} {
				for _, fields := range [][]string{nil, {"n"}} {
					for _, series := range []string{"", "a"} {
						// The row table's answer, in one page, is what
						// every walk of the map table returns (the row
						// layout's small pages within a millisecond are
						// TestQueryJSONIsQuerysEventsAsJSON's).
						q := engine.Query{Table: "r", Series: series, From: c.from, To: c.to, Desc: desc, Limit: 1000, Fields: fields}
						want := queryAll(t, db, "acme", q)
						for _, limit := range []int{1, 4, 1000} {
							q.Table, q.Limit = "m", limit
							got := queryAll(t, db, "acme", q)
							require.Equal(t, ids(want), ids(got), "%+v", q)
							for i := range got {
								require.Equal(t, want[i].Fields, got[i].Fields)
								require.True(t, want[i].Time.Equal(got[i].Time))
							}
						}
					}
				}
			}
		}
	})
}

func ids(evs []event.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Series + "/" + e.ID
	}
	return out
}

func TestMapLayoutAutoPathRequests(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		db, store, _ := openMap(t, b, family.WritePathAuto, 0)
		ctx := context.Background()
		// Warm the catalog and the series index.
		_, err := db.Write(ctx, "acme", "m", []event.Event{ev(apr10.Add(-time.Second), "one", map[string]any{"v": num(0)})})
		require.NoError(t, err)

		// One event per millisecond, each its own write: one create each.
		store.updates.Store(0)
		store.gets.Store(0)
		for i := range 20 {
			_, err := db.Write(ctx, "acme", "m", []event.Event{ev(apr10.Add(time.Duration(i)*time.Millisecond), "one", map[string]any{"v": num(i)})})
			require.NoError(t, err)
		}
		require.EqualValues(t, 20, store.updates.Load())
		require.EqualValues(t, 0, store.gets.Load())

		// Ten per millisecond, each its own write: one create, then one
		// append each; the same with times off the millisecond (the
		// first on it).
		for series, step := range map[string]time.Duration{"ten": 0, "sub": 100 * time.Microsecond} {
			_, err = db.Write(ctx, "acme", "m", []event.Event{ev(apr10.Add(-time.Second), series, map[string]any{"v": num(0)})})
			require.NoError(t, err)
			store.updates.Store(0)
			for ms := range 5 {
				for i := range 10 {
					at := apr10.Add(time.Duration(ms)*time.Millisecond + time.Duration(i)*step)
					_, err := db.Write(ctx, "acme", "m", []event.Event{ev(at, series, map[string]any{"v": num(i)})})
					require.NoError(t, err)
				}
			}
			require.EqualValues(t, 50, store.updates.Load(), series)
			require.EqualValues(t, 0, store.gets.Load(), series)
		}
	})
}

func TestMapLayoutRefusesWideEvents(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		db, _, _ := openMap(t, b, family.WritePathAuto, 0)
		fields := map[string]any{}
		for i := range engine.MaxMapFields + 1 {
			fields[fmt.Sprintf("f%d", i)] = num(i)
		}
		_, err := db.Write(context.Background(), "acme", "m", []event.Event{ev(apr10, "w", map[string]any{"ok": true}), ev(apr10, "w", fields)})
		var be *event.BatchError
		require.ErrorAs(t, err, &be)
		require.Len(t, be.Problems, 1)
		require.Equal(t, 1, be.Problems[0].Index)
		require.Contains(t, be.Problems[0].Reason, "map layout")
		// Nothing was written: the table is still unknown.
		_, err = db.Query(context.Background(), "acme", engine.Query{Table: "m", From: apr10, To: apr10})
		require.ErrorIs(t, err, engine.ErrUnknownTable)
		// The row layout takes the same event.
		_, err = db.Write(context.Background(), "acme", "r", []event.Event{ev(apr10, "w", fields)})
		require.NoError(t, err)
		// The widest event the map layout takes is stored, appended to an
		// item with none of its field maps, then to one with all of them.
		delete(fields, "f0")
		at := apr10.Add(time.Second)
		for i, id := range []string{"wide-1", "wide-2", "wide-3"} {
			e := ev(at, "w", maps.Clone(fields))
			e.ID = id
			if i == 0 {
				e.Fields = map[string]any{"f0": true}
			}
			_, err = db.Write(context.Background(), "acme", "m", []event.Event{e})
			require.NoError(t, err)
		}
		got := queryAll(t, db, "acme", engine.Query{Table: "m", Series: "w", From: at, To: at})
		require.Len(t, got, 3)
		require.Len(t, got[2].Fields, engine.MaxMapFields)
	})
}

// flakyStore fails every third conditional update of a data table with
// an error of its own, before it reaches the store, or after, as a lost
// answer does, until healed.
type flakyStore struct {
	storage.Store
	n      atomic.Int64
	healed atomic.Bool
}

func (f *flakyStore) Update(ctx context.Context, u storage.Update) error {
	if f.healed.Load() || strings.HasSuffix(u.Table, "meta") {
		return f.Store.Update(ctx, u)
	}
	switch f.n.Add(1) % 6 {
	case 0:
		return errInjected
	case 3:
		if err := f.Store.Update(ctx, u); err != nil {
			return err
		}
		return errInjected
	}
	return f.Store.Update(ctx, u)
}

func TestMapLayoutPartialFailuresAndRetries(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		inner, cfg := b.Open(t)
		store := &flakyStore{Store: inner}
		cfg.Tables = map[string]family.Table{"m": {Family: cfg.Families[0].Name, Layout: family.LayoutMap, EventsPerItem: 7}}
		db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clock.NewManual(apr10.Add(time.Hour))})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })

		var evs []event.Event
		for ms := range 6 {
			evs = append(evs, sameMillisecond(apr10.Add(time.Duration(ms)*time.Millisecond), "dev", 1+ms*5)...)
		}
		// Every attempt is a whole write that re-walks each millisecond's
		// items, and a third of its updates fail: few attempts succeed,
		// but each must report exactly what it stored, and the events
		// already stored must stay once when the store heals.
		failures := 0
		for range 10 {
			written, err := db.Write(context.Background(), "acme", "m", slices.Clone(evs))
			if err == nil {
				require.Equal(t, len(evs), written)
				continue
			}
			failures++
			var we *engine.WriteError
			require.ErrorAs(t, err, &we)
			require.ErrorIs(t, err, errInjected)
			require.Equal(t, len(evs)-len(we.Unwritten), written)
		}
		require.Positive(t, failures, "the flaky store never failed a write")
		store.healed.Store(true)
		written, err := db.Write(context.Background(), "acme", "m", slices.Clone(evs))
		require.NoError(t, err)
		require.Equal(t, len(evs), written)
		q := engine.Query{Table: "m", Series: "dev", From: apr10, To: apr10.Add(time.Second), Limit: 4}
		requireExactlyOnce(t, queryAll(t, db, "acme", q), evs)
	})
}

func TestMapLayoutAggregates(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		inner, cfg := b.Open(t)
		fam := cfg.Families[0].Name
		cfg.Tables = map[string]family.Table{
			"m":  {Family: fam, Layout: family.LayoutMap},
			"mr": {Family: fam, Layout: family.LayoutMap, Rollups: true},
			"r":  {Family: fam, Layout: family.LayoutRow},
		}
		clk := clock.NewManual(apr10.Add(48 * time.Hour))
		db, err := engine.Open(context.Background(), inner, engine.Options{Schema: cfg, Clock: clk, RollupSettle: time.Minute})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		var evs []event.Event
		rng := rand.New(rand.NewPCG(9, 9))
		for i := range 300 {
			at := apr10.Add(time.Duration(rng.IntN(3*3600)) * time.Second).Add(time.Duration(rng.IntN(3)) * time.Millisecond)
			evs = append(evs, ev(at, []string{"a", "b"}[i%2], map[string]any{"v": num(rng.IntN(100)), "i": num(i)}))
		}
		for _, table := range []string{"m", "mr", "r"} {
			writeInRequests(t, db, table, evs, 30, rng)
		}
		clk.Advance(time.Hour) // past the settle window: rollups are stored and used
		q := engine.AggregateQuery{From: apr10, To: apr10.Add(3 * time.Hour), Bucket: time.Hour, Fields: []string{"v"}, Funcs: []string{"count", "sum", "min", "max"}}
		q.Table = "r"
		want, err := db.Aggregate(context.Background(), "acme", q)
		require.NoError(t, err)
		require.NotEmpty(t, want)
		for _, table := range []string{"m", "mr", "mr"} { // twice: computed, then from rollups
			q.Table = table
			got, err := db.Aggregate(context.Background(), "acme", q)
			require.NoError(t, err)
			require.Equal(t, want, got, table)
		}
	})
}

func TestMapLayoutMetrics(t *testing.T) {
	inner, cfg := backends.Pebble().Open(t)
	cfg.Tables = map[string]family.Table{"m": {Family: cfg.Families[0].Name, Layout: family.LayoutMap}}
	reg := prometheus.NewRegistry()
	db, err := engine.Open(context.Background(), inner, engine.Options{Schema: cfg, Clock: clock.NewManual(apr10.Add(time.Hour)), Registerer: reg})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	e := []event.Event{ev(apr10, "s", map[string]any{"v": num(1)})}
	for range 2 { // the second time, a retry: every attempt fails, the read finds the event
		_, err := db.Write(context.Background(), "acme", "m", slices.Clone(e))
		require.NoError(t, err)
	}
	want := `
# HELP timetable_map_requests_total Requests of map-layout writes, by kind (create, append, close, read) and result (ok, condition_failed, error).
# TYPE timetable_map_requests_total counter
timetable_map_requests_total{kind="append",result="condition_failed"} 1
timetable_map_requests_total{kind="create",result="condition_failed"} 1
timetable_map_requests_total{kind="create",result="ok"} 1
timetable_map_requests_total{kind="read",result="ok"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), "timetable_map_requests_total"))
}
