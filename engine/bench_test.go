package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/compact"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

func benchEvents(n, series int, from time.Time) []event.Event {
	evs := make([]event.Event, n)
	for i := range evs {
		evs[i] = event.Event{
			Time:   from.Add(time.Duration(i) * time.Millisecond),
			Series: fmt.Sprintf("dev-%04d", i%series),
			Fields: map[string]any{"temp": json.Number("21.5"), "hum": json.Number("40"), "pres": json.Number("1013.25"), "status": "ok", "note": strings.Repeat("x", 60)},
		}
	}
	return evs
}

func benchDB(b *testing.B, now time.Time) (*engine.DB, *pebblestore.Store) {
	return benchLayoutDB(b, now, family.LayoutRow)
}

// benchLayoutDB opens a DB on Pebble whose default family has the
// layout, chunks of 6 hours for the chunk layout.
func benchLayoutDB(b *testing.B, now time.Time, layout family.Layout) (*engine.DB, *pebblestore.Store) {
	return benchWindowDB(b, now, layout, 6*time.Hour)
}

// benchWindowDB is benchLayoutDB with chunks of window.
func benchWindowDB(b *testing.B, now time.Time, layout family.Layout, window time.Duration) (*engine.DB, *pebblestore.Store) {
	store, err := pebblestore.Open(b.TempDir(), pebblestore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	schema := family.DefaultSchema()
	schema.Families[0].Layout, schema.Families[0].ChunkWindow = layout, window
	db, err := engine.Open(context.Background(), store, engine.Options{Schema: schema, Clock: clock.NewManual(now)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db, store
}

// BenchmarkWrite writes batches of 1000 events of about 180 bytes.
func BenchmarkWrite(b *testing.B) {
	from := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	db, _ := benchDB(b, from.Add(24*time.Hour))
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		evs := benchEvents(1000, 100, from.Add(time.Duration(i)*time.Second))
		b.StartTimer()
		if _, err := db.Write(ctx, "bench", "t", evs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "events/s")
}

func benchQuery(b *testing.B, series string, nSeries int, read int) {
	from := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	const n = 50000
	db, _ := benchDB(b, from.Add(24*time.Hour))
	ctx := context.Background()
	for i := 0; i < n; i += 5000 {
		if _, err := db.Write(ctx, "bench", "t", benchEvents(5000, nSeries, from.Add(time.Duration(i)*time.Millisecond))); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	events := 0
	var buf []byte
	for b.Loop() {
		q := engine.Query{Table: "t", Series: series, From: from, To: from.Add(time.Hour), Limit: 10000}
		for {
			var p engine.Page
			var err error
			switch read {
			case readJSON:
				var jp engine.JSONPage
				jp, err = db.QueryJSON(ctx, "bench", q, buf[:0])
				buf, p.NextCursor = jp.Events, jp.NextCursor
				events += jp.Count
			default:
				p, err = db.Query(ctx, "bench", q)
				events += len(p.Events)
				if read == readEventsJSON {
					buf = buf[:0]
					for _, e := range p.Events {
						if buf, err = e.AppendJSON(buf); err != nil {
							break
						}
					}
				}
			}
			if err != nil {
				b.Fatal(err)
			}
			if p.NextCursor == "" {
				break
			}
			q.Cursor = p.NextCursor
		}
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkQueryRangeAllSeries reads 50,000 events of 100 series.
func BenchmarkQueryRangeAllSeries(b *testing.B) { benchQuery(b, "", 100, readEvents) }

// BenchmarkQueryRangeOneSeries reads 50,000 events of one series.
func BenchmarkQueryRangeOneSeries(b *testing.B) { benchQuery(b, "dev-0000", 1, readEvents) }

// BenchmarkQueryRangeAllSeriesJSON reads 50,000 events of 100 series as
// JSON, as the server does (DB.QueryJSON).
func BenchmarkQueryRangeAllSeriesJSON(b *testing.B) { benchQuery(b, "", 100, readJSON) }

// BenchmarkQueryRangeOneSeriesJSON reads 50,000 events of one series as
// JSON.
func BenchmarkQueryRangeOneSeriesJSON(b *testing.B) { benchQuery(b, "dev-0000", 1, readJSON) }

// BenchmarkQueryRangeAllSeriesEventsJSON reads 50,000 events of 100
// series and writes each one's JSON: what the server did before
// DB.QueryJSON, its baseline.
func BenchmarkQueryRangeAllSeriesEventsJSON(b *testing.B) { benchQuery(b, "", 100, readEventsJSON) }

// BenchmarkQueryRangeOneSeriesEventsJSON reads 50,000 events of one
// series and writes each one's JSON.
func BenchmarkQueryRangeOneSeriesEventsJSON(b *testing.B) {
	benchQuery(b, "dev-0000", 1, readEventsJSON)
}

// How benchQuery reads.
const (
	readEvents     = iota // DB.Query
	readEventsJSON        // DB.Query, then each event's AppendJSON
	readJSON              // DB.QueryJSON
)

// BenchmarkAggregateAllSeries summarises 100,000 events of 500 series in
// hourly buckets: the all-series aggregate of the peer comparison.
func BenchmarkAggregateAllSeries(b *testing.B) {
	benchAggregate(b, family.LayoutRow, 500, 700*time.Millisecond, "", 24*time.Hour, 20) // about 19 hours of events
}

// BenchmarkAggregateAllSeriesChunks is BenchmarkAggregateAllSeries on
// the chunk layout, 6-hour windows: the chunks' columns folded.
func BenchmarkAggregateAllSeriesChunks(b *testing.B) {
	benchAggregate(b, family.LayoutChunk, 500, 700*time.Millisecond, "", 24*time.Hour, 20)
}

// BenchmarkAggregateOneSeriesChunks is BenchmarkAggregateOneSeries on
// the chunk layout.
func BenchmarkAggregateOneSeriesChunks(b *testing.B) {
	benchAggregate(b, family.LayoutChunk, 1, 6*time.Second, "dev-0000", 7*24*time.Hour, 167)
}

// BenchmarkAggregateOneSeries summarises 100,000 events of one series
// over 7 days in hourly buckets: the one-series aggregate of the peer
// comparison.
func BenchmarkAggregateOneSeries(b *testing.B) {
	benchAggregate(b, family.LayoutRow, 1, 6*time.Second, "dev-0000", 7*24*time.Hour, 167) // about 7 days of events
}

// benchAggregate writes 100,000 events of series series, every apart,
// and summarises those of series (every series when empty) in a span
// in hourly buckets, of which it expects buckets.
func benchAggregate(b *testing.B, layout family.Layout, series int, every time.Duration, name string, span time.Duration, buckets int) {
	from := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	const n = 100000
	db, store := benchLayoutDB(b, from.Add(span), layout)
	ctx := context.Background()
	for i := 0; i < n; i += 5000 {
		evs := benchEvents(5000, series, from)
		for k := range evs {
			evs[k].Time = from.Add(time.Duration(i+k) * every)
		}
		if _, err := db.Write(ctx, "bench", "t", evs); err != nil {
			b.Fatal(err)
		}
	}
	// On disk, compressed, as a server's data mostly are.
	if err := store.Compact(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		bs, err := db.Aggregate(ctx, "bench", engine.AggregateQuery{Table: "t", Series: name, From: from, To: from.Add(span - 1), Bucket: time.Hour,
			Fields: []string{"temp"}, Funcs: []string{"count", "avg", "max"}})
		if err != nil || len(bs) != buckets {
			b.Fatal(err, len(bs))
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkIngestNDJSON is the server's work for one request of the peer
// comparison's ingest, without HTTP: an NDJSON body of 5,000 events of
// four numbers over 1,000 series at millisecond times decoded
// (event.DecodeNDJSON) and written (WriteBatch) to Pebble, synced; in
// the row layout and in the chunk layout of the default window (an
// hour: two or three chunks of a series a request), as the peer
// comparison's timetable-row and timetable run. cpu-ns/event is the
// process's CPU time (user and system, Pebble's goroutines included) per
// event, what the comparison's CPU aim counts.
func BenchmarkIngestNDJSON(b *testing.B) {
	for _, layout := range []family.Layout{family.LayoutRow, family.LayoutChunk} {
		b.Run(string(layout), func(b *testing.B) { benchIngestNDJSON(b, layout) })
	}
}

func benchIngestNDJSON(b *testing.B, layout family.Layout) {
	const batch, series = 5000, 1000
	from := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	now := from.Add(7 * 24 * time.Hour)
	db, _ := benchWindowDB(b, now, layout, time.Hour)
	ctx := context.Background()
	// Distinct bodies, so that every request writes new events.
	bodies := make([][]byte, 16)
	for k := range bodies {
		var body strings.Builder
		for j := range batch {
			i := k*batch + j
			t := from.Add(time.Millisecond + time.Duration(i)*2016*time.Millisecond)
			fmt.Fprintf(&body, `{"fields":{"humidity":%d,"pressure":%g,"temperature":%g,"voltage":%g},"series":"sensor-%04d","time":%q}`+"\n",
				30+i%60, 1000+float64(i%3000)/100, 15+float64(i%2000)/100, 3+float64(i%1000)/1000, i%series, t.Format(time.RFC3339Nano))
		}
		bodies[k] = []byte(body.String())
	}
	lim := db.Options().Limits
	b.ReportAllocs()
	cpu := processCPU()
	for i := 0; b.Loop(); i++ {
		evs, err := event.DecodeNDJSON(bodies[i%len(bodies)], lim, now)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := db.WriteBatch(ctx, "bench", "sensors", evs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/event")
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N*batch), "cpu-ns/event")
}

// processCPU returns the CPU time the process has used, user and
// system, in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// The peer comparison's workload (bench/internal/bench, peerworkload.go):
// 300,000 events of four decimal readings over 1,000 series and 7 days,
// a series' reading every 33.6 minutes, written in requests of 5,000, to
// a chunk-layout family of the default chunk window (an hour).
const (
	peerEvents = 300000
	peerSeries = 1000
	peerDays   = 7
)

// peerDB writes the peer workload from start to a chunk-layout DB on
// Pebble, compacted on disk, and packs its tables (package compact)
// when packed: the state of the peer comparison's timetable and
// timetable-packed columns.
func peerDB(b *testing.B, start time.Time, packed bool) *engine.DB {
	store, err := pebblestore.Open(b.TempDir(), pebblestore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	schema := family.DefaultSchema()
	schema.Families[0].Layout, schema.Families[0].ChunkWindow = family.LayoutChunk, family.DefaultChunkWindow
	db, err := engine.Open(context.Background(), store, engine.Options{Schema: schema, Clock: clock.NewManual(start.Add((peerDays + 1) * 24 * time.Hour))})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	ctx := context.Background()
	step := peerDays * 24 * time.Hour / peerEvents
	for from := 0; from < peerEvents; from += 5000 {
		evs := make([]event.Event, 5000)
		for j := range evs {
			i := from + j
			evs[j] = event.Event{Time: start.Add(time.Millisecond + time.Duration(i)*step), Series: fmt.Sprintf("sensor-%04d", i%peerSeries),
				Fields: map[string]any{
					"temperature": json.Number(strconv.FormatFloat(15+float64(i%2000)/100, 'f', -1, 64)),
					"humidity":    json.Number(strconv.Itoa(30 + i%60)),
					"pressure":    json.Number(strconv.FormatFloat(1000+float64(i%3000)/100, 'f', -1, 64)),
					"voltage":     json.Number(strconv.FormatFloat(3+float64(i%1000)/1000, 'f', -1, 64)),
				}}
		}
		if _, err := db.Write(ctx, "bench", "sensors", evs); err != nil {
			b.Fatal(err)
		}
	}
	if packed {
		tables, err := db.Tables(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range tables {
			if _, err := compact.Table(ctx, store, t.Name, compact.Options{Window: family.DefaultChunkWindow, Scheme: event.IDScheme(t.IDScheme), Shards: t.Shards}); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := store.Compact(ctx); err != nil {
		b.Fatal(err)
	}
	return db
}

// benchPeerAggregate asks the peer comparison's hourly count and sum of
// temperature, of series (every series when "") over [from, to), and
// expects buckets.
func benchPeerAggregate(b *testing.B, packed bool, series string, day time.Duration, span time.Duration, buckets int) {
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	db := peerDB(b, start, packed)
	// On Pebble the server's requests carry its CPU pool.
	ctx := engine.WithCPU(context.Background(), admission.NewCPU(0))
	b.ReportAllocs()
	began := processCPU()
	for b.Loop() {
		bs, err := db.Aggregate(ctx, "bench", engine.AggregateQuery{Table: "sensors", Series: series, From: start.Add(day), To: start.Add(day + span - 1), Bucket: time.Hour,
			Fields: []string{"temperature"}, Funcs: []string{"count", "sum"}})
		if err != nil || len(bs) != buckets {
			b.Fatal(err, len(bs))
		}
	}
	b.ReportMetric(float64(processCPU()-began)/float64(b.N), "cpu-ns/op")
}

// BenchmarkAggregatePeerAllSeries is the peer comparison's hourly
// aggregate of every series over one day, on the chunk layout as written.
func BenchmarkAggregatePeerAllSeries(b *testing.B) {
	benchPeerAggregate(b, false, "", 3*24*time.Hour, 24*time.Hour, 24)
}

// BenchmarkAggregatePeerAllSeriesPacked is it after compaction packed
// each window's chunks into one.
func BenchmarkAggregatePeerAllSeriesPacked(b *testing.B) {
	benchPeerAggregate(b, true, "", 3*24*time.Hour, 24*time.Hour, 24)
}

// BenchmarkAggregatePeerOneSeries is the peer comparison's hourly
// aggregate of one series over 7 days, on the chunk layout as written.
func BenchmarkAggregatePeerOneSeries(b *testing.B) {
	benchPeerAggregate(b, false, "sensor-0007", 0, peerDays*24*time.Hour, 168)
}

// BenchmarkAggregatePeerOneSeriesPacked is it after compaction packed
// each window's chunks into one.
func BenchmarkAggregatePeerOneSeriesPacked(b *testing.B) {
	benchPeerAggregate(b, true, "sensor-0007", 0, peerDays*24*time.Hour, 168)
}

// embeddedDB writes the shape of make bench's embedded part to a DB of
// the layout (chunks of an hour): 200,000 events 1 ms apart over 100
// series, in writes of 1,000, so each series has some 200 chunks of ten
// events in one window.
func embeddedDB(b *testing.B, layout family.Layout) (*engine.DB, time.Time, time.Time) {
	from := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	const n = 200000
	db, _ := benchWindowDB(b, from.Add(n*time.Millisecond), layout, time.Hour)
	ctx := context.Background()
	for i := 0; i < n; i += 1000 {
		if _, err := db.Write(ctx, "bench", "t", benchEvents(1000, 100, from.Add(time.Duration(i)*time.Millisecond))); err != nil {
			b.Fatal(err)
		}
	}
	return db, from, from.Add(n * time.Millisecond)
}

// benchLatest10 asks for the newest ten events of one series at a time,
// as make bench's latest-10 figure does.
func benchLatest10(b *testing.B, layout family.Layout) {
	db, _, end := embeddedDB(b, layout)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		q := engine.Query{Table: "t", Series: fmt.Sprintf("dev-%04d", i%100), From: end.Add(-time.Hour), To: end, Desc: true, Limit: 10}
		p, err := db.Query(ctx, "bench", q)
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Events) != 10 {
			b.Fatalf("got %d events", len(p.Events))
		}
	}
}

// BenchmarkLatest10Chunks is the latest ten events of a series of 200
// chunks in one window.
func BenchmarkLatest10Chunks(b *testing.B) { benchLatest10(b, family.LayoutChunk) }

// BenchmarkLatest10Rows is BenchmarkLatest10Chunks on the row layout.
func BenchmarkLatest10Rows(b *testing.B) { benchLatest10(b, family.LayoutRow) }

// benchRangePaged reads every event of every series as JSON, in pages of
// 10,000, as make bench's range read does.
func benchRangePaged(b *testing.B, layout family.Layout) {
	db, from, end := embeddedDB(b, layout)
	ctx := context.Background()
	b.ReportAllocs()
	events := 0
	var buf []byte
	for b.Loop() {
		q := engine.Query{Table: "t", From: from, To: end, Limit: 10000}
		for {
			p, err := db.QueryJSON(ctx, "bench", q, buf[:0])
			if err != nil {
				b.Fatal(err)
			}
			buf, events = p.Events, events+p.Count
			if p.NextCursor == "" {
				break
			}
			q.Cursor = p.NextCursor
		}
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkRangePagedChunks reads 200,000 events of 100 series of the
// chunk layout, 10,000 a page.
func BenchmarkRangePagedChunks(b *testing.B) { benchRangePaged(b, family.LayoutChunk) }

// BenchmarkRangePagedRows is BenchmarkRangePagedChunks on the row layout.
func BenchmarkRangePagedRows(b *testing.B) { benchRangePaged(b, family.LayoutRow) }
