package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

// Options size a benchmark run.
type Options struct {
	// Dir holds the stores; it is removed afterwards.
	Dir string
	// Runs is how many times each figure is measured; the median is kept.
	Runs int
	// Events is how many events each ingest run writes.
	Events int
	// Writers is how many goroutines write at once, for timetable and its
	// baseline alike.
	Writers int
	// Batch is the number of events per library write and per raw batch.
	Batch int
	// HTTPBatch is the number of events per HTTP request.
	HTTPBatch int
	// Series is the number of series of the many-series benchmark.
	Series int
	// Timetable is the timetable binary the peer comparison serves from.
	Timetable string
	// PeerProfile, when set, is a directory the peer comparison writes
	// CPU profiles of timetable's server over the ingest and
	// over each peer query into.
	PeerProfile string
	// PeerRuns is how many times PeerRuns runs the peer comparison; 0
	// is once.
	PeerRuns int
	// PeerSystems, when not empty, names the systems of the peer
	// comparison to run (peerSystems' names: timetable, timetable-packed, timetable-row,
	// InfluxDB, PostgreSQL, VictoriaMetrics, ClickHouse); all when empty.
	PeerSystems []string
	// MQTTMessages is how many messages each MQTT ingest run publishes.
	MQTTMessages int
	// Progress receives a line as each figure is measured.
	Progress func(string)
}

var start = time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)

// Embedded measures the embedded (Pebble) store.
func Embedded(ctx context.Context, o Options, r *Report) error {
	gen := newGenerator(start, time.Millisecond)
	batches := make([][]int, 0)
	for from := 0; from < o.Events; from += o.Batch {
		batches = append(batches, []int{from, min(o.Batch, o.Events-from)})
	}
	run := 0
	next := func(name string) string {
		run++
		return filepath.Join(o.Dir, fmt.Sprintf("%s-%d", name, run))
	}

	raw, err := median(o.Runs, func() (float64, error) { return rawPebbleIngest(next("raw"), gen, batches, o.Writers) })
	if err != nil {
		return err
	}
	o.Progress(fmt.Sprintf("raw pebble ingest: %.0f ev/s", raw))
	lib, err := median(o.Runs, func() (float64, error) { return libraryIngest(ctx, next("lib"), gen, batches, o.Writers) })
	if err != nil {
		return err
	}
	o.Progress(fmt.Sprintf("library ingest: %.0f ev/s", lib))
	r.Rows = append(r.Rows, Row{Figure: "ingest, library (Pebble)", Value: lib, Unit: "ev/s", Baseline: "raw Pebble batches", Base: raw, Aim: ">= 0.40 of raw"})

	web, err := median(o.Runs, func() (float64, error) { return httpIngest(ctx, next("http"), gen, o, ndjsonWire) })
	if err != nil {
		return err
	}
	o.Progress(fmt.Sprintf("HTTP ingest: %.0f ev/s", web))
	r.Rows = append(r.Rows, Row{Figure: "ingest, HTTP NDJSON (Pebble)", Value: web, Unit: "ev/s", Baseline: "raw Pebble batches", Base: raw, Aim: ">= 200000 ev/s"})
	// The same events as line protocol, their series as a tag.
	lines, err := median(o.Runs, func() (float64, error) { return httpIngest(ctx, next("line"), gen, o, lineWire) })
	if err != nil {
		return err
	}
	o.Progress(fmt.Sprintf("HTTP line protocol ingest: %.0f ev/s", lines))
	r.Rows = append(r.Rows, Row{Figure: "ingest, HTTP line protocol (Pebble)", Value: lines, Unit: "ev/s", Baseline: "the same events as NDJSON", Base: web})

	// Reads: one store holding the events, read back through the engine
	// and, for the baseline, the same number of same-size entries through
	// a raw Pebble iterator.
	db, store, clk, err := openEngine(ctx, next("read"))
	if err != nil {
		return err
	}
	defer store.Close()
	defer db.Close()
	if err := load(ctx, db, clk, gen, batches); err != nil {
		return err
	}
	rawDir := next("rawread")
	if _, err := rawPebbleIngest(rawDir, gen, batches, o.Writers); err != nil {
		return err
	}
	end := start.Add(time.Duration(o.Events) * time.Millisecond)
	read, err := median(o.Runs, func() (float64, error) { return rangeRead(ctx, db, start, end) })
	if err != nil {
		return err
	}
	iter, err := median(o.Runs, func() (float64, error) { return rawIterate(rawDir) })
	if err != nil {
		return err
	}
	o.Progress(fmt.Sprintf("range read: %.0f ev/s, raw iterator %.0f ev/s", read, iter))
	r.Rows = append(r.Rows, Row{Figure: "range read, all series, as JSON (Pebble)", Value: read, Unit: "ev/s", Baseline: "raw Pebble iterator", Base: iter, Aim: ">= 0.50 of raw"})

	p50, p99, err := latest10(ctx, db, end, 3000)
	if err != nil {
		return err
	}
	r.Rows = append(r.Rows,
		Row{Figure: "latest-10 query p50 (Pebble)", Value: p50, Unit: "ms", Aim: "-"},
		Row{Figure: "latest-10 query p99 (Pebble)", Value: p99, Unit: "ms", Aim: "< 1 ms"})
	return nil
}

