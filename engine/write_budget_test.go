package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
)

// openBudget is open with a table budget.
func openBudget(t *testing.T, b backends.Backend, now time.Time, budget engine.TableBudget) *fixture {
	t.Helper()
	store, cfg := b.Open(t)
	clk := clock.NewManual(now)
	db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clk, Tables: budget})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return &fixture{prefix: cfg.Families[0].Prefix, db: db, store: store, clock: clk}
}

// tablesOf counts the store's tables of the fixture's family.
func (f *fixture) tablesOf(t *testing.T) int {
	t.Helper()
	n := 0
	require.NoError(t, f.store.ListTables(context.Background(), "", func(name string) bool {
		if strings.HasPrefix(name, f.prefix) {
			n++
		}
		return true
	}))
	return n
}

// weekly returns n events a week apart, the last at last.
func weekly(n int, last time.Time) []event.Event {
	var evs []event.Event
	for i := range n {
		evs = append(evs, ev(last.Add(-time.Duration(n-1-i)*7*24*time.Hour), "s", map[string]any{"v": num(i)}))
	}
	return evs
}

// TestTableBudget is the tester's requests: events a week apart since
// 1970 in one request made a table each, for every tenant to pay for. A
// refused request writes nothing and makes no table, and what was written
// before is unharmed.
func TestTableBudget(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		now := time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC)

		t.Run("backfill horizon", func(t *testing.T) {
			f := openBudget(t, b, now, engine.TableBudget{})
			_, err := f.db.Write(ctx, "acme", "t", []event.Event{ev(now.Add(-time.Hour), "s", map[string]any{"v": num(1)})})
			require.NoError(t, err)
			before := f.tablesOf(t)
			since1970 := weekly(2969, now.Add(-time.Hour))
			_, err = f.db.Write(ctx, "acme", "t", since1970)
			var be *event.BatchError
			require.ErrorAs(t, err, &be)
			require.Contains(t, be.Problems[0].Reason, "older than the backfill horizon of 365d (backfill_horizon")
			require.Equal(t, before, f.tablesOf(t), "a refused request makes no table")
			require.Len(t, queryAll(t, f.db, "acme", engine.Query{Table: "t", From: time.Unix(0, 0), To: now}), 1)

			// A year back is within it.
			_, err = f.db.Write(ctx, "acme", "t", []event.Event{ev(now.Add(-364*24*time.Hour), "s", map[string]any{"v": num(2)})})
			require.NoError(t, err)
		})
		t.Run("new tables per request", func(t *testing.T) {
			f := openBudget(t, b, now, engine.TableBudget{BackfillHorizon: engine.NoBackfillHorizon, MaxNewTablesPerRequest: 10, MaxNewTablesPerTenantHour: 1000})
			before := f.tablesOf(t)
			_, err := f.db.Write(ctx, "acme", "t", weekly(2969, now.Add(-time.Hour)))
			require.ErrorIs(t, err, engine.ErrTooManyNewTables)
			require.Contains(t, err.Error(), "over the 10 a request may make (new_tables.per_request")
			require.Equal(t, before, f.tablesOf(t), "a refused request makes no table")
			_, err = f.db.Query(ctx, "acme", engine.Query{Table: "t", From: time.Unix(0, 0), To: now})
			require.ErrorIs(t, err, engine.ErrUnknownTable, "not even the logical table is recorded")

			// Ten weeks fit, and writing them again makes none.
			ten := weekly(10, now.Add(-time.Hour))
			_, err = f.db.Write(ctx, "acme", "t", ten)
			require.NoError(t, err)
			made := f.tablesOf(t) - before
			require.LessOrEqual(t, made, 10)
			_, err = f.db.Write(ctx, "acme", "t", ten)
			require.NoError(t, err)
			require.Equal(t, made, f.tablesOf(t)-before)
		})
		t.Run("new tables per tenant and hour", func(t *testing.T) {
			f := openBudget(t, b, now, engine.TableBudget{BackfillHorizon: engine.NoBackfillHorizon, MaxNewTablesPerTenantHour: 12})
			_, err := f.db.Write(ctx, "acme", "t", weekly(8, now.Add(-time.Hour)))
			require.NoError(t, err)
			made := f.tablesOf(t)
			older := weekly(8, now.Add(-9*7*24*time.Hour))
			_, err = f.db.Write(ctx, "acme", "t", older)
			var re *engine.TableRateError
			require.ErrorAs(t, err, &re)
			require.ErrorIs(t, err, engine.ErrTableRate)
			require.Contains(t, err.Error(), "of the 12 it may (new_tables.per_tenant_hour")
			require.Equal(t, time.Hour, re.RetryAfter)
			require.Equal(t, made, f.tablesOf(t))
			require.Len(t, queryAll(t, f.db, "acme", engine.Query{Table: "t", From: time.Unix(0, 0), To: now}), 8)

			// Another tenant has its own hour; this one, after the hour.
			_, err = f.db.Write(ctx, "globex", "t", older[:2])
			require.NoError(t, err)
			f.clock.Set(now.Add(time.Hour + time.Second))
			_, err = f.db.Write(ctx, "acme", "t", older)
			require.NoError(t, err)
		})
		t.Run("account's table quota", func(t *testing.T) {
			store, cfg := b.Open(t)
			open := func(budget engine.TableBudget) *engine.DB {
				budget.BackfillHorizon = engine.NoBackfillHorizon
				db, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clock.NewManual(now), Tables: budget})
				require.NoError(t, err)
				t.Cleanup(func() { db.Close() })
				return db
			}
			_, err := open(engine.TableBudget{}).Write(ctx, "acme", "t", []event.Event{ev(now.Add(-time.Hour), "s", map[string]any{"v": num(1)})})
			require.NoError(t, err)
			// Every table of the account counts, timetable's or not: a
			// quota whose 90% the store holds already.
			count := 0
			require.NoError(t, store.ListTables(ctx, "", func(string) bool { count++; return true }))
			quota := count * 100 / engine.TableQuotaWritePercent
			db := open(engine.TableBudget{TableQuota: quota})
			_, err = db.Write(ctx, "acme", "t", weekly(3, now.Add(-30*24*time.Hour)))
			require.ErrorIs(t, err, engine.ErrNearTableQuota)
			require.Contains(t, err.Error(), fmt.Sprintf("below 90%% of the quota of %d (table_quota", quota))
			// Tables that exist cost nothing.
			_, err = db.Write(ctx, "acme", "t", []event.Event{ev(now.Add(-2*time.Hour), "s", map[string]any{"v": num(2)})})
			require.NoError(t, err)
			require.Len(t, queryAll(t, db, "acme", engine.Query{Table: "t", From: time.Unix(0, 0), To: now}), 2)
		})
	})
}

