package engine_test

import (
	"cmp"
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

// TestItemEvents decodes a scan of a physical table holding both layouts,
// series index entries, rollups and their markers, and finds exactly the
// events queries return, each with its tenant and logical table.
func TestItemEvents(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		store, cfg := b.Open(t)
		fam := cfg.Families[0].Name
		cfg.Families[0].Shards = 2
		cfg.Tables = map[string]family.Table{
			"m": {Family: fam, Layout: family.LayoutMap},
			"r": {Family: fam, Layout: family.LayoutRow, Rollups: true},
		}
		db, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clock.NewManual(apr10.Add(time.Hour)), Rollups: true})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })

		want := map[string][]event.Event{}
		for _, tenant := range []string{"acme", "globex"} {
			for _, table := range []string{"m", "r"} {
				var evs []event.Event
				for i := range 12 {
					evs = append(evs, ev(apr10.Add(time.Duration(i)*time.Minute+time.Duration(i)*time.Microsecond),
						fmt.Sprintf("car-%d", i%3), map[string]any{"n": num(i), "who": tenant}))
				}
				_, err := db.Write(ctx, tenant, table, evs)
				require.NoError(t, err)
				want[tenant+"/"+table] = queryAll(t, db, tenant, engine.Query{Table: table, From: apr10, To: apr10.Add(time.Hour)})
				require.Len(t, want[tenant+"/"+table], 12)
			}
		}
		// Rollups are made when an aggregate first reads them.
		_, err = db.Aggregate(ctx, "acme", engine.AggregateQuery{Table: "r", From: apr10.Truncate(24 * time.Hour), To: apr10.Truncate(24 * time.Hour).Add(24*time.Hour - 1), Bucket: time.Hour, Fields: []string{"n"}, Funcs: []string{engine.FnSum}})
		require.NoError(t, err)

		tables, err := db.Tables(ctx)
		require.NoError(t, err)
		require.Len(t, tables, 1)
		got := map[string][]event.Event{}
		others := map[string]bool{} // items of no event, by the end of their partition key
		it := store.Scan(ctx, tables[0].Name)
		for it.Next() {
			item := it.Item()
			pk := item.PK
			evs := engine.ItemEvents(nil, item)
			if len(evs) == 0 {
				others[pk[strings.LastIndexByte(pk, '#')+1:]] = true
			}
			for _, e := range evs {
				got[e.Tenant+"/"+e.Table] = append(got[e.Tenant+"/"+e.Table], e.Event)
			}
		}
		require.NoError(t, it.Err())
		require.NoError(t, it.Close())
		for k, evs := range got {
			slices.SortFunc(evs, func(a, b event.Event) int { return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.ID, b.ID)) })
			got[k] = evs
		}
		require.Equal(t, want, got)
		// The table held series index entries ("#r", "#m"), rollup
		// markers ("#~v") and rollups ("#~rhour"), none of them events.
		require.Equal(t, map[string]bool{"m": true, "r": true, "~v": true, "~rhour": true}, others)
	})
}
