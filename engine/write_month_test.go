package engine_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/backends"
)

// An import of history (Options.WriteMonthOfEvent) files each event
// under its own month's write month, as if written when it happened,
// where a server files late events under the month they arrive in: two
// years of events land in the tables they would have had, and read back
// whole.
func TestWriteMonthOfEventFilesHistoryWhereItHappened(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			store, cfg := b.Open(t)
			require.True(t, cfg.Families[0].WriteTimeGrouping, "the default family groups by write month")
			now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
			old := []time.Time{
				time.Date(2024, 11, 3, 8, 0, 0, 0, time.UTC),
				time.Date(2025, 2, 28, 23, 59, 59, 0, time.UTC),
				time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC),
			}
			ctx := context.Background()
			write := func(o engine.Options) (*engine.DB, []string) {
				o.Schema, o.Clock = cfg, clock.NewManual(now)
				o.Tables.BackfillHorizon = engine.NoBackfillHorizon
				db, err := engine.Open(ctx, store, o)
				require.NoError(t, err)
				t.Cleanup(func() { db.Close() })
				var evs []event.Event
				for i, at := range old {
					evs = append(evs, ev(at, "dev-1", map[string]any{"v": num(i)}))
				}
				_, err = db.Write(ctx, "acme", "history", evs)
				require.NoError(t, err)
				tables, err := db.Tables(ctx)
				require.NoError(t, err)
				var months []string
				for _, ts := range tables {
					months = append(months, ts.WriteMonth)
				}
				slices.Sort(months)
				return db, slices.Compact(months)
			}

			db, months := write(engine.Options{WriteMonthOfEvent: true})
			require.Equal(t, []string{"2024-11", "2025-02", "2026-06"}, months, "each event in its own month's tables")
			got := queryAll(t, db, "acme", engine.Query{Table: "history", From: old[0], To: now})
			require.Len(t, got, len(old))
			for i, e := range got {
				require.True(t, e.Time.Equal(old[i]))
			}

			// A server's write of the same events files them under this
			// month, beside the imported ones, and reads return each
			// event once.
			db2, months := write(engine.Options{})
			require.Equal(t, []string{"2024-11", "2025-02", "2026-06", "2026-12"}, months)
			require.Len(t, queryAll(t, db2, "acme", engine.Query{Table: "history", From: old[0], To: now}), len(old))
		})
	}
}