// batchOf checks events as a server does before WriteTables.
func batchOf(t *testing.T, db *engine.DB, events []event.Event) event.Batch {
	t.Helper()
	b, err := event.Check(events, db.Options().Limits, db.Options().Clock.Now())
	require.NoError(t, err)
	return b
}

// TestTableBudgetOfRequest holds a request of several logical tables (a
// line protocol body, a measurement each) to one count of new tables
// over all of them, checked before anything is written.
func TestTableBudgetOfRequest(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		now := time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC)
		// Three tables of four weeks each, twelve weeks in all.
		parts := func(db *engine.DB) []engine.TableEvents {
			var ps []engine.TableEvents
			for i, name := range []string{"a", "b", "c"} {
				ps = append(ps, engine.TableEvents{Table: name, Events: batchOf(t, db, weekly(4, now.Add(-time.Hour-time.Duration(4*i)*7*24*time.Hour)))})
			}
			return ps
		}

		t.Run("per request", func(t *testing.T) {
			f := openBudget(t, b, now, engine.TableBudget{BackfillHorizon: engine.NoBackfillHorizon, MaxNewTablesPerRequest: 10, MaxNewTablesPerTenantHour: 1000})
			_, err := f.db.WriteTables(ctx, "acme", parts(f.db))
			require.ErrorIs(t, err, engine.ErrTooManyNewTables)
			require.Contains(t, err.Error(), "over the 10 a request may make (new_tables.per_request")
			require.Zero(t, f.tablesOf(t), "a refused request makes no table")
			tables, err := f.db.LogicalTables(ctx, "acme")
			require.NoError(t, err)
			require.Empty(t, tables, "nor records a logical table")

			// Each table alone fits; then the whole request makes no
			// table, and is never refused.
			for _, p := range parts(f.db) {
				_, err := f.db.WriteBatch(ctx, "acme", p.Table, p.Events)
				require.NoError(t, err)
			}
			made := f.tablesOf(t)
			require.Greater(t, made, 10)
			n, err := f.db.WriteTables(ctx, "acme", parts(f.db))
			require.NoError(t, err)
			require.Equal(t, 12, n)
			require.Equal(t, made, f.tablesOf(t))
		})
		t.Run("tables shared by the request's logical tables count once", func(t *testing.T) {
			f := openBudget(t, b, now, engine.TableBudget{BackfillHorizon: engine.NoBackfillHorizon, MaxNewTablesPerRequest: 4, MaxNewTablesPerTenantHour: 4})
			same := weekly(4, now.Add(-time.Hour))
			n, err := f.db.WriteTables(ctx, "acme", []engine.TableEvents{{Table: "a", Events: batchOf(t, f.db, same)}, {Table: "b", Events: batchOf(t, f.db, same)}})
			require.NoError(t, err)
			require.Equal(t, 8, n)
			require.Equal(t, 4, f.tablesOf(t))
			for _, table := range []string{"a", "b"} {
				require.Len(t, queryAll(t, f.db, "acme", engine.Query{Table: table, From: time.Unix(0, 0), To: now}), 4)
			}
		})
		t.Run("a refused table's events refuse the request", func(t *testing.T) {
			f := openBudget(t, b, now, engine.TableBudget{})
			ps := []engine.TableEvents{{Table: "a", Events: batchOf(t, f.db, weekly(1, now))}, {Table: "..", Events: batchOf(t, f.db, weekly(1, now))}}
			_, err := f.db.WriteTables(ctx, "acme", ps)
			var te *engine.TableError
			require.ErrorAs(t, err, &te)
			require.Equal(t, 1, te.Index)
			require.ErrorIs(t, err, engine.ErrBadTableName)
			require.Zero(t, f.tablesOf(t))
		})
		t.Run("per tenant and hour", func(t *testing.T) {
			f := openBudget(t, b, now, engine.TableBudget{BackfillHorizon: engine.NoBackfillHorizon, MaxNewTablesPerTenantHour: 20})
			_, err := f.db.Write(ctx, "acme", "t", weekly(10, now.Add(-20*7*24*time.Hour)))
			require.NoError(t, err)
			made := f.tablesOf(t)
			_, err = f.db.WriteTables(ctx, "acme", parts(f.db))
			var re *engine.TableRateError
			require.ErrorAs(t, err, &re)
			require.Equal(t, time.Hour, re.RetryAfter)
			require.Equal(t, made, f.tablesOf(t), "a refused request makes no table")
			for _, table := range []string{"a", "b", "c"} {
				_, err := f.db.Query(ctx, "acme", engine.Query{Table: table, From: time.Unix(0, 0), To: now})
				require.ErrorIs(t, err, engine.ErrUnknownTable)
			}
		})
	})
}

