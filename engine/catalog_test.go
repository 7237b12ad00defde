package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// A change of a family's period, naming, shards or tiers reaches only
// the tables made afterwards: every event stored before stays queryable,
// the old tables keep their own facts, and events of their periods still
// go to them.
func TestPolicyChangesKeepEveryEvent(t *testing.T) {
	day := period.Granularity{Unit: period.Day}
	week := period.Granularity{Unit: period.Week}
	for _, tc := range []struct {
		name          string
		before, after func(*family.Family)
	}{
		{name: "period", after: func(f *family.Family) { f.Granularity = day }},
		{name: "naming", after: func(f *family.Family) { f.Naming = naming.Date }},
		{name: "shards", after: func(f *family.Family) { f.Shards = 4 }},
		{name: "tiers", after: func(f *family.Family) {
			f.Tiers = []family.Tier{{Name: "only", Capacity: storage.Capacity{Billing: storage.Provisioned, Read: 7, Write: 7}}}
		}},
		{
			// Date names of a day and of the week starting that day are
			// alike: the old granularity finishes out the new period.
			name:   "date-names-collide",
			before: func(f *family.Family) { f.Naming, f.Granularity = naming.Date, day },
			after:  func(f *family.Family) { f.Naming, f.Granularity = naming.Date, week },
		},
		{
			name:   "all-at-once",
			before: func(f *family.Family) { f.Shards = 3 },
			after: func(f *family.Family) {
				f.Granularity, f.Naming, f.Shards, f.WriteTimeGrouping = day, naming.Date, 2, false
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			each(t, func(t *testing.T, b backends.Backend) {
				ctx := context.Background()
				store, cfg := b.Open(t)
				if tc.before != nil {
					tc.before(&cfg.Families[0])
				}
				// Sunday 2017-04-09 is a week's first day.
				clk := clock.NewManual(time.Date(2017, 4, 9, 6, 0, 0, 0, time.UTC))
				dbA, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk})
				require.NoError(t, err)
				var all []event.Event
				write := func(db *engine.DB, from time.Time, n int, tag string) {
					var evs []event.Event
					for i := range n {
						evs = append(evs, ev(from.Add(time.Duration(i)*7*time.Hour), fmt.Sprintf("s%d", i%3), map[string]any{"tag": tag, "i": num(i)}))
					}
					_, err := db.Write(ctx, "acme", "t", evs)
					require.NoError(t, err)
					all = append(all, evs...)
				}
				write(dbA, clk.Now().Add(-72*time.Hour), 12, "before")
				beforeTables, err := dbA.Tables(ctx)
				require.NoError(t, err)
				require.NoError(t, dbA.Close())

				old := cfg.Families[0]
				tc.after(&cfg.Families[0])
				require.NoError(t, cfg.Validate())
				clk.Advance(30 * time.Hour)
				dbB, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk})
				require.NoError(t, err)
				defer dbB.Close()
				// Events in the old tables' periods, and after them.
				write(dbB, clk.Now().Add(-80*time.Hour), 15, "after")

				q := engine.Query{Table: "t", From: time.Date(2017, 4, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2017, 4, 30, 0, 0, 0, 0, time.UTC), Limit: 5}
				got := queryAll(t, dbB, "acme", q)
				require.Len(t, got, len(all), "every event, once")
				for s := range 3 {
					q.Series = fmt.Sprintf("s%d", s)
					n := 0
					for _, e := range all {
						if e.Series == q.Series {
							n++
						}
					}
					require.Len(t, queryAll(t, dbB, "acme", q), n, "series %s", q.Series)
				}

				// The old tables keep their facts.
				after, err := dbB.Tables(ctx)
				require.NoError(t, err)
				byName := map[string]engine.TableStatus{}
				for _, s := range after {
					byName[s.Name] = s
				}
				for _, s := range beforeTables {
					got, ok := byName[s.Name]
					require.True(t, ok, "table %s still listed", s.Name)
					require.Equal(t, old.Shards, got.Shards, s.Name)
					require.True(t, s.PeriodStart.Equal(got.PeriodStart) && s.PeriodEnd.Equal(got.PeriodEnd), s.Name)
				}

				// The lifecycle ages the old tables by their own tiers.
				r, err := lifecycle.New(lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: cfg.Families, MetaTable: backends.MetaTable(cfg), Clock: clk})
				require.NoError(t, err)
				plan, err := r.Plan(ctx)
				require.NoError(t, err)
				for _, a := range plan {
					if _, old := byName[a.Table]; old && (a.Kind == lifecycle.UpdateCapacity || a.Kind == lifecycle.UpdateBilling) {
						_, inOld := oldTier(beforeTables, a.Table, a.Tier)
						require.True(t, inOld || a.Tier == family.BackfillTier, "table %s planned to tier %s of the new policy", a.Table, a.Tier)
					}
					require.NotEqual(t, lifecycle.Register, a.Kind, "%s: every table is registered", a.Table)
				}
			})
		})
	}
}

