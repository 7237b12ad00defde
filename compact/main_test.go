package compact_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/compact"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

var day = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// fixture is an engine over one backend's store whose default family
// has the given layout, and the registry of its tables.
type fixture struct {
	store storage.Store
	cfg   family.Schema
	clock *clock.Manual
	db    *engine.DB
	reg   *registry.Registry
}

func open(t *testing.T, b backends.Backend, layout family.Layout, shards int) *fixture {
	t.Helper()
	store, cfg := b.Open(t)
	cfg.Families[0].Layout = layout
	cfg.Families[0].Shards = shards
	cfg.Families[0].ChunkWindow = time.Hour
	f := &fixture{store: store, cfg: cfg, clock: clock.NewManual(day.Add(3 * time.Hour))}
	f.reopen(t)
	f.reg = registry.New(store, backends.MetaTable(cfg))
	return f
}

// reopen opens the engine again, so that it reads the registry afresh.
func (f *fixture) reopen(t *testing.T) {
	t.Helper()
	if f.db != nil {
		require.NoError(t, f.db.Close())
	}
	db, err := engine.Open(context.Background(), f.store, engine.Options{Schema: f.cfg, Clock: f.clock})
	require.NoError(t, err)
	f.db = db
	t.Cleanup(func() { db.Close() })
}

// events are a day's readings of three series, some with client ids,
// some at one instant, some with fields that come and go.
func events() []event.Event {
	var evs []event.Event
	for i := range 90 {
		at := day.Add(time.Duration(i) * 97 * time.Second)
		ev := event.Event{Time: at, Series: fmt.Sprintf("s%d", i%3), Fields: map[string]any{"v": json.Number(fmt.Sprint(i)), "f": json.Number(fmt.Sprintf("%d.5", i))}}
		if i%7 == 0 {
			ev.ID = fmt.Sprintf("client-%d", i)
		}
		if i%5 == 0 {
			ev.Fields["tag"] = "five"
		}
		evs = append(evs, ev)
	}
	for i := range 4 {
		evs = append(evs, event.Event{Time: day.Add(time.Hour), Series: "s0", Fields: map[string]any{"v": json.Number(fmt.Sprint(100 + i))}})
	}
	return evs
}

// writeOneByOne writes each event in a request of its own.
func (f *fixture) writeOneByOne(t *testing.T, evs []event.Event) {
	t.Helper()
	for _, ev := range evs {
		_, err := f.db.Write(context.Background(), "acme", "t", []event.Event{ev})
		require.NoError(t, err)
	}
}

// entry returns the registry entry of the table holding day.
func (f *fixture) entry(t *testing.T) registry.Entry {
	t.Helper()
	es, err := f.reg.List(context.Background(), f.cfg.Families[0].Name)
	require.NoError(t, err)
	for _, e := range es {
		if e.Ref.Period.Contains(day) && e.State.Live() {
			return e
		}
	}
	t.Fatal("no table holds the day")
	return registry.Entry{}
}

// answers is every read the test compares: pages of several sizes in
// both orders, one series, and aggregates.
type answers struct {
	pages [][][]event.Event
	aggs  [][]engine.Bucket
}

func (f *fixture) answers(t *testing.T) answers {
	t.Helper()
	ctx := context.Background()
	from, to := day.Add(-time.Hour), day.Add(26*time.Hour)
	var a answers
	for _, q := range []engine.Query{
		{Table: "t", From: from, To: to, Limit: 1000},
		{Table: "t", From: from, To: to, Limit: 7},
		{Table: "t", From: from, To: to, Limit: 9, Desc: true},
		{Table: "t", Series: "s0", From: from, To: to, Limit: 4},
		{Table: "t", Series: "s1", From: day.Add(30 * time.Minute), To: day.Add(2 * time.Hour), Limit: 3, Desc: true},
	} {
		var pages [][]event.Event
		for range 1000 {
			p, err := f.db.Query(ctx, "acme", q)
			require.NoError(t, err)
			pages = append(pages, p.Events)
			if p.NextCursor == "" {
				break
			}
			q.Cursor = p.NextCursor
		}
		a.pages = append(a.pages, pages)
	}
	for _, q := range []engine.AggregateQuery{
		{Table: "t", From: day, To: day.Add(24 * time.Hour), Bucket: time.Hour, Fields: []string{"v", "f"}, Funcs: []string{"count", "sum", "min", "max"}},
		{Table: "t", Series: "s2", From: day, To: day.Add(24 * time.Hour), Bucket: 24 * time.Hour, Fields: []string{"v"}, Funcs: []string{"count", "avg", "last"}},
	} {
		b, err := f.db.Aggregate(ctx, "acme", q)
		require.NoError(t, err)
		a.aggs = append(a.aggs, b)
	}
	return a
}

