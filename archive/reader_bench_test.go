package archive_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
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
)

// BenchmarkReaderQuery queries one series for one hour of a week that was
// archived (in Parquet, to a folder) and deleted: 20 series, an event a
// minute each, 201,600 events. It reports the median and 99th percentile
// of the queries (docs/archive.md has the figures), for a family of the
// row layout and one of the chunk layout (chunks of an hour), whose
// archives hold the same Parquet. The first query of the archive opens
// its files; the others find them open.
func BenchmarkReaderQuery(b *testing.B) {
	for _, layout := range []family.Layout{family.LayoutRow, family.LayoutChunk} {
		b.Run(string(layout), func(b *testing.B) { benchmarkReaderQuery(b, layout) })
	}
}

func benchmarkReaderQuery(b *testing.B, layout family.Layout) {
	ctx := context.Background()
	s, cfg := backends.Pebble().Open(&testing.T{})
	b.Cleanup(func() { s.Close() })
	cfg.MetaTable = engine.DefaultMetaTable
	url := "file://" + b.TempDir()
	f := &cfg.Families[0]
	f.WriteTimeGrouping = false
	f.Retention = 7 * 24 * time.Hour
	f.Archive = url
	f.Layout = layout
	week := time.Date(2017, 4, 9, 0, 0, 0, 0, time.UTC)
	clk := clock.NewManual(week.Add(7 * 24 * time.Hour))
	archives := archive.NewReader(archive.ReaderOptions{})
	b.Cleanup(func() { archives.Close() })
	db, err := engine.Open(ctx, s, engine.Options{Schema: cfg, Clock: clk, Archives: archives})
	require.NoError(b, err)
	b.Cleanup(func() { db.Close() })
	const series = 20
	var batch []event.Event
	for m := range 7 * 24 * 60 {
		for i := range series {
			batch = append(batch, event.Event{Time: week.Add(time.Duration(m) * time.Minute), Series: fmt.Sprintf("car-%02d", i),
				Fields: map[string]any{"speed": json.Number(fmt.Sprintf("%d.%d", 60+m%40, i)), "gear": "D"}})
		}
		if len(batch) >= 10_000 {
			_, err := db.Write(ctx, "acme", "a_table", batch)
			require.NoError(b, err)
			batch = batch[:0]
		}
	}
	_, err = db.Write(ctx, "acme", "a_table", batch)
	require.NoError(b, err)

	clk.Set(week.Add(4 * 7 * 24 * time.Hour))
	r, err := lifecycle.New(lifecycle.Options{Store: s, Families: cfg.Families, Clock: clk, MetaTable: cfg.MetaTable,
		FenceSettle: -1, ClockSkew: -1, Logger: slog.New(slog.DiscardHandler),
		OpenArchiver: func(target string, format family.ArchiveFormat) (lifecycle.Archiver, error) {
			return archive.Open(ctx, target, s, archive.Options{Clock: clk, Format: format, Facts: registryFacts(s, cfg), Logger: slog.New(slog.DiscardHandler)})
		}})
	require.NoError(b, err)
	for range 3 {
		_, err := r.Reconcile(ctx, false)
		require.NoError(b, err)
	}
	tables, err := db.Tables(ctx)
	require.NoError(b, err)
	for _, t := range tables {
		if strings.Contains(t.Name, fmt.Sprint(week.UnixMilli())) {
			require.Equal(b, string(registry.Deleted), t.State, "the week is archived and deleted")
		}
	}

	rng := rand.New(rand.NewPCG(1, 2))
	var took []time.Duration
	var buf []byte
	for b.Loop() {
		from := week.Add(time.Duration(rng.IntN(7*24-1)) * time.Hour)
		q := engine.Query{Table: "a_table", Series: fmt.Sprintf("car-%02d", rng.IntN(series)), From: from, To: from.Add(time.Hour - time.Nanosecond)}
		start := time.Now()
		p, err := db.QueryJSON(ctx, "acme", q, buf[:0])
		took = append(took, time.Since(start))
		if err != nil || p.Count != 60 {
			b.Fatalf("query: %d events, %v", p.Count, err)
		}
		buf = p.Events
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
}
