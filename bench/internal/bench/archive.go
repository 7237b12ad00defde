package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/memtest"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage/pebblestore"
	"github.com/timetabledb/timetable/storage/storagetest"
)

// Sizes of the archive part.
var (
	// archiveSizes are the tables whose archive's peak heap is measured:
	// 4× apart, for the aim that it does not grow with the table.
	archiveSizes = []int{250_000, 1_000_000}
	// archivedSeries series of an event a minute make the archived week.
	archivedSeries = 20
	// archivedQueries is how many queries of the archived week are timed.
	archivedQueries = 300
)

// Archive measures package archive: the peak heap of an archive of a
// Pebble table to a folder at two sizes 4× apart, and a one-series,
// one-hour query of a week that was archived (Parquet) and deleted, read
// by the archive reader from a file:// target and from an s3:// one (an
// in-process S3 test server, gofakes3).
func Archive(ctx context.Context, o Options, r *Report) error {
	var peaks []float64
	for _, n := range archiveSizes {
		p, err := archivePeak(ctx, filepath.Join(o.Dir, fmt.Sprintf("archive-%d", n)), n)
		if err != nil {
			return err
		}
		o.Progress(fmt.Sprintf("archive of %d events: peak live heap %.1f MiB", n, p))
		peaks = append(peaks, p)
	}
	r.Rows = append(r.Rows,
		Row{Figure: fmt.Sprintf("archive peak heap, %d events (Pebble to file://)", archiveSizes[0]), Value: peaks[0], Unit: "MiB", Aim: "<= 64 MiB"},
		Row{Figure: fmt.Sprintf("archive peak heap, %d events", archiveSizes[1]), Value: peaks[1], Unit: "MiB",
			Baseline: fmt.Sprintf("%d events", archiveSizes[0]), Base: peaks[0], Aim: "<= 64 MiB, within 16 MiB of the baseline"})

	file, err := archivedQuery(ctx, filepath.Join(o.Dir, "archived-file"), "file://"+filepath.ToSlash(filepath.Join(o.Dir, "archived-file-archive")), archive.S3Options{})
	if err != nil {
		return err
	}
	o.Progress(fmt.Sprintf("archived week, one series one hour, file://: p50 %.3f ms", file))
	stopS3, err := startS3()
	if err != nil {
		return err
	}
	defer stopS3()
	s3, err := archivedQuery(ctx, filepath.Join(o.Dir, "archived-s3"), "s3://archives/timetable", archive.S3Options{UsePathStyle: true})
	if err != nil {
		return err
	}
	o.Progress(fmt.Sprintf("archived week, one series one hour, s3://: p50 %.3f ms", s3))
	r.Rows = append(r.Rows,
		Row{Figure: "query of an archived week, one series one hour, file:// (p50)", Value: file, Unit: "ms", Aim: "<= 50 ms"},
		Row{Figure: "the same, s3:// (in-process S3 test server, p50)", Value: s3, Unit: "ms", Baseline: "file://", Base: file})
	return nil
}

