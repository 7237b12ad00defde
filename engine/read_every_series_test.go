package engine_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
)

// readCounter is a store that counts what its queries read: the items
// their iterators return, the items their limits ask for (what DynamoDB
// sends back in a page), and the most iterators open at once.
type readCounter struct {
	storage.Store
	items, asked, open, maxOpen atomic.Int64
}

func (c *readCounter) Query(ctx context.Context, q storage.Query) storage.Iterator {
	c.asked.Add(int64(q.Limit))
	n := c.open.Add(1)
	for m := c.maxOpen.Load(); n > m && !c.maxOpen.CompareAndSwap(m, n); m = c.maxOpen.Load() {
	}
	return &countedIterator{Iterator: c.Store.Query(ctx, q), c: c}
}

// reset forgets what was counted so far.
func (c *readCounter) reset() {
	c.items.Store(0)
	c.asked.Store(0)
	c.maxOpen.Store(c.open.Load())
}

type countedIterator struct {
	storage.Iterator
	c      *readCounter
	closed bool
}

func (it *countedIterator) Next() bool {
	if !it.Iterator.Next() {
		return false
	}
	it.c.items.Add(1)
	return true
}

func (it *countedIterator) Close() error {
	if !it.closed {
		it.closed = true
		it.c.open.Add(-1)
	}
	return it.Iterator.Close()
}

// TestEverySeriesHoldsLittlePerSeries reads 5,000 series of 3 events
// each. The latest ten events must read about two items per series (its
// index entry and its newest event) with pages of one item, not of
// eleven; they and an aggregate of every event must hold a few iterators
// at once, not one per series.
func TestEverySeriesHoldsLittlePerSeries(t *testing.T) {
	const series, perSeries, limit = 5000, 3, 10
	inner, cfg := backends.Pebble().Open(t)
	// Items read are the row layout's: a chunk family's read of a
	// series' latest events reads its newest window whole, a chunk per
	// request (docs/layouts.md).
	cfg.Families[0].Layout = family.LayoutRow
	store := &readCounter{Store: inner}
	from := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clock.NewManual(from.Add(24 * time.Hour))})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	var batch []event.Event
	for i := range series * perSeries {
		// Series i%series; the last one written is the newest event.
		batch = append(batch, ev(from.Add(time.Duration(i)*time.Millisecond), fmt.Sprintf("dev-%05d", i%series), map[string]any{"i": num(i)}))
		if len(batch) == series {
			_, err := db.Write(ctx, "acme", "t", batch)
			require.NoError(t, err)
			batch = nil
		}
	}
	to := from.Add(time.Hour)
	iterators := int64(2 * db.Options().QueryParallelism)

	for _, desc := range []bool{true, false} {
		store.reset()
		p, err := db.Query(ctx, "acme", engine.Query{Table: "t", From: from, To: to, Desc: desc, Limit: limit})
		require.NoError(t, err)
		require.Len(t, p.Events, limit)
		require.NotEmpty(t, p.NextCursor)
		for k, e := range p.Events {
			i := k // the oldest events first
			if desc {
				i = series*perSeries - 1 - k
			}
			require.Equal(t, fmt.Sprintf("dev-%05d", i%series), e.Series, "desc=%v event %d", desc, k)
			require.True(t, e.Time.Equal(from.Add(time.Duration(i)*time.Millisecond)), "desc=%v event %d", desc, k)
		}
		// The series index (one item per series), each series' first
		// event, and a few more of the series on the page.
		require.Less(t, store.items.Load(), int64(2*series+10*limit), "desc=%v: items read for a page of %d events of %d series", desc, limit, series)
		// Pages of one item, not of limit+1, for the series not on the
		// page.
		require.Less(t, store.asked.Load(), int64(series+10*limit), "desc=%v: items asked for by the pages' limits", desc)
		require.LessOrEqual(t, store.maxOpen.Load(), iterators, "desc=%v: iterators open at once", desc)

		// The next page goes on where this one stopped.
		next, err := db.Query(ctx, "acme", engine.Query{Table: "t", From: from, To: to, Desc: desc, Limit: limit, Cursor: p.NextCursor})
		require.NoError(t, err)
		require.Len(t, next.Events, limit)
		for k, e := range next.Events {
			i := limit + k
			if desc {
				i = series*perSeries - 1 - limit - k
			}
			require.True(t, e.Time.Equal(from.Add(time.Duration(i)*time.Millisecond)), "desc=%v second page, event %d", desc, k)
		}
	}

	store.reset()
	buckets, err := db.Aggregate(ctx, "acme", engine.AggregateQuery{Table: "t", From: from, To: to, Bucket: time.Hour, Funcs: []string{engine.FnCount}})
	require.NoError(t, err)
	require.Len(t, buckets, 1)
	require.EqualValues(t, series*perSeries, buckets[0].Events)
	require.LessOrEqual(t, store.maxOpen.Load(), iterators, "aggregate: iterators open at once")
}