// all returns the table's events, read in one page.
func (f *fixture) all(t *testing.T) []event.Event {
	t.Helper()
	p, err := f.db.Query(context.Background(), "acme", engine.Query{Table: "t", From: day.Add(-time.Hour), To: day.Add(26 * time.Hour), Limit: 1000})
	require.NoError(t, err)
	require.Empty(t, p.NextCursor)
	return p.Events
}

// eventItems counts the event items (rows and chunks) of the table.
func eventItems(t *testing.T, st storage.Store, table string) (rows, chunks int) {
	t.Helper()
	it := st.Scan(context.Background(), table)
	defer it.Close()
	for it.Next() {
		i := it.Item()
		switch {
		case !strings.Contains(i.PK, "#t#"):
		case chunk.IsSortKey(i.SK):
			chunks++
		default:
			rows++
		}
	}
	require.NoError(t, it.Err())
	return rows, chunks
}

// compactEntry makes the entry's layout chunk (saved) and compacts it,
// as the lifecycle does once the table is fenced.
func (f *fixture) compactEntry(t *testing.T, st compact.Store) (compact.Result, error) {
	t.Helper()
	ctx := context.Background()
	e := f.entry(t)
	if e.ChunkWindow() == 0 {
		saved, err := f.reg.Save(ctx, compact.AsChunks(e, time.Hour))
		require.NoError(t, err)
		e = saved
	}
	_, res, err := compact.Entry(ctx, st, f.reg, e, f.clock.Now(), compact.Options{CheckpointEvery: 2})
	return res, err
}

// TestCompactTable writes events one at a time into a table of a chunk
// family, of a row family and of a map family, compacts it, and requires every read to
// answer as before with fewer items, a second compaction to change
// nothing, and a late event to be found. On every backend.
func TestCompactTable(t *testing.T) {
	for _, b := range backends.All(t) {
		for _, layout := range []family.Layout{family.LayoutChunk, family.LayoutRow, family.LayoutMap} {
			t.Run(b.Name+"/"+string(layout), func(t *testing.T) {
				f := open(t, b, layout, 1)
				evs := events()
				f.writeOneByOne(t, evs)
				before := f.answers(t)
				require.Len(t, before.pages[0][0], len(evs))
				table := f.entry(t).Name
				rows, chunks := eventItems(t, f.store, table)
				want := len(evs)
				if layout == family.LayoutMap {
					want -= 3 // the four events at one instant share a map item
				}
				require.Equal(t, want, rows+chunks, "an item per event written alone")

				res, err := f.compactEntry(t, f.store)
				require.NoError(t, err)
				require.Positive(t, res.Packed)
				e := f.entry(t)
				require.False(t, e.ChunkedAt.IsZero(), "the entry records the compaction")
				require.Equal(t, storage.Key{}, e.CompactAfter)
				require.Equal(t, family.LayoutChunk, e.Policy.Layout)
				rows, chunks = eventItems(t, f.store, table)
				require.Zero(t, rows)
				require.Less(t, chunks, len(evs)/2, "a chunk per series and hour")

				f.reopen(t)
				require.Equal(t, before, f.answers(t), "every read answers as before")

				// Again: nothing to do.
				res, err = f.compactEntry(t, f.store)
				require.NoError(t, err)
				require.Zero(t, res.Packed)
				require.Zero(t, res.Written+res.Deleted)

				// A late event lands and is found.
				late := event.Event{Time: day.Add(90 * time.Minute), Series: "s1", Fields: map[string]any{"v": json.Number("-1")}}
				f.writeOneByOne(t, []event.Event{late})
				got := f.answers(t)
				require.Len(t, got.pages[0][0], len(evs)+1)
				require.True(t, slices.ContainsFunc(got.pages[0][0], func(ev event.Event) bool { return ev.Time.Equal(late.Time) && ev.Series == "s1" }))
			})
		}
	}
}

