package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/backends"
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
