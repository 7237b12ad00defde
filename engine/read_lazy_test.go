package engine_test

import (
	"context"
	"slices"
	"strings"
	"sync"
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

// queryCountingStore counts the storage queries of each data table (not
// the meta table, whose name ends in "meta").
type queryCountingStore struct {
	storage.Store
	mu      sync.Mutex
	queries map[string]int
}

func (c *queryCountingStore) Query(ctx context.Context, q storage.Query) storage.Iterator {
	if !strings.HasSuffix(q.Table, "meta") {
		c.mu.Lock()
		c.queries[q.Table]++
		c.mu.Unlock()
	}
	return c.Store.Query(ctx, q)
}

// take returns the tables queried since the last take, sorted.
func (c *queryCountingStore) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for name := range c.queries {
		out = append(out, name)
	}
	clear(c.queries)
	slices.Sort(out)
	return out
}

// TestLatestEventsReadOnlyTheNewestTable checks that a page of one
// series opens a table only once its period could hold the page's next
// event: the latest 10 of a series, all in its newest week, never query
// the week before; a page that needs both weeks, and a walk of every
// page either way, return every event once, in order.
func TestLatestEventsReadOnlyTheNewestTable(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		inner, cfg := b.Open(t)
		store := &queryCountingStore{Store: inner, queries: map[string]int{}}
		cfg.Families[0].Shards = 2 // a table's partitions open together
		db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clock.NewManual(apr10.Add(time.Hour))})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		ctx := context.Background()

		// 15 events in the week of apr10 (from Sunday, April 9), 15 in
		// the week before, and one of another series in each.
		var older, newer []event.Event
		for i := range 15 {
			newer = append(newer, ev(apr10.Add(-time.Duration(i)*time.Minute), "s", map[string]any{"n": num(i)}))
			older = append(older, ev(apr10.Add(-7*24*time.Hour-time.Duration(i)*time.Minute), "s", map[string]any{"n": num(100 + i)}))
		}
		others := []event.Event{ev(apr10.Add(time.Second), "other", nil), ev(apr10.Add(-7*24*time.Hour+time.Second), "other", nil)}
		for _, evs := range [][]event.Event{newer, older, others} {
			_, err := db.Write(ctx, "acme", "m", slices.Clone(evs))
			require.NoError(t, err)
		}
		store.take()
		times := func(evs []event.Event) []time.Time {
			out := make([]time.Time, len(evs))
			for i, e := range evs {
				out[i] = e.Time
			}
			return out
		}
		// byTime is the series' events newest first.
		byTime := append(slices.Clone(newer), older...)
		q := engine.Query{Table: "m", Series: "s", From: apr10.Add(-30 * 24 * time.Hour), To: apr10.Add(time.Hour), Desc: true, Limit: 10}

		p, err := db.Query(ctx, "acme", q)
		require.NoError(t, err)
		require.Equal(t, times(byTime[:10]), times(p.Events))
		require.NotEmpty(t, p.NextCursor)
		queried := store.take()
		require.Len(t, queried, 1, "the latest 10 are in the newest week's table: %v", queried)
		newest := queried[0]

		// The next page starts in the newest table and ends in the older.
		q.Cursor = p.NextCursor
		p, err = db.Query(ctx, "acme", q)
		require.NoError(t, err)
		require.Equal(t, times(byTime[10:20]), times(p.Events))
		require.Len(t, store.take(), 2)

		// Ascending, the oldest week's table answers alone.
		q.Cursor, q.Desc = "", false
		p, err = db.Query(ctx, "acme", q)
		require.NoError(t, err)
		slices.Reverse(byTime)
		require.Equal(t, times(byTime[:10]), times(p.Events))
		queried = store.take()
		require.Len(t, queried, 1)
		require.NotEqual(t, newest, queried[0])

		// Every page either way: each event once, in order.
		for _, desc := range []bool{false, true} {
			q := engine.Query{Table: "m", Series: "s", From: apr10.Add(-30 * 24 * time.Hour), To: apr10.Add(time.Hour), Desc: desc, Limit: 4}
			want := slices.Clone(byTime)
			if desc {
				slices.Reverse(want)
			}
			require.Equal(t, times(want), times(queryAll(t, db, "acme", q)), "desc %v", desc)
		}
	})
}

// openIteratorsStore counts the iterators of data tables open at once,
// and the most that ever were.
type openIteratorsStore struct {
	storage.Store
	open, most atomic.Int64
	tables     sync.Map
}

func (c *openIteratorsStore) Query(ctx context.Context, q storage.Query) storage.Iterator {
	it := c.Store.Query(ctx, q)
	if strings.HasSuffix(q.Table, "meta") {
		return it
	}
	c.tables.Store(q.Table, true)
	n := c.open.Add(1)
	for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
	}
	return &openCountedIterator{Iterator: it, open: &c.open}
}

type openCountedIterator struct {
	storage.Iterator
	open   *atomic.Int64
	closed bool
}

func (it *openCountedIterator) Close() error {
	if !it.closed {
		it.closed = true
		it.open.Add(-1)
	}
	return it.Iterator.Close()
}

// TestSparsePageOpensTablesAhead checks that a page of a series with an
// event or none in each of many tables does not open them one at a time:
// each time the merge runs out of events it opens twice as many tables
// as the time before.
func TestSparsePageOpensTablesAhead(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		inner, cfg := b.Open(t)
		// Tables opened at once are counted by the iterators open at
		// once, which a chunk table's source closes as soon as it has
		// read its window to the end of the table.
		cfg.Families[0].Layout = family.LayoutRow
		store := &openIteratorsStore{Store: inner}
		db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clock.NewManual(apr10.Add(time.Hour))})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		ctx := context.Background()
		// One event a week, for 8 weeks, each its own request (a request
		// makes a bounded number of tables).
		var want []time.Time
		for w := range 8 {
			at := apr10.Add(-time.Duration(7-w) * 7 * 24 * time.Hour)
			_, err := db.Write(ctx, "acme", "m", []event.Event{ev(at, "s", map[string]any{"w": num(w)})})
			require.NoError(t, err)
			want = append(want, at)
		}
		store.most.Store(0)
		store.tables.Clear()
		p, err := db.Query(ctx, "acme", engine.Query{Table: "m", Series: "s", From: apr10.Add(-60 * 24 * time.Hour), To: apr10.Add(time.Hour), Limit: 100})
		require.NoError(t, err)
		got := make([]time.Time, len(p.Events))
		for i, e := range p.Events {
			got[i] = e.Time
		}
		require.Equal(t, want, got)
		tables := 0
		store.tables.Range(func(any, any) bool { tables++; return true })
		require.Equal(t, 8, tables)
		require.Greater(t, store.most.Load(), int64(1), "tables opened one at a time")
		require.Zero(t, store.open.Load(), "iterators left open")
	})
}