// oldTier reports whether tier is one of the tiers of the policy the
// tables were made with (the default tiers, unless the test changed them
// afterwards).
func oldTier(before []engine.TableStatus, table, tier string) (string, bool) {
	for _, s := range before {
		if s.Name == table {
			_, ok := family.Default().Tier(tier)
			return s.Name, ok
		}
	}
	return "", true // a table made after the change
}

// A store written before the table registry existed (tables known by
// their names and tags only) is read by an engine with a registry with
// nothing lost: opening it registers the tables.
func TestUpgradeRegistersExistingTables(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		store, cfg := b.Open(t)
		clk := clock.NewManual(apr10)
		old, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk})
		require.NoError(t, err)
		var evs []event.Event
		for i := range 40 {
			evs = append(evs, ev(apr10.Add(-time.Duration(i)*17*time.Hour), fmt.Sprintf("car-%d", i%4), map[string]any{"i": num(i)}))
		}
		_, err = old.Write(ctx, "acme", "cars", evs)
		require.NoError(t, err)
		// Late data in a later month, in a table of its own.
		clk.Advance(40 * 24 * time.Hour)
		_, err = old.Write(ctx, "acme", "cars", []event.Event{ev(apr10.Add(time.Hour), "car-9", nil)})
		require.NoError(t, err)
		require.NoError(t, old.Close())

		// The meta table as the version before the registry left it:
		// tenants, logical tables and the cursor key, no registry.
		meta := backends.MetaTable(cfg)
		upgraded := meta + "2"
		require.NoError(t, store.CreateTable(ctx, storage.TableSpec{Name: upgraded}))
		it := store.Scan(ctx, meta)
		var items []storage.Item
		for it.Next() {
			if item := it.Item(); len(item.PK) < 9 || item.PK[:9] != "registry#" {
				items = append(items, item)
			}
		}
		require.NoError(t, it.Close())
		require.NoError(t, store.BatchWrite(ctx, upgraded, items))

		// The tables do not name the new meta table: it adopts none of
		// them by itself, only on an operator's word (timetable tables
		// adopt NAME).
		cfg.MetaTable = upgraded
		lost, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk})
		require.NoError(t, err)
		none, err := lost.Tables(ctx)
		require.NoError(t, err)
		require.Empty(t, none)
		require.NoError(t, lost.Close())
		reg := registry.New(store, upgraded)
		var names []string
		for _, f := range cfg.Families {
			require.NoError(t, store.ListTables(ctx, "", func(name string) bool {
				if strings.HasPrefix(name, f.Prefix) {
					names = append(names, name)
				}
				return true
			}))
		}
		for _, name := range names {
			_, err := reg.Adopt(ctx, store, cfg.Families, name, false, clk.Now())
			if err != nil {
				// Tagged with the old meta table (an endpoint without
				// tags has no such tag): only with --force.
				require.ErrorIs(t, err, registry.ErrNotAdoptable, "another meta table's")
				_, err = reg.Adopt(ctx, store, cfg.Families, name, true, clk.Now())
			}
			require.NoError(t, err)
		}

		db, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk})
		require.NoError(t, err)
		defer db.Close()
		got := queryAll(t, db, "acme", engine.Query{Table: "cars", From: apr10.Add(-40 * 24 * time.Hour), To: apr10.Add(24 * time.Hour), Limit: 7})
		require.Len(t, got, len(evs)+1)
		tables, err := db.Tables(ctx)
		require.NoError(t, err)
		require.Len(t, tables, 6, "five weeks of April, and the late data's table")
		for _, s := range tables {
			require.Contains(t, []string{"adopted from tags", "adopted from its name"}, s.Source, s.Name)
			require.Equal(t, "active", s.State)
		}
	})
}