func openEngine(ctx context.Context, dir string) (*engine.DB, *pebblestore.Store, *clock.Manual, error) {
	store, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		return nil, nil, nil, err
	}
	clk := clock.NewManual(start)
	db, err := engine.Open(ctx, store, engine.Options{Clock: clk})
	if err != nil {
		store.Close()
		return nil, nil, nil, err
	}
	return db, store, clk, nil
}

// load writes every batch, one writer; not timed.
func load(ctx context.Context, db *engine.DB, clk *clock.Manual, gen *generator, batches [][]int) error {
	clk.Set(start.Add(time.Duration(batches[len(batches)-1][0]+batches[len(batches)-1][1]) * time.Millisecond))
	for _, b := range batches {
		if _, err := db.Write(ctx, benchTenant, benchTable, gen.batch(b[0], b[1])); err != nil {
			return err
		}
	}
	return nil
}

// parallel runs work on every batch with n goroutines and returns the
// time it took.
func parallel(n int, batches [][]int, work func(b []int) error) (time.Duration, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, n)
	begin := time.Now()
	for w := range n {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(batches) {
					return
				}
				if err := work(batches[i]); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(begin)
	for _, err := range errs {
		if err != nil {
			return 0, err
		}
	}
	return took, nil
}

func count(batches [][]int) int {
	n := 0
	for _, b := range batches {
		n += b[1]
	}
	return n
}

func libraryIngest(ctx context.Context, dir string, gen *generator, batches [][]int, writers int) (float64, error) {
	db, store, clk, err := openEngine(ctx, dir)
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	defer store.Close()
	defer db.Close()
	clk.Set(start.Add(time.Duration(count(batches)) * time.Millisecond))
	// Events are made before the clock starts: the figure is the engine's.
	pre := make([][]event.Event, len(batches))
	idx := make([][]int, len(batches))
	for i, b := range batches {
		pre[i] = gen.batch(b[0], b[1])
		idx[i] = []int{i}
	}
	took, err := parallel(writers, idx, func(b []int) error {
		_, err := db.Write(ctx, benchTenant, benchTable, pre[b[0]])
		return err
	})
	if err != nil {
		return 0, err
	}
	return rate(count(batches), took), nil
}

// rawPebbleIngest writes entries of the same size as timetable's items
// (key as long as its table prefix, partition and sort keys; the rest as
// value) straight to Pebble, in synced batches of the same size.
func rawPebbleIngest(dir string, gen *generator, batches [][]int, writers int) (float64, error) {
	db, err := pebble.Open(dir, &pebble.Options{Logger: quiet{}})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	type kv struct{ k, v []byte }
	pre := make([][]kv, len(batches))
	idx := make([][]int, len(batches))
	for i, b := range batches {
		for _, e := range gen.batch(b[0], b[1]) {
			e.AssignID(benchTenant, benchTable, event.LatestIDScheme)
			key := fmt.Sprintf("d%08d%s#%s#%s#0%s#%s", 1, benchTenant, benchTable, e.Series, e.Time.Format("2006-01-02T15:04:05.000000000Z"), e.ID)
			val := bytes.Repeat([]byte("v"), EventBytes-len(key))
			pre[i] = append(pre[i], kv{[]byte(key), val})
		}
		idx[i] = []int{i}
	}
	took, err := parallel(writers, idx, func(b []int) error {
		batch := db.NewBatch()
		for _, e := range pre[b[0]] {
			if err := batch.Set(e.k, e.v, nil); err != nil {
				return err
			}
		}
		return batch.Commit(pebble.Sync)
	})
	if err != nil {
		return 0, err
	}
	return rate(count(batches), took), nil
}

// rawIterate reads every entry of a raw Pebble store.
func rawIterate(dir string) (float64, error) {
	db, err := pebble.Open(dir, &pebble.Options{Logger: quiet{}})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	begin := time.Now()
	it, err := db.NewIter(nil)
	if err != nil {
		return 0, err
	}
	n, sum := 0, 0
	for it.First(); it.Valid(); it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return 0, err
		}
		sum += len(it.Key()) + len(v)
		n++
	}
	if err := it.Close(); err != nil {
		return 0, err
	}
	return rate(n, time.Since(begin)), nil
}