// TestTableBudgetHour holds the tenant's new tables of the hour to the
// meta table: a restarted engine, and every engine on the store, see the
// tables the others made, and charges racing on two engines never pass
// the limit together.
func TestTableBudgetHour(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		now := time.Date(2026, 11, 26, 20, 30, 0, 0, time.UTC)
		budget := engine.TableBudget{BackfillHorizon: engine.NoBackfillHorizon, MaxNewTablesPerTenantHour: 12}
		store, cfg := b.Open(t)
		clk := clock.NewManual(now)
		open := func() *engine.DB {
			db, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk, Tables: budget})
			require.NoError(t, err)
			t.Cleanup(func() { db.Close() })
			return db
		}

		t.Run("across a restart", func(t *testing.T) {
			db := open()
			_, err := db.Write(ctx, "acme", "t", weekly(8, now.Add(-time.Hour)))
			require.NoError(t, err)
			require.NoError(t, db.Close())

			db = open()
			older := weekly(8, now.Add(-9*7*24*time.Hour))
			_, err = db.Write(ctx, "acme", "t", older)
			var re *engine.TableRateError
			require.ErrorAs(t, err, &re)
			require.Equal(t, 30*time.Minute, re.RetryAfter, "until the next hour")
			require.Contains(t, err.Error(), "the tenant made 8 in the hour since 2026-11-26T20:00:00Z, of the 12 it may (new_tables.per_tenant_hour")
			// Writes that make no table are never refused.
			_, err = db.Write(ctx, "acme", "t", weekly(8, now.Add(-time.Hour)))
			require.NoError(t, err)
			// Four more fit in the hour; then the next hour has room.
			_, err = db.Write(ctx, "acme", "t", older[:4])
			require.NoError(t, err)
			_, err = db.Write(ctx, "acme", "t", older[4:5])
			require.ErrorIs(t, err, engine.ErrTableRate)
			clk.Set(now.Add(30 * time.Minute))
			_, err = db.Write(ctx, "acme", "t", older[4:])
			require.NoError(t, err)
		})
		t.Run("more than the hour allows", func(t *testing.T) {
			_, err := open().Write(ctx, "globex", "t", weekly(13, now.Add(-30*7*24*time.Hour)))
			require.ErrorIs(t, err, engine.ErrTooManyNewTables)
			require.Contains(t, err.Error(), "over the 12 a tenant may make in an hour (new_tables.per_tenant_hour")
		})
		t.Run("two engines at once", func(t *testing.T) {
			clk.Set(now.Add(5 * time.Hour))
			dbs := []*engine.DB{open(), open()}
			// Eight writers, two new tables each, on weeks of their own:
			// six fit in the hour of twelve.
			errs := make([]error, 8)
			var wg sync.WaitGroup
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = dbs[i%2].Write(ctx, "initech", "t", weekly(2, now.Add(-time.Duration(60+3*i)*7*24*time.Hour)))
				}()
			}
			wg.Wait()
			ok := 0
			for _, err := range errs {
				if err == nil {
					ok++
					continue
				}
				require.ErrorIs(t, err, engine.ErrTableRate)
			}
			require.Equal(t, 6, ok)
		})
	})
}

