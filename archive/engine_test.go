package archive_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
)

// TestEngineRoundTrip writes events through the engine, archives their
// tables, deletes them, restores them, and queries the same events back
// through a new engine.
func TestEngineRoundTrip(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			s, cfg := b.Open(t)
			now := time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC)
			var events []event.Event
			for i := range 30 {
				events = append(events, event.Event{
					Time:   time.Date(2017, 4, 10, 12, 0, i, 123456000, time.UTC),
					Series: []string{"car-17", "car-18"}[i%2],
					Fields: map[string]any{"speed": json.Number("88.5"), "gear": "D", "on": i%3 == 0, "raw": []byte{byte(i)}},
				})
			}
			from, to := time.Date(2017, 4, 1, 0, 0, 0, 0, time.UTC), now
			q := engine.Query{Table: "a_table", From: from, To: to}

			db := openEngine(t, s, cfg, now)
			_, err := db.Write(ctx, "acme", "a_table", events)
			require.NoError(t, err)
			want, err := db.Query(ctx, "acme", q)
			require.NoError(t, err)
			require.Len(t, want.Events, len(events))
			tables, err := db.Tables(ctx)
			require.NoError(t, err)
			require.Len(t, tables, 1)
			table := tables[0].Name
			require.NoError(t, db.Close())

			url, opts := s3Target(t)
			a, err := archive.Open(ctx, url, s, opts)
			require.NoError(t, err)
			require.NoError(t, a.Archive(ctx, table))
			require.NoError(t, backends.Drop(ctx, s, table))

			db = openEngine(t, s, cfg, now)
			gone, err := db.Query(ctx, "acme", q)
			require.NoError(t, err)
			require.Empty(t, gone.Events)
			require.NoError(t, db.Close())

			require.NoError(t, a.Restore(ctx, table, ""))
			db = openEngine(t, s, cfg, now)
			got, err := db.Query(ctx, "acme", q)
			require.NoError(t, err)
			require.Equal(t, want, got)
			tables, err = db.Tables(ctx)
			require.NoError(t, err)
			require.Len(t, tables, 1)
			require.Equal(t, table, tables[0].Name)
			require.Equal(t, "2017-06", tables[0].WriteMonth)
			require.Equal(t, string(storage.OnDemand), tables[0].Billing)
		})
	}
}

func openEngine(t *testing.T, s storage.Store, cfg family.Schema, now time.Time) *engine.DB {
	t.Helper()
	db, err := engine.Open(context.Background(), s, engine.Options{Schema: cfg, Clock: clock.NewManual(now)})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}