// rangeRead reads every event in [from, to] through the engine, page by
// page, as the server answers a query: each page's events written as
// JSON (engine.DB.QueryJSON) into a buffer, which it drops.
func rangeRead(ctx context.Context, db *engine.DB, from, to time.Time) (float64, error) {
	begin := time.Now()
	q := engine.Query{Table: benchTable, From: from, To: to, Limit: 10000}
	n := 0
	var buf []byte
	for {
		p, err := db.QueryJSON(ctx, benchTenant, q, buf[:0])
		if err != nil {
			return 0, err
		}
		buf = p.Events
		n += p.Count
		if p.NextCursor == "" {
			break
		}
		q.Cursor = p.NextCursor
	}
	return rate(n, time.Since(begin)), nil
}

// latest10 asks for the newest ten events of one series, again and again,
// and returns the p50 and p99 latencies in milliseconds.
func latest10(ctx context.Context, db *engine.DB, now time.Time, n int) (float64, float64, error) {
	var ds []time.Duration
	for i := range n {
		q := engine.Query{Table: benchTable, Series: fmt.Sprintf("dev-%04d", i%seriesCount), From: now.Add(-time.Hour), To: now, Desc: true, Limit: 10}
		begin := time.Now()
		p, err := db.Query(ctx, benchTenant, q)
		if err != nil {
			return 0, 0, err
		}
		ds = append(ds, time.Since(begin))
		if len(p.Events) != 10 {
			return 0, 0, fmt.Errorf("latest 10: got %d events", len(p.Events))
		}
	}
	slices.Sort(ds)
	return percentile(ds, 50), percentile(ds, 99), nil
}

// quiet drops Pebble's informational messages in the raw baselines.
type quiet struct{}

func (quiet) Infof(string, ...any) {}
func (quiet) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
}
func (quiet) Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
	os.Exit(1)
}

// aggregateSeries is the number of series of the aggregate benchmark.
const aggregateSeries = 4

// Aggregate measures a 30-day aggregate at one-hour buckets, computed
// from raw events and from the engine's materialized rollups: events/s
// summarised and the latency of the whole query, side by side.
func Aggregate(ctx context.Context, o Options, r *Report) error {
	const days = 30
	step := time.Duration(days) * 24 * time.Hour / time.Duration(o.Events)
	gen := newGenerator(start, step)
	// A few devices reporting often: rollups pay off when an hour of a
	// series holds many events.
	gen.series = aggregateSeries
	end := start.Add(time.Duration(days) * 24 * time.Hour)
	var batches [][]int
	for from := 0; from < o.Events; from += o.Batch {
		batches = append(batches, []int{from, min(o.Batch, o.Events-from)})
	}
	measure := func(rollups bool) (rate float64, took time.Duration, err error) {
		dir := filepath.Join(o.Dir, fmt.Sprintf("aggregate-%v", rollups))
		store, err := pebblestore.Open(dir, pebblestore.Options{})
		if err != nil {
			return 0, 0, err
		}
		defer store.Close()
		clk := clock.NewManual(end)
		db, err := engine.Open(ctx, store, engine.Options{Clock: clk, Rollups: rollups})
		if err != nil {
			return 0, 0, err
		}
		defer db.Close()
		for _, b := range batches {
			if _, err := db.Write(ctx, benchTenant, benchTable, gen.batch(b[0], b[1])); err != nil {
				return 0, 0, err
			}
		}
		// Past the settle window, so that rollups may be stored and used.
		clk.Advance(time.Hour)
		q := engine.AggregateQuery{
			Table: benchTable, From: start, To: end.Add(-time.Nanosecond), Bucket: time.Hour,
			Fields: []string{"temp", "hum"}, Funcs: []string{"count", "avg", "max"},
		}
		if rollups {
			// The first query computes and stores the rollups; the
			// figure is of the queries that use them.
			if _, err := db.Aggregate(ctx, benchTenant, q); err != nil {
				return 0, 0, err
			}
		}
		rate, err = median(o.Runs, func() (float64, error) {
			begin := time.Now()
			buckets, err := db.Aggregate(ctx, benchTenant, q)
			if err != nil {
				return 0, err
			}
			took = time.Since(begin)
			if len(buckets) != days*24 {
				return 0, fmt.Errorf("aggregate: %d buckets, want %d", len(buckets), days*24)
			}
			return float64(o.Events) / took.Seconds(), nil
		})
		return rate, took, err
	}
	raw, rawTook, err := measure(false)
	if err != nil {
		return err
	}
	rolled, rolledTook, err := measure(true)
	if err != nil {
		return err
	}
	o.Progress(fmt.Sprintf("aggregate 30 days at 1h: raw %.0f ev/s, rollups %.0f ev/s", raw, rolled))
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	r.Rows = append(r.Rows,
		Row{Figure: "aggregate 30 d at 1h, events summarised/s", Value: rolled, Unit: "ev/s", Baseline: "same from raw events", Base: raw, Aim: "-"},
		Row{Figure: "aggregate 30 d at 1h, latency", Value: ms(rolledTook), Unit: "ms", Baseline: "same from raw events", Base: ms(rawTook), Aim: "-"})
	return nil
}
