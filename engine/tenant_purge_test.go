package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
)

// TestDeleteTenantData deletes one tenant's data, of both layouts and
// rollups, across weeks and shards, and leaves another tenant's whole.
func TestDeleteTenantData(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		store, cfg := b.Open(t)
		cfg.Families[0].Shards = 2
		cfg.Tables = map[string]family.Table{
			"m":      {Family: cfg.Families[0].Name, Layout: family.LayoutMap},
			"rolled": {Family: cfg.Families[0].Name, Rollups: true},
		}
		start := time.Date(2017, 4, 1, 0, 0, 0, 0, time.UTC)
		clk := clock.NewManual(start.Add(30 * 24 * time.Hour))
		db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clk})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		ctx := context.Background()
		var evs []event.Event
		for i := range 120 {
			evs = append(evs, ev(start.Add(time.Duration(i)*5*time.Hour), fmt.Sprintf("s%d", i%6), map[string]any{"v": num(i)}))
		}
		for _, tenant := range []string{"acme", "globex"} {
			for _, table := range []string{"r", "m", "rolled"} {
				_, err := db.Write(ctx, tenant, table, slices.Clone(evs))
				require.NoError(t, err)
			}
		}
		// Rollups made by a query are data too.
		_, err = db.Aggregate(ctx, "acme", engine.AggregateQuery{Table: "rolled", From: start, To: start.Add(20 * 24 * time.Hour), Bucket: 24 * time.Hour, Fields: []string{"v"}, Funcs: []string{"sum"}})
		require.NoError(t, err)

		purged, err := db.DeleteTenantData(ctx, "acme")
		require.NoError(t, err)
		require.ElementsMatch(t, []string{"m", "r", "rolled"}, purged.Tables)
		require.Greater(t, purged.Items, int64(2*len(evs)))

		tables, err := db.LogicalTables(ctx, "acme")
		require.NoError(t, err)
		require.Empty(t, tables)
		var data []string
		require.NoError(t, store.ListTables(ctx, cfg.Families[0].Prefix, func(name string) bool {
			if strings.HasPrefix(name, cfg.Families[0].Prefix) {
				data = append(data, name)
			}
			return true
		}))
		require.NotEmpty(t, data)
		var left []string
		for _, name := range data {
			it := store.Scan(ctx, name)
			for it.Next() {
				if k := it.Item().Key(); strings.HasPrefix(k.PK, "acme#") {
					left = append(left, name+" "+k.PK+" "+k.SK)
				}
			}
			require.NoError(t, it.Close())
		}
		require.Empty(t, left)
		for _, table := range []string{"r", "m", "rolled"} {
			got := queryAll(t, db, "globex", engine.Query{Table: table, From: start, To: clk.Now(), Limit: 1000})
			require.Len(t, got, len(evs), "globex's %s", table)
			_, err := db.Query(ctx, "acme", engine.Query{Table: table, From: start, To: clk.Now()})
			require.ErrorIs(t, err, engine.ErrUnknownTable)
		}

		// Again: nothing left to delete.
		again, err := db.DeleteTenantData(ctx, "acme")
		require.NoError(t, err)
		require.Equal(t, engine.Purged{}, again)

		// The name written again is a new table, found whole.
		_, err = db.Write(ctx, "acme", "r", evs[:10])
		require.NoError(t, err)
		require.Len(t, queryAll(t, db, "acme", engine.Query{Table: "r", From: start, To: clk.Now(), Limit: 1000}), 10)
	})
}
