package engine_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// TestWriteRefusesAFencedTable: once the lifecycle fences a table, a
// writer that routed to it refuses it within its RouteTTL (503), and
// reads still see its events.
func TestWriteRefusesAFencedTable(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		store, cfg := b.Open(t)
		meta := cfg.MetaTable
		if meta == "" {
			meta = engine.DefaultMetaTable
		}
		clk := clock.NewManual(apr10)
		db, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk, RouteTTL: time.Minute})
		require.NoError(t, err)
		defer db.Close()
		_, err = db.Write(ctx, "acme", "a_table", []event.Event{ev(apr10, "car-17", nil)})
		require.NoError(t, err)

		reg := registry.New(store, meta)
		entries, err := reg.List(ctx, cfg.Families[0].Name)
		require.NoError(t, err)
		require.Len(t, entries, 1)
		e := entries[0]
		e.FencedAt = apr10
		_, err = reg.Save(ctx, e)
		require.NoError(t, err)

		// Within its RouteTTL the writer trusts what it read...
		_, err = db.Write(ctx, "acme", "a_table", []event.Event{ev(apr10.Add(time.Second), "car-17", nil)})
		require.NoError(t, err)
		// ...and after it, reads the fence and refuses the table.
		clk.Advance(time.Minute)
		_, err = db.Write(ctx, "acme", "a_table", []event.Event{ev(apr10.Add(2*time.Second), "car-17", nil)})
		require.ErrorIs(t, err, engine.ErrFenced)
		require.ErrorIs(t, err, storage.ErrUnavailable)
		p, err := db.Query(ctx, "acme", engine.Query{Table: "a_table", From: apr10, To: apr10.Add(time.Hour)})
		require.NoError(t, err)
		require.Len(t, p.Events, 2)
	})
}

// hangingStore, once hang is set, never answers a batch write before its
// context ends.
type hangingStore struct {
	storage.Store
	hang *atomic.Bool
}

func (s hangingStore) BatchWrite(ctx context.Context, table string, items []storage.Item) error {
	if !s.hang.Load() {
		return s.Store.BatchWrite(ctx, table, items)
	}
	<-ctx.Done()
	return ctx.Err()
}

func (s hangingStore) Update(ctx context.Context, u storage.Update) error {
	if !s.hang.Load() {
		return s.Store.Update(ctx, u)
	}
	<-ctx.Done()
	return ctx.Err()
}

// TestWriteEndsByItsTimeout: a write the store does not answer fails
// with storage.ErrUnavailable (503 with Retry-After) at WriteTimeout.
func TestWriteEndsByItsTimeout(t *testing.T) {
	ctx := context.Background()
	store, cfg := backends.Pebble().Open(t)
	// The table is made and written once without the short timeout, which
	// a loaded machine can take longer than to make it.
	setup, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clock.NewManual(apr10)})
	require.NoError(t, err)
	_, err = setup.Write(ctx, "acme", "a_table", []event.Event{ev(apr10, "car-17", nil)})
	require.NoError(t, err)
	require.NoError(t, setup.Close())
	hang := &atomic.Bool{}
	db, err := engine.Open(ctx, hangingStore{store, hang}, engine.Options{Schema: cfg, Clock: clock.NewManual(apr10), WriteTimeout: 50 * time.Millisecond})
	require.NoError(t, err)
	defer db.Close()
	hang.Store(true)
	_, err = db.Write(ctx, "acme", "a_table", []event.Event{ev(apr10, "car-17", nil)})
	require.ErrorIs(t, err, storage.ErrUnavailable)
}