// archivePeak writes a table of n events (items of about 180 bytes) to
// a Pebble store in dir, opens the store again, archives the table to a
// folder in the default format (NDJSON and Parquet), and returns the
// archive's peak live heap above what was live before it, in MiB.
func archivePeak(ctx context.Context, dir string, n int) (float64, error) {
	s, err := pebblestore.Open(filepath.Join(dir, "store"), pebblestore.Options{})
	if err != nil {
		return 0, err
	}
	const table = "tt_events_1491696000000_1492300799000_4_2017"
	if err := storagetest.FillEvents(ctx, s, table, n); err != nil {
		s.Close()
		return 0, err
	}
	// Open the store again, so that what the writes left in memory is
	// not counted.
	if err := s.Close(); err != nil {
		return 0, err
	}
	if s, err = pebblestore.Open(filepath.Join(dir, "store"), pebblestore.Options{}); err != nil {
		return 0, err
	}
	defer s.Close()
	a, err := archive.Open(ctx, "file://"+filepath.ToSlash(filepath.Join(dir, "archive")), s,
		archive.Options{TempDir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return 0, err
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	stop := livePeak()
	err = a.Archive(ctx, table)
	live := stop()
	if err != nil {
		return 0, err
	}
	m, err := a.Manifest(ctx, table)
	if err != nil {
		return 0, err
	}
	if m.ItemCount != int64(n) || len(m.Parquet) == 0 {
		return 0, fmt.Errorf("archive of %d events: %d items, %d Parquet files", n, m.ItemCount, len(m.Parquet))
	}
	return float64(live-min(live, before.HeapAlloc)) / (1 << 20), nil
}

// livePeak samples the live heap (what the last garbage collection found
// reachable) every millisecond until stop is called, which returns its
// highest sample.
func livePeak() (stop func() uint64) {
	sample := memtest.SampleHeap(time.Millisecond, memtest.HeapLive)
	return func() uint64 { return sample()[0] }
}

// archivedQuery writes a week of archivedSeries series, an event a minute each,
// to a family of the default schema (family.DefaultSchema), so of the
// default layout (family.Default's Layout, whichever it is),
// lets the lifecycle archive the week to target and delete its table,
// and times archivedQueries queries of one series for one hour of it,
// returning their median in milliseconds. The first query opens the
// archive's files; the others find them open.
func archivedQuery(ctx context.Context, dir, target string, s3 archive.S3Options) (float64, error) {
	s, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		return 0, err
	}
	defer s.Close()
	cfg := family.DefaultSchema()
	cfg.MetaTable = engine.DefaultMetaTable
	f := &cfg.Families[0]
	f.WriteTimeGrouping = false
	f.Retention = 7 * 24 * time.Hour
	f.Archive = target
	week := time.Date(2017, 4, 9, 0, 0, 0, 0, time.UTC)
	clk := clock.NewManual(week.Add(7 * 24 * time.Hour))
	archives := archive.NewReader(archive.ReaderOptions{S3: s3, CacheDir: filepath.Join(dir, "cache")})
	defer archives.Close()
	db, err := engine.Open(ctx, s, engine.Options{Schema: cfg, Clock: clk, Archives: archives, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var batch []event.Event
	for m := range 7 * 24 * 60 {
		for i := range archivedSeries {
			batch = append(batch, event.Event{Time: week.Add(time.Duration(m) * time.Minute), Series: fmt.Sprintf("car-%02d", i),
				Fields: map[string]any{"speed": json.Number(fmt.Sprintf("%d.%d", 60+m%40, i)), "gear": "D"}})
		}
		if len(batch) >= 10_000 || m == 7*24*60-1 {
			if _, err := db.Write(ctx, "acme", "a_table", batch); err != nil {
				return 0, err
			}
			batch = batch[:0]
		}
	}
	clk.Set(week.Add(4 * 7 * 24 * time.Hour))
	var families []string
	for _, f := range cfg.Families {
		families = append(families, f.Name)
	}
	facts := registry.New(s, cfg.MetaTable).Finder(families)
	rec, err := lifecycle.New(lifecycle.Options{Store: s, Families: cfg.Families, Clock: clk, MetaTable: cfg.MetaTable,
		FenceSettle: -1, ClockSkew: -1, Logger: slog.New(slog.DiscardHandler),
		OpenArchiver: func(target string, format family.ArchiveFormat) (lifecycle.Archiver, error) {
			return archive.Open(ctx, target, s, archive.Options{Clock: clk, Format: format, Facts: facts, S3: s3, TempDir: dir,
				Logger: slog.New(slog.DiscardHandler)})
		}})
	if err != nil {
		return 0, err
	}
	for range 3 {
		if _, err := rec.Reconcile(ctx, false); err != nil {
			return 0, err
		}
	}
	tables, err := db.Tables(ctx)
	if err != nil {
		return 0, err
	}
	for _, t := range tables {
		// Tables lists an archived and deleted table too, as deleted.
		if strings.Contains(t.Name, fmt.Sprint(week.UnixMilli())) && t.State != string(registry.Deleted) {
			return 0, fmt.Errorf("the week's table %s was not archived and deleted", t.Name)
		}
	}

	rng := rand.New(rand.NewPCG(1, 2))
	took := make([]float64, 0, archivedQueries)
	var buf []byte
	for range archivedQueries {
		from := week.Add(time.Duration(rng.IntN(7*24-1)) * time.Hour)
		q := engine.Query{Table: "a_table", Series: fmt.Sprintf("car-%02d", rng.IntN(archivedSeries)), From: from, To: from.Add(time.Hour - time.Nanosecond)}
		start := time.Now()
		p, err := db.QueryJSON(ctx, "acme", q, buf[:0])
		took = append(took, float64(time.Since(start).Microseconds())/1000)
		if err != nil {
			return 0, err
		}
		if p.Count != 60 || len(p.Gaps) > 0 {
			return 0, fmt.Errorf("query of the archived week: %d events, %d gaps, want 60 and none", p.Count, len(p.Gaps))
		}
		buf = p.Events
	}
	slices.Sort(took)
	return took[len(took)/2], nil
}

// startS3 starts an S3 test server (gofakes3 on its memory backend) in
// the process, with the bucket "archives", and points the standard AWS
// configuration chain at it until stop.
func startS3() (stop func(), err error) {
	mem := s3mem.New()
	if err := mem.CreateBucket("archives"); err != nil {
		return nil, err
	}
	srv := httptest.NewServer(gofakes3.New(mem, gofakes3.WithLogger(gofakes3.DiscardLog())).Server())
	env := map[string]string{
		"AWS_ENDPOINT_URL_S3": srv.URL, "AWS_REGION": "us-east-1",
		"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
		"AWS_CONFIG_FILE": os.DevNull, "AWS_PROFILE": "", "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
	}
	old := map[string]*string{}
	for k, v := range env {
		if o, ok := os.LookupEnv(k); ok {
			old[k] = &o
		} else {
			old[k] = nil
		}
		os.Setenv(k, v)
	}
	return func() {
		srv.Close()
		for k, v := range old {
			if v == nil {
				os.Unsetenv(k)
			} else {
				os.Setenv(k, *v)
			}
		}
	}, nil
}