// failing is a store whose table writes and deletes fail after a number
// of calls: the first failing BatchWrite writes half its items, as a
// process killed in the middle of one may.
type failing struct {
	storage.Store
	left int
}

var errKilled = errors.New("killed")

func (s *failing) BatchWrite(ctx context.Context, table string, items []storage.Item) error {
	if s.left <= 0 {
		if half := len(items) / 2; half > 0 {
			if err := s.Store.BatchWrite(ctx, table, items[:half]); err != nil {
				return err
			}
		}
		return errKilled
	}
	s.left--
	return s.Store.BatchWrite(ctx, table, items)
}

func (s *failing) BatchDelete(ctx context.Context, table string, keys []storage.Key) error {
	if s.left <= 0 {
		return errKilled
	}
	s.left--
	return s.Store.BatchDelete(ctx, table, keys)
}

// TestCompactKilled stops compactions after 0 to 3 writes and deletes
// (the first write that fails writing half its items), reads after each
// stop, and resumes from the checkpoint: no event is lost
// or read twice at any point, and the end is the one an uninterrupted
// compaction reaches.
func TestCompactKilled(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			// Two shards: a chunk may go to another partition than the
			// rows it packs.
			f := open(t, b, family.LayoutChunk, 2)
			evs := events()
			f.writeOneByOne(t, evs)
			before := f.answers(t)
			table := f.entry(t).Name
			kills := 0
			for n := 0; ; n++ {
				// Killed after 0 to 3 calls, each run resuming from
				// the last one's checkpoint.
				_, err := f.compactEntry(t, &failing{Store: f.store, left: n % 4})
				if err == nil {
					break
				}
				kills++
				require.ErrorIs(t, err, errKilled)
				require.Less(t, n, 200, "compaction does not end")
				got := f.all(t)
				require.Equal(t, before.pages[0][0], got, "after a kill at call %d: 0 lost, 0 duplicates", n)
			}
			require.Greater(t, kills, 5, "killed again and again")
			require.Equal(t, before, f.answers(t))
			rows, _ := eventItems(t, f.store, table)
			require.Zero(t, rows)
			require.False(t, f.entry(t).ChunkedAt.IsZero())
		})
	}
}

// TestCompactStopsAtDeadline runs compactions whose deadline is always
// near (as a Lambda's is): each packs one window, saves its checkpoint
// and stops with ErrStopped, and the next resumes from it, until the
// table is done, with the same answers.
func TestCompactStopsAtDeadline(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			f := open(t, b, family.LayoutChunk, 1)
			f.writeOneByOne(t, events())
			before := f.answers(t)
			deadline := time.Now().Add(time.Hour)
			ctx, cancel := context.WithDeadline(context.Background(), deadline)
			defer cancel()
			stops := 0
			for {
				e := f.entry(t)
				_, res, err := compact.Entry(ctx, f.store, f.reg, e, f.clock.Now(), compact.Options{Now: func() time.Time { return deadline }})
				if err == nil {
					break
				}
				require.ErrorIs(t, err, compact.ErrStopped)
				require.ErrorIs(t, err, context.DeadlineExceeded, "the lifecycle defers it")
				require.Equal(t, 1, res.Groups, "one window a run")
				require.Equal(t, res.After, f.entry(t).CompactAfter, "the checkpoint is saved")
				require.True(t, f.entry(t).ChunkedAt.IsZero())
				require.Equal(t, before.pages[0][0], f.all(t))
				stops++
				require.Less(t, stops, 100)
			}
			require.Greater(t, stops, 3)
			require.False(t, f.entry(t).ChunkedAt.IsZero())
			require.Equal(t, before, f.answers(t))
			rows, _ := eventItems(t, f.store, f.entry(t).Name)
			require.Zero(t, rows)
		})
	}
}
