package archive_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// TestNoWriteLostToASkewedReconciler runs a reconciler whose clock is a
// day ahead of the writing server's while sporadic writes arrive for the
// table it archives and deletes: the table is fenced, writes to it are
// refused (503) until it is gone and then make its next generation, and
// every acknowledged event is afterwards in a live table or a verified
// archive.
func TestNoWriteLostToASkewedReconciler(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) { testSkewedReconciler(t, b) })
	}
}

func testSkewedReconciler(t *testing.T, b backends.Backend) {
	ctx := context.Background()
	s, cfg := b.Open(t)
	cfg.MetaTable = backends.MetaTable(cfg)
	url, _ := fileTarget(t)
	f := &cfg.Families[0]
	f.Granularity = period.Granularity{Unit: period.Day}
	f.WriteTimeGrouping = false
	f.Retention = time.Hour
	f.Archive = url
	day := time.Date(2017, 4, 10, 22, 0, 0, 0, time.UTC)
	writerClk := clock.NewManual(day)
	reconClk := clock.NewManual(day.Add(24 * time.Hour)) // a day ahead

	db, err := engine.Open(ctx, s, engine.Options{Schema: cfg, Clock: writerClk, RouteTTL: 5 * time.Second})
	require.NoError(t, err)
	defer db.Close()
	const settle = 30 * time.Second
	r, err := lifecycle.New(lifecycle.Options{Store: s, Families: cfg.Families, Clock: reconClk, MetaTable: cfg.MetaTable,
		FenceSettle: settle, Logger: slog.New(slog.DiscardHandler),
		OpenArchiver: func(target string, format family.ArchiveFormat) (lifecycle.Archiver, error) {
			return archive.Open(ctx, target, s, archive.Options{Clock: reconClk, Format: format, Facts: registryFacts(s, cfg)})
		}})
	require.NoError(t, err)

	var (
		mu       sync.Mutex
		acked    = map[string]bool{}
		refused  int
		writes   atomic.Int64
		stop     = make(chan struct{})
		finished = make(chan struct{})
	)
	go func() {
		defer close(finished)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			// The writer's clock moves a second a write, within its day.
			now := writerClk.Advance(time.Second)
			ev := event.Event{ID: fmt.Sprintf("e%05d", i), Time: now, Series: "car-17", Fields: map[string]any{"n": json.Number(fmt.Sprint(i))}}
			_, err := db.Write(ctx, "acme", "a_table", []event.Event{ev})
			mu.Lock()
			switch {
			case err == nil:
				acked[ev.ID] = true
			case errors.Is(err, storage.ErrUnavailable):
				refused++
			default:
				t.Errorf("write %d: %v", i, err)
			}
			mu.Unlock()
			writes.Add(1)
		}
	}()
	// Each cycle waits for the fence to settle: by the reconciler's
	// clock, and for the writer to have moved past its RouteTTL (and its
	// write under way) by its own.
	cycle := func() {
		reconClk.Advance(settle)
		w := writes.Load()
		require.Eventually(t, func() bool { return writes.Load() >= w+8 }, time.Minute, time.Millisecond)
		_, err := r.Reconcile(ctx, false)
		if err != nil && !errors.Is(err, lifecycle.ErrActionsFailed) {
			require.NoError(t, err)
		}
	}
	for range 12 {
		cycle()
	}
	close(stop)
	<-finished
	for range 6 {
		reconClk.Advance(settle)
		_, _ = r.Reconcile(ctx, false)
	}

	// Every acknowledged event is in a live table or a verified archive.
	found := map[string]bool{}
	collect := func(table string) {
		for _, it := range scanAll(t, s, table) {
			// Rows and chunks alike; the events have client ids, which
			// no id scheme changes.
			evs, err := chunk.ItemEvents(nil, it, event.LatestIDScheme)
			require.NoError(t, err)
			for _, e := range evs {
				found[e.ID] = true
			}
		}
	}
	reg := registry.New(s, cfg.MetaTable)
	entries, err := reg.List(ctx, f.Name)
	require.NoError(t, err)
	deleted := 0
	for _, e := range entries {
		if _, err := s.DescribeTable(ctx, e.Name); err == nil {
			collect(e.Name)
		}
		if e.Generation > 1 || e.State == registry.Deleted {
			deleted++
		}
	}
	a, err := archive.Open(ctx, url, s, archive.Options{Clock: reconClk, Facts: registryFacts(s, cfg)})
	require.NoError(t, err)
	ms, err := a.List(ctx)
	require.NoError(t, err)
	tables := map[string]bool{}
	for _, m := range ms {
		if m.Verified() {
			tables[m.Table] = true
		}
	}
	for table := range tables {
		into := "restored_" + fmt.Sprint(len(found)) + "_" + f.Prefix
		require.NoError(t, a.Restore(ctx, table, into))
		collect(into)
		require.NoError(t, backends.Drop(ctx, s, into), "a restored table is protected from deletion")
	}
	mu.Lock()
	defer mu.Unlock()
	lost := 0
	for id := range acked {
		if !found[id] {
			lost++
		}
	}
	t.Logf("%d writes: %d acknowledged, %d refused (fenced or timed out); %d archives; %d tables deleted or made again", writes.Load(), len(acked), refused, len(tables), deleted)
	require.NotZero(t, deleted, "the reconciler deleted the writers' table at least once")
	require.NotZero(t, len(acked))
	require.NotZero(t, refused, "writes to the fenced table were refused")
	require.Zero(t, lost, "acknowledged events found in no live table and no verified archive")
}