// Two servers on one store see each other's new tables at once.
func TestTwoServersSeeEachOthersTables(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		_, a, bdb := twoServers(t, b)

		_, err := a.Write(ctx, "acme", "cars", []event.Event{ev(apr10, "car-1", map[string]any{"v": num(1)})})
		require.NoError(t, err)
		q := engine.Query{Table: "cars", From: apr10.Add(-365 * 24 * time.Hour), To: apr10.Add(time.Hour)}
		require.Len(t, queryAll(t, bdb, "acme", q), 1)

		// A new period's table, and a late-data table, made by a: b
		// finds them on its next query, with no wait.
		for _, at := range []time.Time{apr10.Add(-60 * 24 * time.Hour), apr10.Add(-3 * 24 * time.Hour)} {
			_, err = a.Write(ctx, "acme", "cars", []event.Event{ev(at, "car-1", map[string]any{"v": num(2)})})
			require.NoError(t, err)
		}
		require.Len(t, queryAll(t, bdb, "acme", q), 3)
		aq := engine.AggregateQuery{Table: "cars", Series: "car-1", From: q.From, To: q.To, Bucket: 24 * time.Hour, Funcs: []string{"count"}, Fields: []string{"v"}}
		buckets, err := bdb.Aggregate(ctx, "acme", aq)
		require.NoError(t, err)
		require.Len(t, buckets, 3)

		// b writes into a's tables rather than making its own.
		_, err = bdb.Write(ctx, "acme", "cars", []event.Event{ev(apr10.Add(-60*24*time.Hour+time.Minute), "car-1", nil)})
		require.NoError(t, err)
		ts, err := bdb.Tables(ctx)
		require.NoError(t, err)
		require.Len(t, ts, 3)
	})
}

// twoServers opens two engines on one store of b, under one manual clock
// at apr10.
func twoServers(t *testing.T, b backends.Backend) (*clock.Manual, *engine.DB, *engine.DB) {
	t.Helper()
	store, cfg := b.Open(t)
	clk := clock.NewManual(apr10)
	var dbs [2]*engine.DB
	for i := range dbs {
		db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clk})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	return clk, dbs[0], dbs[1]
}

// A server that keeps the registry's entries sees a late-data table
// another server made (an event of last month's week written this month,
// a table of the same period and a new write month) on its next query,
// and the table's events, with no wait.
func TestTwoServersSeeLateDataTables(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		clk, a, bdb := twoServers(t, b)

		week := apr10.Add(20 * 24 * time.Hour) // the week of April 30
		clk.Set(week)
		_, err := a.Write(ctx, "acme", "cars", []event.Event{ev(week, "car-1", map[string]any{"v": num(1)})})
		require.NoError(t, err)
		q := engine.Query{Table: "cars", Series: "car-1", From: week.Add(-time.Hour), To: week.Add(2 * time.Hour), Limit: 10}
		require.Len(t, queryAll(t, bdb, "acme", q), 1, "b keeps the entries it read")
		require.Len(t, queryAll(t, bdb, "acme", q), 1)

		// May: an event of April 30 goes to a new table of the same
		// period, written in May.
		clk.Set(week.Add(36 * time.Hour))
		_, err = a.Write(ctx, "acme", "cars", []event.Event{ev(week.Add(time.Hour), "car-1", map[string]any{"v": num(2)})})
		require.NoError(t, err)
		ts, err := a.Tables(ctx)
		require.NoError(t, err)
		require.Len(t, ts, 2, "a late-data table beside the week's")
		got := queryAll(t, bdb, "acme", q)
		require.Len(t, got, 2, "b sees the late-data table's event at once")
		require.Equal(t, week.Add(time.Hour), got[1].Time)
	})
}