// TestPageOfEverySeriesIsTheMergeOfAll pages through every series of a
// row-layout and a map-layout table, across weeks, write months and
// shards, with events written twice across a month boundary and many at
// one instant, and checks each page against the merge of everything
// written: same events, same order, each once.
func TestPageOfEverySeriesIsTheMergeOfAll(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		store, cfg := b.Open(t)
		cfg.Families[0].Shards = 3
		cfg.Tables = map[string]family.Table{"m": {Family: cfg.Families[0].Name, Layout: family.LayoutMap}}
		// Ten days across a week and a month boundary.
		start := time.Date(2017, 4, 25, 0, 0, 0, 0, time.UTC)
		clk := clock.NewManual(start)
		db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clk})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		ctx := context.Background()

		const series = 60
		rng := rand.New(rand.NewPCG(3, 4))
		var written []event.Event
		for day := range 10 {
			clk.Set(start.Add(time.Duration(day) * 24 * time.Hour))
			var batch []event.Event
			for range 12 {
				// Few instants, so that series' events meet.
				at := start.Add(time.Duration(day)*24*time.Hour + time.Duration(rng.IntN(3))*time.Hour + time.Duration(rng.IntN(2))*time.Microsecond)
				s := fmt.Sprintf("s%02d", rng.IntN(series))
				batch = append(batch, ev(at, s, map[string]any{"v": num(rng.IntN(3))}))
			}
			written = append(written, batch...)
			for _, table := range []string{"r", "m"} {
				_, err := db.Write(ctx, "acme", table, slices.Clone(batch))
				require.NoError(t, err)
			}
			if day == 6 {
				// A retry of the day before, in the next write month.
				for _, table := range []string{"r", "m"} {
					_, err := db.Write(ctx, "acme", table, slices.Clone(written[len(written)-24:len(written)-12]))
					require.NoError(t, err)
				}
			}
		}

		limits := []int{2, 50}
		if b.Name != "pebble" {
			// A page costs a request per series and shard on DynamoDB.
			limits = []int{50}
		}
		from, to := start, start.Add(10*24*time.Hour)
		for _, table := range []string{"r", "m"} {
			want := mergeOrder(written, "acme", table)
			for _, desc := range []bool{false, true} {
				if desc {
					slices.Reverse(want)
				}
				for _, limit := range limits {
					got := queryAll(t, db, "acme", engine.Query{Table: table, From: from, To: to, Desc: desc, Limit: limit})
					require.Equal(t, len(want), len(got), "table %s desc=%v limit=%d", table, desc, limit)
					for i := range want {
						require.Equal(t, want[i], key(got[i]), "table %s desc=%v limit=%d event %d", table, desc, limit, i)
					}
				}
			}
		}
	})
}

// mergeOrder returns the keys of the distinct events in the order of a
// merge: time, then id, then series.
func mergeOrder(evs []event.Event, tenant, table string) []string {
	seen := map[string]bool{}
	var out []event.Event
	for _, e := range evs {
		e.AssignID(tenant, table, event.LatestIDScheme)
		if !seen[key(e)] {
			seen[key(e)] = true
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b event.Event) int {
		return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.ID, b.ID), cmp.Compare(a.Series, b.Series))
	})
	keys := make([]string, len(out))
	for i, e := range out {
		keys[i] = key(e)
	}
	return keys
}

func key(e event.Event) string {
	return fmt.Sprint(e.Time.Format(time.RFC3339Nano), "/", e.ID, "/", e.Series)
}

// A read of every series that needs more of the query budget than there
// is takes all of it, and runs; a read of one series takes none.
func TestReadLargerThanTheBudgetRunsAlone(t *testing.T) {
	store, cfg := backends.Pebble().Open(t)
	db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clock.NewManual(apr10.Add(time.Hour)), MaxQueryPartitions: 2})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	var evs []event.Event
	for i := range 5 {
		evs = append(evs, ev(apr10.Add(time.Duration(i)*time.Second), fmt.Sprint("s", i), map[string]any{"v": num(i)}))
	}
	_, err = db.Write(ctx, "acme", "t", evs)
	require.NoError(t, err)
	for _, series := range []string{"", "s3"} {
		got := queryAll(t, db, "acme", engine.Query{Table: "t", Series: series, From: apr10, To: apr10.Add(time.Minute), Desc: true, Limit: 2})
		if series == "" {
			require.Len(t, got, 5)
		} else {
			require.Len(t, got, 1)
		}
		buckets, err := db.Aggregate(ctx, "acme", engine.AggregateQuery{Table: "t", Series: series, From: apr10, To: apr10.Add(time.Minute), Bucket: time.Minute, Funcs: []string{engine.FnCount}})
		require.NoError(t, err)
		require.Len(t, buckets, 1)
	}
	_, err = engine.Open(ctx, store, engine.Options{Schema: cfg, MaxQueryPartitions: -1})
	require.Error(t, err, "a budget must be positive")
}
