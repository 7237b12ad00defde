package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
)

// Under one catalog snapshot an aggregate, its gaps and a query read the
// registry's version once between them, and see the tables as that read
// found them; a table another server makes afterwards is seen by the
// next snapshot, and by reads without one, at once.
func TestCatalogSnapshotReadsTheVersionOnce(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		counted := &registryReads{}
		writer, reader, _ := writerAndReader(t, b, func(store storage.Store, meta string) storage.Store {
			counted.Store, counted.meta = store, meta
			return counted
		})

		_, err := writer.Write(ctx, "acme", "cars", []event.Event{ev(apr10.Add(-time.Hour), "car-1", map[string]any{"v": num(1)})})
		require.NoError(t, err)
		q := engine.Query{Table: "cars", From: apr10.Add(-365 * 24 * time.Hour), To: apr10}
		aq := engine.AggregateQuery{Table: "cars", Series: "car-1", From: q.From, To: q.To, Bucket: 24 * time.Hour, Funcs: []string{"count"}, Fields: []string{"v"}}

		snap := engine.WithCatalogSnapshot(ctx)
		counted.reset()
		buckets, err := reader.Aggregate(snap, "acme", aq)
		require.NoError(t, err)
		require.Len(t, buckets, 1)
		_, err = reader.AggregateGaps(snap, "acme", aq)
		require.NoError(t, err)
		require.Len(t, queryAll(t, reader, "acme", q), 1)
		require.Equal(t, int64(2), counted.versions.Load(), "the aggregate and the query without the snapshot")
		counted.reset()
		page, err := reader.Query(snap, "acme", q)
		require.NoError(t, err)
		require.Len(t, page.Events, 1)
		require.Zero(t, counted.versions.Load(), "the snapshot's version is read once")

		// Another server makes a table of an earlier period.
		_, err = writer.Write(ctx, "acme", "cars", []event.Event{ev(apr10.Add(-60*24*time.Hour), "car-1", map[string]any{"v": num(2)})})
		require.NoError(t, err)
		page, err = reader.Query(snap, "acme", q)
		require.NoError(t, err)
		require.Len(t, page.Events, 1, "the snapshot's tables are those of its first read")
		require.Zero(t, counted.versions.Load())

		page, err = reader.Query(engine.WithCatalogSnapshot(ctx), "acme", q)
		require.NoError(t, err)
		require.Len(t, page.Events, 2, "a new snapshot reads the version again")
		require.Len(t, queryAll(t, reader, "acme", q), 2)
		require.Equal(t, int64(2), counted.versions.Load())
	})
}