// downBudgetStore fails the updates of the tenants' new tables items,
// as a meta table that throttles them would.
type downBudgetStore struct {
	storage.Store
}

func (s downBudgetStore) Update(ctx context.Context, u storage.Update) error {
	if strings.HasPrefix(u.PK, "newtables#") {
		return fmt.Errorf("injected: %w", storage.ErrThrottled)
	}
	return s.Store.Update(ctx, u)
}

// TestTableBudgetStoreFailure: when the count of the hour cannot be
// charged, a write that needs a new table fails with the store's error
// (a retry may cure it), having written nothing and made no table; one
// that makes no table does not ask.
func TestTableBudgetStoreFailure(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		now := time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC)
		inner, cfg := b.Open(t)
		f := &fixture{prefix: cfg.Families[0].Prefix, store: inner}
		db, err := engine.Open(ctx, inner, engine.Options{Schema: cfg, Clock: clock.NewManual(now), Tables: engine.TableBudget{BackfillHorizon: engine.NoBackfillHorizon}})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		_, err = db.Write(ctx, "acme", "t", weekly(1, now.Add(-time.Hour)))
		require.NoError(t, err)
		made := f.tablesOf(t)
		require.NoError(t, db.Close())

		db, err = engine.Open(ctx, downBudgetStore{inner}, engine.Options{Schema: cfg, Clock: clock.NewManual(now), Tables: engine.TableBudget{BackfillHorizon: engine.NoBackfillHorizon}})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		_, err = db.Write(ctx, "acme", "t", weekly(3, now.Add(-10*7*24*time.Hour)))
		require.ErrorIs(t, err, storage.ErrThrottled)
		require.Contains(t, err.Error(), `count the new tables of tenant "acme"`)
		require.Equal(t, made, f.tablesOf(t))
		require.Len(t, queryAll(t, db, "acme", engine.Query{Table: "t", From: time.Unix(0, 0), To: now}), 1)
		_, err = db.Write(ctx, "acme", "t", weekly(1, now.Add(-2*time.Hour)))
		require.NoError(t, err)
	})
}

// budgetCountingStore counts the reads and updates of the tenants' new
// tables items.
type budgetCountingStore struct {
	storage.Store
	n atomic.Int64
}

func (s *budgetCountingStore) Update(ctx context.Context, u storage.Update) error {
	if strings.HasPrefix(u.PK, "newtables#") {
		s.n.Add(1)
	}
	return s.Store.Update(ctx, u)
}

func (s *budgetCountingStore) GetItem(ctx context.Context, table, pk, sk string) (storage.Item, error) {
	if strings.HasPrefix(pk, "newtables#") {
		s.n.Add(1)
	}
	return s.Store.GetItem(ctx, table, pk, sk)
}

// TestTableBudgetRefusedAgainLocally: a count of the hour only grows,
// so a client retrying a refused write is refused again by the engine
// without asking the meta table, until the hour ends.
func TestTableBudgetRefusedAgainLocally(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		now := time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC)
		inner, cfg := b.Open(t)
		store := &budgetCountingStore{Store: inner}
		clk := clock.NewManual(now)
		db, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk, Tables: engine.TableBudget{BackfillHorizon: engine.NoBackfillHorizon, MaxNewTablesPerTenantHour: 4}})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		_, err = db.Write(ctx, "acme", "t", weekly(3, now.Add(-time.Hour)))
		require.NoError(t, err)
		older := weekly(2, now.Add(-10*7*24*time.Hour))
		_, err = db.Write(ctx, "acme", "t", older)
		require.ErrorIs(t, err, engine.ErrTableRate)
		asked := store.n.Load()
		for range 3 {
			_, err = db.Write(ctx, "acme", "t", older)
			require.ErrorIs(t, err, engine.ErrTableRate)
			require.Contains(t, err.Error(), "the tenant made 3 in the hour since 2026-11-26T20:00:00Z")
		}
		require.Equal(t, asked, store.n.Load(), "refused again without asking")
		_, err = db.Write(ctx, "acme", "t", older[:1])
		require.NoError(t, err, "one more fits, and is asked for")
		require.Greater(t, store.n.Load(), asked)
		clk.Set(now.Add(time.Hour))
		_, err = db.Write(ctx, "acme", "t", older)
		require.NoError(t, err, "the next hour has room")
	})
}