// A backfill of many past weeks makes tables on the backfill tier (on
// demand), not hot ones, and late data for last week likewise; once their
// month is over they step down to the schedule's tier for their age.
func TestBackfillTablesAreOnDemand(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		store, cfg := b.Open(t)
		now := time.Date(2017, 11, 15, 12, 0, 0, 0, time.UTC)
		clk := clock.NewManual(now)
		db, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk})
		require.NoError(t, err)
		defer db.Close()
		var evs []event.Event
		for w := 1; w <= 30; w++ {
			evs = append(evs, ev(now.Add(-time.Duration(w)*7*24*time.Hour), "dev", map[string]any{"w": num(w)}))
		}
		_, err = db.Write(ctx, "acme", "backfill", evs)
		require.NoError(t, err)
		tables, err := db.Tables(ctx)
		require.NoError(t, err)
		require.Len(t, tables, 30)
		for _, s := range tables {
			require.Equal(t, family.BackfillTier, s.Tier, s.Name)
			require.Equal(t, string(storage.OnDemand), s.Billing, s.Name)
			require.Contains(t, s.TierReason, "after its period ended", s.Name)
		}

		r, err := lifecycle.New(lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: cfg.Families, MetaTable: backends.MetaTable(cfg), Clock: clk})
		require.NoError(t, err)
		res, err := r.Reconcile(ctx, false)
		require.NoError(t, err)
		for _, x := range res {
			require.Equal(t, lifecycle.Create, x.Kind, "only this week's table is made: %s %s", x.Kind, x.Table)
		}

		// December: the backfill is over; the tables go cold, never hot.
		clk.Set(time.Date(2017, 12, 1, 1, 0, 0, 0, time.UTC))
		res, err = r.Reconcile(ctx, false)
		require.NoError(t, err)
		moved := 0
		for _, x := range res {
			if (x.Kind == lifecycle.UpdateBilling || x.Kind == lifecycle.UpdateCapacity) && x.Tier == "cold" && strings.HasPrefix(x.Reason, "backfill ended") {
				moved++
			}
		}
		require.Equal(t, 30, moved)
	})
}

// registryReads counts the Queries of the table registry and the reads
// of its versions.
type registryReads struct {
	storage.Store
	meta            string
	lists, versions atomic.Int64
}

func (s *registryReads) Query(ctx context.Context, q storage.Query) storage.Iterator {
	if q.Table == s.meta && strings.HasPrefix(q.PK, "registry#") {
		s.lists.Add(1)
	}
	return s.Store.Query(ctx, q)
}

func (s *registryReads) GetItem(ctx context.Context, table, pk, sk string) (storage.Item, error) {
	if table == s.meta && strings.HasPrefix(pk, "registryversion#") {
		s.versions.Add(1)
	}
	return s.Store.GetItem(ctx, table, pk, sk)
}

func (s *registryReads) reset() { s.lists.Store(0); s.versions.Store(0) }

// A query or an aggregate reads the registry's version once, and its
// entries only when the version changed.
func TestOneRegistryReadPerQuery(t *testing.T) {
	store, cfg := backends.Pebble().Open(t)
	counted := &registryReads{Store: store, meta: backends.MetaTable(cfg)}
	ctx := context.Background()
	clk := clock.NewManual(apr10.Add(48 * time.Hour))
	db, err := engine.Open(ctx, counted, engine.Options{Schema: cfg, Clock: clk, Rollups: true, RollupSettle: time.Minute})
	require.NoError(t, err)
	defer db.Close()
	var evs []event.Event
	for i := range 50 {
		evs = append(evs, ev(apr10.Add(-time.Duration(i)*5*time.Hour), "dev", map[string]any{"v": num(i)}))
	}
	_, err = db.Write(ctx, "acme", "t", evs)
	require.NoError(t, err)

	q := engine.Query{Table: "t", From: apr10.Add(-300 * time.Hour), To: apr10}
	counted.reset()
	_, err = db.Query(ctx, "acme", q)
	require.NoError(t, err)
	require.Equal(t, int64(1), counted.versions.Load(), "query")
	require.Equal(t, int64(1), counted.lists.Load(), "the write made tables: the entries are read again")
	counted.reset()
	_, err = db.Query(ctx, "acme", q)
	require.NoError(t, err)
	require.Equal(t, int64(1), counted.versions.Load(), "query")
	require.Zero(t, counted.lists.Load(), "nothing changed: the entries kept are current")
	// Unaligned: raw edges and rollups in between. The first time, it
	// stores the rollups, making their home tables (a write); then it
	// only reads.
	aq := engine.AggregateQuery{Table: "t", From: apr10.Add(-250*time.Hour - 30*time.Minute), To: apr10.Add(-10 * time.Minute), Bucket: time.Hour, Funcs: []string{"count"}, Fields: []string{"v"}}
	first, err := db.Aggregate(ctx, "acme", aq)
	require.NoError(t, err)
	_, err = db.Aggregate(ctx, "acme", aq)
	require.NoError(t, err)
	counted.reset()
	again, err := db.Aggregate(ctx, "acme", aq)
	require.NoError(t, err)
	require.Equal(t, first, again)
	require.Equal(t, int64(1), counted.versions.Load(), "aggregate")
	require.Zero(t, counted.lists.Load(), "aggregate")
}
