package engine_test

import (
	"context"
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

// TestIDSchemeUpgrade stands for a deployment that moves from a version
// before id schemes (an engine making scheme-1 tables) to one that makes
// scheme-2 tables, on one store: the old table keeps scheme 1 (a retried
// write of its events stores nothing twice and answers the 22-character
// ids it stored), a new table gets scheme 2 (11-character ids, retries
// idempotent, distinct events at one instant all kept), a request may
// hold events of both, and the table listing says each table's scheme.
// In both item layouts.
func TestIDSchemeUpgrade(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		for _, kind := range layouts {
			t.Run(string(kind), func(t *testing.T) { testIDSchemeUpgrade(t, b, kind) })
		}
	})
}

func testIDSchemeUpgrade(t *testing.T, b backends.Backend, kind family.Layout) {
	ctx := context.Background()
	store, cfg := b.Open(t)
	cfg.Tables = map[string]family.Table{"t": {Family: cfg.Families[0].Name, Layout: kind}}
	clk := clock.NewManual(apr10.Add(time.Hour))
	old, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk, IDScheme: event.IDScheme1})
	require.NoError(t, err)
	before := []event.Event{
		ev(apr10, "car-1", map[string]any{"v": num(1)}),
		ev(apr10, "car-1", map[string]any{"v": num(2)}), // same series and instant
		ev(apr10.Add(time.Second), "car-2", nil),
		{Time: apr10, Series: "car-1", ID: "mine"},
	}
	_, err = old.Write(ctx, "acme", "t", before)
	require.NoError(t, err)
	oldIDs := idsOf(before)
	for i, id := range oldIDs[:3] {
		e := before[i]
		e.ID = ""
		e.AssignID("acme", "t", event.IDScheme1)
		require.Equal(t, e.ID, id, "the id a version before schemes gave")
		require.Len(t, id, 22)
	}
	require.NoError(t, old.Close())

	db, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })

	// A retry of the old events, as a client sends it again: nothing
	// stored twice, the same ids answered.
	retry := withoutIDs(before)
	retry[3].ID = "mine"
	_, err = db.Write(ctx, "acme", "t", retry)
	require.NoError(t, err)
	require.Equal(t, oldIDs, idsOf(retry))
	got := queryAll(t, db, "acme", engine.Query{Table: "t", From: apr10, To: apr10.Add(time.Minute)})
	require.Len(t, got, 4)

	// A week later, a new table: scheme 2. Many distinct events of
	// one series at one instant are all kept.
	week := apr10.Add(7 * 24 * time.Hour)
	clk.Set(week.Add(time.Hour))
	var burst []event.Event
	for i := range 200 {
		burst = append(burst, ev(week, "car-1", map[string]any{"v": num(i)}))
	}
	_, err = db.Write(ctx, "acme", "t", burst)
	require.NoError(t, err)
	ids := idsOf(burst)
	seen := map[string]bool{}
	for i, id := range ids {
		require.Len(t, id, 11)
		e := burst[i]
		e.ID = ""
		e.AssignID("acme", "t", event.IDScheme2)
		require.Equal(t, e.ID, id)
		seen[id] = true
	}
	require.Len(t, seen, 200)
	again := withoutIDs(burst)
	_, err = db.Write(ctx, "acme", "t", again)
	require.NoError(t, err)
	require.Equal(t, ids, idsOf(again))
	got = queryAll(t, db, "acme", engine.Query{Table: "t", From: week, To: week})
	require.Len(t, got, 200, "a retry stores nothing twice")

	// One request with events of both tables: each gets its table's
	// scheme; its retry stores nothing twice.
	mixed := []event.Event{
		ev(apr10.Add(2*time.Second), "car-3", map[string]any{"v": num(7)}),
		ev(week.Add(2*time.Second), "car-3", map[string]any{"v": num(7)}),
	}
	_, err = db.Write(ctx, "acme", "t", mixed)
	require.NoError(t, err)
	require.Len(t, mixed[0].ID, 22)
	require.Len(t, mixed[1].ID, 11)
	mixedAgain := withoutIDs(mixed)
	_, err = db.Write(ctx, "acme", "t", mixedAgain)
	require.NoError(t, err)
	require.Equal(t, idsOf(mixed), idsOf(mixedAgain))
	got = queryAll(t, db, "acme", engine.Query{Table: "t", Series: "car-3", From: apr10, To: week.Add(time.Minute)})
	require.Len(t, got, 2)
	require.Equal(t, idsOf(mixed), idsOf(got))

	// The listing says each table's scheme.
	tables, err := db.Tables(ctx)
	require.NoError(t, err)
	require.Len(t, tables, 2)
	require.Equal(t, 1, tables[0].IDScheme)
	require.Equal(t, 2, tables[1].IDScheme)
}

