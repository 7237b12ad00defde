package archive_test

import (
	"context"
	"encoding/json"
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
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// checkStore records the segments scanned and the items they returned,
// counts DeleteTable calls, and, while slow is set, holds each segment's
// scan after its first items until its context ends (slowStore).
type checkStore struct {
	storage.Store
	first   int
	slow    atomic.Bool
	items   atomic.Int64
	deletes atomic.Int64
	mu      sync.Mutex
	scans   []storage.Segment
}

func (s *checkStore) ScanSegment(ctx context.Context, table string, seg storage.Segment) storage.Iterator {
	s.mu.Lock()
	s.scans = append(s.scans, seg)
	s.mu.Unlock()
	it := storage.Iterator(&countingIterator{Iterator: s.Store.ScanSegment(ctx, table, seg), n: &s.items})
	if s.slow.Load() {
		it = &slowIterator{Iterator: it, ctx: ctx, left: s.first}
	}
	return it
}

func (s *checkStore) DeleteTable(ctx context.Context, table string) error {
	s.deletes.Add(1)
	return s.Store.DeleteTable(ctx, table)
}

// segments returns the segments scanned since the last call.
func (s *checkStore) segments() []storage.Segment {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.scans
	s.scans = nil
	return out
}

type countingIterator struct {
	storage.Iterator
	n *atomic.Int64
}

func (it *countingIterator) Next() bool {
	if !it.Iterator.Next() {
		return false
	}
	it.n.Add(1)
	return true
}

// TestVerifyCheckStopsAndResumes checks a fenced table against its
// archive in segments, eventually consistent, with a deadline that
// stops the check part-way: it stops before the deadline with each
// segment's progress saved, and the next check reads only what is left
// and finds the table the same as its archive (the same count and
// content hash as the archive's, which a full check finds too). A write
// after the archive is found; a table fenced too recently is read
// strongly consistent, and a stopped check of it keeps nothing.
func TestVerifyCheckStopsAndResumes(t *testing.T) {
	for _, b := range backends.All(t) {
		for _, tg := range targets {
			t.Run(b.Name+"/"+tg.name, func(t *testing.T) { testCheckStopsAndResumes(t, b, tg.open) })
		}
	}
}

func testCheckStopsAndResumes(t *testing.T, b backends.Backend, open func(t *testing.T) (string, archive.Options)) {
	ctx := context.Background()
	s, cfg := b.Open(t)
	table := cfg.Families[0].Prefix + "check"
	const n = 900
	fillPlain(t, s, table, n)
	now := time.Date(2017, 5, 1, 0, 0, 0, 0, time.UTC)
	fencedAt := now.Add(-archive.DefaultCheckSettle)
	facts := func(context.Context, string) (registry.Entry, bool, error) {
		return registry.Entry{Name: table, Generation: 1, FencedAt: fencedAt}, true, nil
	}
	cs := &checkStore{Store: s, first: 100}
	url, opts := open(t)
	opts.Clock, opts.Facts, opts.ScanSegments, opts.DeadlineMargin = clock.NewManual(now), facts, 3, deadlineMargin
	opts.Format, opts.Logger = family.ArchiveNDJSON, slog.New(slog.DiscardHandler)
	a, err := archive.Open(ctx, url, cs, opts)
	require.NoError(t, err)
	require.NoError(t, a.Archive(ctx, table))

	cs.segments()
	cs.slow.Store(true)
	dctx, cancel := context.WithTimeout(ctx, deadlineIn)
	defer cancel()
	diff, err := a.CheckTable(dctx, table)
	require.ErrorIs(t, err, archive.ErrStopped)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, dctx.Err(), "stopped at the margin, before the deadline")
	require.Empty(t, diff)
	segs := cs.segments()
	require.Len(t, segs, 3, "a parallel scan")
	for i, seg := range segs {
		require.True(t, seg.Eventual, "fenced long enough: eventually consistent")
		require.Equal(t, 3, seg.Total)
		require.Zero(t, seg.After, "segment %d starts at the start", i)
	}
	kept, err := a.CheckProgress(ctx, table, 1)
	require.NoError(t, err)
	require.Positive(t, kept)
	require.Less(t, kept, int64(n))

	cs.slow.Store(false)
	cs.items.Store(0)
	diff, err = a.CheckTable(ctx, table)
	require.NoError(t, err)
	require.Empty(t, diff, "the resumed check has the archive's count and content hash")
	require.Equal(t, n-kept, cs.items.Load(), "it read only what the stopped check had not")
	resumed := 0
	for _, seg := range cs.segments() {
		if seg.After != (storage.Key{}) {
			resumed++
		}
	}
	require.Positive(t, resumed, "segments resume after their last key")
	kept, err = a.CheckProgress(ctx, table, 1)
	require.NoError(t, err)
	require.Zero(t, kept, "a complete check keeps no checkpoint")
	cs.items.Store(0)
	diff, err = a.CheckTable(ctx, table)
	require.NoError(t, err)
	require.Empty(t, diff, "a whole check agrees")
	require.Equal(t, int64(n), cs.items.Load())

	// An item written after the archive is found.
	require.NoError(t, s.BatchWrite(ctx, table, []storage.Item{{PK: "late", SK: "1", Attrs: map[string]any{"v": "y"}}}))
	diff, err = a.CheckTable(ctx, table)
	require.NoError(t, err)
	require.Contains(t, diff, fmt.Sprintf("the table holds %d items", n+1))

	// Fenced a moment ago: strongly consistent, and nothing is
	// kept of a check that stops (writes may still land).
	fencedAt = now.Add(-time.Second)
	cs.segments()
	cs.slow.Store(true)
	dctx, cancel = context.WithTimeout(ctx, deadlineIn)
	defer cancel()
	_, err = a.CheckTable(dctx, table)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotErrorIs(t, err, archive.ErrStopped)
	for _, seg := range cs.segments() {
		require.False(t, seg.Eventual)
	}
	kept, err = a.CheckProgress(ctx, table, 1)
	require.NoError(t, err)
	require.Zero(t, kept)
}

