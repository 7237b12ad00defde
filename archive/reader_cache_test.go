package archive_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
)

// TestReaderCacheIsBounded archives three weeks to S3 and reads them
// through an archive reader whose cache holds one week's Parquet at most: the
// cache folder never holds more than its bound, the file a former run
// left is evicted first, and a week evicted is fetched again with the
// same answer.
func TestReaderCacheIsBounded(t *testing.T) {
	ctx := context.Background()
	s, cfg := backends.Pebble().Open(t)
	url, opts := s3Target(t)
	archivedFamily(&cfg, url)
	first := time.Date(2017, 4, 10, 0, 0, 0, 0, time.UTC) // the week of April 9
	clk := clock.NewManual(first)
	weeks := []time.Time{first, first.AddDate(0, 0, 7), first.AddDate(0, 0, 14)}

	db, err := engine.Open(ctx, s, engine.Options{Schema: cfg, Clock: clk})
	require.NoError(t, err)
	want := map[time.Time][]string{}
	for w, start := range weeks {
		var evs []event.Event
		for i := range 40 {
			e := event.Event{ID: fmt.Sprintf("w%d-%02d", w, i), Time: start.Add(time.Duration(i) * 97 * time.Minute),
				Series: []string{"car-17", "car-18"}[i%2], Fields: map[string]any{"speed": json.Number(fmt.Sprint(w*100 + i))}}
			evs = append(evs, e)
			want[start] = append(want[start], e.ID)
		}
		clk.Set(start.AddDate(0, 0, 6))
		_, err = db.Write(ctx, "acme", "a_table", evs)
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())

	clk.Set(first.AddDate(0, 0, 8*7))
	r, err := lifecycle.New(lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: s, Families: cfg.Families, Clock: clk, MetaTable: cfg.MetaTable,
		Logger: slog.New(slog.DiscardHandler), OpenArchiver: func(target string, format family.ArchiveFormat) (lifecycle.Archiver, error) {
			o := opts
			o.Clock, o.Format, o.Facts = clk, format, registryFacts(s, cfg)
			return archive.Open(ctx, target, s, o)
		}})
	require.NoError(t, err)
	deleted := 0
	for range 3 {
		res, err := r.Reconcile(ctx, false)
		require.NoError(t, err)
		for _, x := range res {
			require.NoError(t, x.Err)
			if x.Kind == lifecycle.Delete {
				deleted++
			}
		}
	}
	require.Equal(t, 3, deleted, "the three weeks are archived and deleted")

	a, err := archive.Open(ctx, url, s, opts)
	require.NoError(t, err)
	ms, err := a.List(ctx)
	require.NoError(t, err)
	require.Len(t, ms, 3)
	var bound int64
	for _, m := range ms {
		var n int64
		for _, p := range m.Parquet {
			n += p.Bytes
		}
		require.Positive(t, n)
		bound = max(bound, n)
	}

	dir := t.TempDir()
	// A former run's file, as large as the bound: evicted first.
	former := filepath.Join(dir, "timetable-cold-0000.parquet")
	require.NoError(t, os.WriteFile(former, make([]byte, bound), 0o644))
	archives := archive.NewReader(archive.ReaderOptions{S3: opts.S3, CacheDir: dir, CacheBytes: bound})
	t.Cleanup(func() { archives.Close() })
	db, err = engine.Open(ctx, s, engine.Options{Schema: cfg, Clock: clk, Archives: archives, ReadOnly: true})
	require.NoError(t, err)
	defer db.Close()
	cached := func() int64 {
		t.Helper()
		des, err := os.ReadDir(dir)
		require.NoError(t, err)
		var n int64
		for _, de := range des {
			info, err := de.Info()
			require.NoError(t, err)
			n += info.Size()
		}
		return n
	}
	read := func(start time.Time) {
		t.Helper()
		p, err := db.Query(ctx, "acme", engine.Query{Table: "a_table", From: start, To: start.Add(40 * 97 * time.Minute)})
		require.NoError(t, err)
		require.Empty(t, p.Gaps)
		var got []string
		for _, e := range p.Events {
			got = append(got, e.ID)
		}
		require.Equal(t, want[start], got)
		require.LessOrEqual(t, cached(), bound, "the cache within its bound")
	}
	for _, w := range append(weeks, weeks[0], weeks[2], weeks[1]) {
		read(w)
	}
	require.NoFileExists(t, former)

	// Queries at once keep what they read; the cache is back within
	// its bound by the next read.
	var g errgroup.Group
	for i := range 9 {
		g.Go(func() error {
			start := weeks[i%3]
			p, err := db.Query(ctx, "acme", engine.Query{Table: "a_table", From: start, To: start.Add(40 * 97 * time.Minute)})
			if err == nil && len(p.Events) != len(want[start]) {
				err = fmt.Errorf("week of %s: %d events, want %d", start, len(p.Events), len(want[start]))
			}
			return err
		})
	}
	require.NoError(t, g.Wait())
	read(weeks[1])
	require.Positive(t, cached())
}
