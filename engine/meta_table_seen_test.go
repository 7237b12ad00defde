package engine_test

import (
	"context"
	"strings"
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

// tableLookups counts the reads of logical tables' records in the meta
// table.
type tableLookups struct {
	storage.Store
	meta  string
	reads atomic.Int64
}

func (s *tableLookups) GetItem(ctx context.Context, table, pk, sk string) (storage.Item, error) {
	if table == s.meta && strings.HasPrefix(pk, "tables#") {
		s.reads.Add(1)
	}
	return s.Store.GetItem(ctx, table, pk, sk)
}

// writerAndReader opens two engines on one store of backend b, at
// apr10 on one manual clock: a writer, and a reader whose store is the
// one wrap returns (a counting wrapper of the store and its meta table).
func writerAndReader(t *testing.T, b backends.Backend, wrap func(store storage.Store, meta string) storage.Store) (writer, reader *engine.DB, clk *clock.Manual) {
	t.Helper()
	ctx := context.Background()
	store, cfg := b.Open(t)
	clk = clock.NewManual(apr10)
	writer, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk})
	require.NoError(t, err)
	t.Cleanup(func() { writer.Close() })
	reader, err = engine.Open(ctx, wrap(store, backends.MetaTable(cfg)), engine.Options{Schema: cfg, Clock: clk})
	require.NoError(t, err)
	t.Cleanup(func() { reader.Close() })
	return writer, reader, clk
}

// A server that does not write a logical table reads its record once per
// five seconds (the TTL of what it found) rather than once per query; a
// table it found missing it looks up again at once, and one deleted with
// its tenant's data elsewhere is unknown to it within the TTL.
func TestLogicalTableFoundIsTrustedForATime(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		counted := &tableLookups{}
		writer, reader, clk := writerAndReader(t, b, func(store storage.Store, meta string) storage.Store {
			counted.Store, counted.meta = store, meta
			return counted
		})
		q := engine.Query{Table: "cars", From: apr10.Add(-24 * time.Hour), To: apr10}
		aq := engine.AggregateQuery{Table: "cars", From: q.From, To: q.To, Bucket: time.Hour, Funcs: []string{"count"}}

		_, err := reader.Query(ctx, "acme", q)
		require.ErrorIs(t, err, engine.ErrUnknownTable)
		_, err = writer.Write(ctx, "acme", "cars", []event.Event{ev(apr10.Add(-time.Hour), "car-1", map[string]any{"v": num(1)})})
		require.NoError(t, err)
		counted.reads.Store(0)
		require.Len(t, queryAll(t, reader, "acme", q), 1, "a table found missing is looked up again")
		require.Equal(t, int64(1), counted.reads.Load())
		for range 3 {
			require.Len(t, queryAll(t, reader, "acme", q), 1)
			_, err = reader.Aggregate(ctx, "acme", aq)
			require.NoError(t, err)
		}
		require.Equal(t, int64(1), counted.reads.Load(), "found once, trusted since")

		clk.Advance(5 * time.Second)
		require.Len(t, queryAll(t, reader, "acme", q), 1)
		require.Equal(t, int64(2), counted.reads.Load(), "looked up again after the TTL")

		_, err = writer.DeleteTenantData(ctx, "acme")
		require.NoError(t, err)
		require.Empty(t, queryAll(t, reader, "acme", q), "within the TTL: a table of no events")
		clk.Advance(5 * time.Second)
		_, err = reader.Query(ctx, "acme", q)
		require.ErrorIs(t, err, engine.ErrUnknownTable)
		_, err = reader.Aggregate(ctx, "acme", aq)
		require.ErrorIs(t, err, engine.ErrUnknownTable)
	})
}