// TestIDSchemeOfTableMadeAgain: a table deleted behind the engine's back
// is made again, on the next write, with the id scheme of its entry, not
// the engine's: scheme 1 here, so a retry of the events it held (read
// back from an archive, say) keeps its ids.
func TestIDSchemeOfTableMadeAgain(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		store, cfg := b.Open(t)
		clk := clock.NewManual(apr10.Add(time.Hour))
		first := writtenUnderScheme1(t, store, cfg, clk)

		db, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		_, err = db.Write(ctx, "acme", "t", withoutIDs(first)) // routes to the table
		require.NoError(t, err)
		tables, err := db.Tables(ctx)
		require.NoError(t, err)
		require.Len(t, tables, 1)
		require.NoError(t, backends.Drop(ctx, store, tables[0].Name))

		again := withoutIDs(first)
		_, err = db.Write(ctx, "acme", "t", again)
		require.NoError(t, err, "a write makes the table again")
		require.Equal(t, first[0].ID, again[0].ID)
		tables, err = db.Tables(ctx)
		require.NoError(t, err)
		require.Len(t, tables, 1)
		require.Equal(t, int64(2), tables[0].Generation)
		require.Equal(t, 1, tables[0].IDScheme)
		got := queryAll(t, db, "acme", engine.Query{Table: "t", From: apr10, To: apr10})
		require.Len(t, got, 1)
		require.Equal(t, first[0].ID, got[0].ID)
	})
}

// TestIDSchemeOption: an engine refuses a scheme that is not one.
func TestIDSchemeOption(t *testing.T) {
	o := engine.Options{IDScheme: 3}
	o.EnsureDefaults()
	require.ErrorContains(t, o.Validate(), "IDScheme 3")
	o = engine.Options{}
	o.EnsureDefaults()
	require.Equal(t, event.LatestIDScheme, o.IDScheme)
	require.NoError(t, o.Validate())
}

func idsOf(evs []event.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

// withoutIDs copies events as a client sends them again: without the ids
// the engine gave them.
func withoutIDs(evs []event.Event) []event.Event {
	out := make([]event.Event, len(evs))
	for i, e := range evs {
		e.ID = ""
		out[i] = e
	}
	return out
}

// TestIDSchemeAcrossWriteMonths: a retry that crosses a month's end lands
// in the next write month's table of the event's period, which takes the
// id scheme of the period's first table (scheme 1 here, though the
// engine makes scheme-2 tables), so that the event keeps its id and a
// query returns it once.
func TestIDSchemeAcrossWriteMonths(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		store, cfg := b.Open(t)
		require.True(t, cfg.Families[0].WriteTimeGrouping)
		clk := clock.NewManual(apr10.Add(time.Hour))
		first := writtenUnderScheme1(t, store, cfg, clk)

		db, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		clk.Set(time.Date(2017, 5, 1, 0, 5, 0, 0, time.UTC)) // within the grace of April's week
		retry := withoutIDs(first)
		_, err = db.Write(ctx, "acme", "t", retry)
		require.NoError(t, err)
		require.Equal(t, first[0].ID, retry[0].ID)
		tables, err := db.Tables(ctx)
		require.NoError(t, err)
		require.Len(t, tables, 2, "April's table and May's of the same week")
		for _, tbl := range tables {
			require.Equal(t, 1, tbl.IDScheme, "%s", tbl.Name)
		}
		got := queryAll(t, db, "acme", engine.Query{Table: "t", From: apr10, To: apr10})
		require.Len(t, got, 1)

		// A period no table holds yet gets the engine's scheme.
		next := []event.Event{ev(time.Date(2017, 5, 1, 0, 1, 0, 0, time.UTC), "s", nil)}
		_, err = db.Write(ctx, "acme", "t", next)
		require.NoError(t, err)
		require.Len(t, next[0].ID, 11)
	})
}

// writtenUnderScheme1 writes one event to table t as a deployment that
// made scheme-1 tables did, and returns it with its id.
func writtenUnderScheme1(t *testing.T, store storage.Store, cfg family.Schema, clk clock.Clock) []event.Event {
	t.Helper()
	ctx := context.Background()
	old, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk, IDScheme: event.IDScheme1})
	require.NoError(t, err)
	first := []event.Event{ev(apr10, "s", map[string]any{"v": num(1)})}
	_, err = old.Write(ctx, "acme", "t", first)
	require.NoError(t, err)
	require.NoError(t, old.Close())
	return first
}