// TestDeleteWaitsForAStoppedCheck lets the lifecycle archive a table and
// then delete it with a deadline that stops the check before the delete
// part-way: the delete is deferred, DeleteTable is not called and the
// table and its entry stay as they were; the next cycle resumes the check
// from its checkpoint, finishes it and deletes the table, which then
// reads from its archive as before.
func TestDeleteWaitsForAStoppedCheck(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			s, cfg := b.Open(t)
			url := "file://" + t.TempDir()
			archivedFamily(&cfg, url)
			old := time.Date(2017, 4, 10, 0, 0, 0, 0, time.UTC)
			clk := clock.NewManual(old.Add(24 * time.Hour))
			db, err := engine.Open(ctx, s, engine.Options{Schema: cfg, Clock: clk})
			require.NoError(t, err)
			defer db.Close()
			var evs []event.Event
			for i := range 600 {
				evs = append(evs, event.Event{Time: old.Add(time.Duration(i) * time.Minute), Series: fmt.Sprintf("dev-%d", i%40),
					Fields: map[string]any{"v": json.Number(fmt.Sprint(i))}})
			}
			_, err = db.Write(ctx, "acme", "a_table", evs)
			require.NoError(t, err)
			before, err := db.Query(ctx, "acme", engine.Query{Table: "a_table", From: old, To: old.Add(24 * time.Hour)})
			require.NoError(t, err)
			require.Len(t, before.Events, 600)

			cs := &checkStore{Store: s, first: 20}
			var archivers []*archive.Archiver
			r, err := lifecycle.New(lifecycle.Options{Store: cs, Families: cfg.Families, Clock: clk, MetaTable: cfg.MetaTable,
				Logger: slog.New(slog.DiscardHandler), OpenArchiver: func(target string, format family.ArchiveFormat) (lifecycle.Archiver, error) {
					a, err := archive.Open(ctx, target, cs, archive.Options{Clock: clk, Format: format, Facts: registryFacts(s, cfg),
						ScanSegments: 3, DeadlineMargin: deadlineMargin, Logger: slog.New(slog.DiscardHandler)})
					archivers = append(archivers, a)
					return a, err
				}})
			require.NoError(t, err)
			clk.Set(old.Add(5 * 7 * 24 * time.Hour)) // past the three weeks' retention
			table := ""
			for range 6 {
				clk.Advance(archive.DefaultCheckSettle) // the fence settles, and the replicas
				res, err := r.Reconcile(ctx, false)
				require.NoError(t, err)
				for _, x := range res {
					require.NotEqual(t, lifecycle.Delete, x.Kind, "no delete before the check is stopped")
					if x.Kind == lifecycle.Archive && x.Err == nil {
						table = x.Table
					}
				}
				if table != "" {
					break
				}
			}
			require.NotEmpty(t, table, "the old week's table is archived")

			// The delete's check stops at the deadline: no delete.
			cs.slow.Store(true)
			clk.Advance(time.Minute)
			dctx, cancel := context.WithTimeout(ctx, deadlineIn)
			defer cancel()
			res, err := r.Reconcile(dctx, false)
			require.NoError(t, err)
			deferred := false
			for _, x := range res {
				if x.Kind == lifecycle.Delete && x.Table == table {
					deferred = true
					require.Equal(t, lifecycle.Deferred, x.Outcome, "%v", x.Err)
					require.ErrorIs(t, x.Err, archive.ErrStopped)
				}
			}
			require.True(t, deferred, "the delete was tried, and deferred")
			require.Zero(t, cs.deletes.Load(), "no DeleteTable until a check completes")
			_, err = s.DescribeTable(ctx, table)
			require.NoError(t, err, "the table is still there")
			a := archivers[len(archivers)-1]
			kept, err := a.CheckProgress(ctx, table, 1)
			require.NoError(t, err)
			require.Positive(t, kept, "the check's progress is kept")
			entries, err := registry.New(s, cfg.MetaTable).List(ctx, cfg.Families[0].Name)
			require.NoError(t, err)
			for _, e := range entries {
				if e.Name == table {
					require.Equal(t, registry.Archived, e.State)
				}
			}

			// The next cycle resumes the check and deletes.
			cs.slow.Store(false)
			cs.items.Store(0)
			clk.Advance(time.Minute)
			res, err = r.Reconcile(ctx, false)
			require.NoError(t, err)
			deleted := false
			for _, x := range res {
				if x.Kind == lifecycle.Delete && x.Table == table {
					require.NoError(t, x.Err)
					deleted = true
				}
			}
			require.True(t, deleted)
			require.Equal(t, int64(1), cs.deletes.Load())
			_, err = s.DescribeTable(ctx, table)
			require.ErrorIs(t, err, storage.ErrTableNotFound)
			m, err := a.Manifest(ctx, table)
			require.NoError(t, err)
			require.Equal(t, m.ItemCount-kept, cs.items.Load(), "the check resumed: it read what the stopped one had not")
			kept, err = a.CheckProgress(ctx, table, 1)
			require.NoError(t, err)
			require.Zero(t, kept)

			archives := archive.NewReader(archive.ReaderOptions{CacheDir: t.TempDir()})
			t.Cleanup(func() { archives.Close() })
			adb, err := engine.Open(ctx, s, engine.Options{Schema: cfg, Clock: clk, Archives: archives, ReadOnly: true})
			require.NoError(t, err)
			defer adb.Close()
			after, err := adb.Query(ctx, "acme", engine.Query{Table: "a_table", From: old, To: old.Add(24 * time.Hour)})
			require.NoError(t, err)
			require.Equal(t, before.Events, after.Events)
		})
	}
}
