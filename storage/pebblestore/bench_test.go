package pebblestore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/storage"
)

// The write benchmarks write batches of benchBatch items whose attributes
// take about 180 bytes encoded, cycling through benchBatches distinct
// batches; the raw baseline writes the very same keys and encoded values
// straight to Pebble, with the same batch size, the same Pebble options
// and pebble.Sync, so the difference is what the store adds: validation,
// number canonicalisation, encoding and the catalog lookup.
const (
	benchBatch   = 1000
	benchBatches = 16
	benchTable   = "bench_events"
)

// benchItem is the i-th item of partition pk: an IoT event much like the
// engine's row layout writes.
func benchItem(pk string, i int) storage.Item {
	return storage.Item{
		PK: pk,
		SK: fmt.Sprintf("%016x#%016x", 1491825600123000+i*1000, uint64(i)*0x9e3779b97f4a7c15),
		Attrs: map[string]any{
			"speed":    json.Number("88.5"),
			"gear":     "D",
			"lat":      json.Number("52.520008"),
			"lon":      json.Number("13.404954"),
			"firmware": "car-17-firmware-3.2.1",
			"note":     "regular telemetry sample from the vehicle bus",
			"ttl":      json.Number("1499601600"),
			"ok":       true,
			"id":       fmt.Sprintf("%016x", i),
		},
	}
}

// benchData returns benchBatches batches of benchBatch items, each batch
// its own partition.
func benchData() [][]storage.Item {
	batches := make([][]storage.Item, benchBatches)
	for b := range batches {
		pk := fmt.Sprintf("tenant-1#a_table#car-%d#0", b)
		batches[b] = make([]storage.Item, benchBatch)
		for i := range batches[b] {
			batches[b][i] = benchItem(pk, i)
		}
	}
	return batches
}

// quiet are the options the benchmarks open stores with: defaults, with
// Pebble's messages dropped.
func quiet() Options {
	return Options{Logger: slog.New(slog.DiscardHandler)}
}

// openRaw opens a bare Pebble DB with the options a Store would use.
func openRaw(b *testing.B) *pebble.DB {
	opts := quiet()
	opts.EnsureDefaults()
	po, unref := pebbleOptions(opts)
	defer unref()
	db, err := pebble.Open(b.TempDir(), po)
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, db.Close()) })
	return db
}

// encodedSize is the average encoded size of the benchmark items'
// attributes.
func encodedSize(b *testing.B, items []storage.Item) int {
	n := 0
	for _, it := range items {
		v, err := appendItem(nil, it.Attrs, false)
		require.NoError(b, err)
		n += len(v)
	}
	return n / len(items)
}

func BenchmarkBatchWrite(b *testing.B) {
	ctx := context.Background()
	batches := benchData()
	b.Logf("attributes: %d bytes encoded on average", encodedSize(b, batches[0]))
	for _, parallel := range []bool{false, true} {
		b.Run(map[bool]string{false: "serial", true: "parallel"}[parallel], func(b *testing.B) {
			s, err := Open(b.TempDir(), quiet())
			require.NoError(b, err)
			b.Cleanup(func() { require.NoError(b, s.Close()) })
			require.NoError(b, s.CreateTable(ctx, storage.TableSpec{Name: benchTable}))
			b.ResetTimer()
			run(b, parallel, func(i int) error { return s.BatchWrite(ctx, benchTable, batches[i%benchBatches]) })
		})
	}
}

func BenchmarkRawPebbleBatch(b *testing.B) {
	batches := benchData()
	// The same keys and values BatchWrite writes, encoded beforehand.
	type kv struct{ k, v []byte }
	raw := make([][]kv, len(batches))
	for i, batch := range batches {
		for _, it := range batch {
			k, v, err := encodeItem(nil, nil, 1, it)
			require.NoError(b, err)
			raw[i] = append(raw[i], kv{k, v})
		}
	}
	for _, parallel := range []bool{false, true} {
		b.Run(map[bool]string{false: "serial", true: "parallel"}[parallel], func(b *testing.B) {
			db := openRaw(b)
			b.ResetTimer()
			run(b, parallel, func(i int) error {
				batch := db.NewBatch()
				defer batch.Close()
				for _, e := range raw[i%benchBatches] {
					if err := batch.Set(e.k, e.v, nil); err != nil {
						return err
					}
				}
				return batch.Commit(pebble.Sync)
			})
		})
	}
}

// run calls write b.N times, from one goroutine or from GOMAXPROCS×4 of
// them, and reports items written per second.
func run(b *testing.B, parallel bool, write func(i int) error) {
	b.ReportAllocs()
	if !parallel {
		for i := 0; b.Loop(); i++ {
			if err := write(i); err != nil {
				b.Fatal(err)
			}
		}
	} else {
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				if err := write(i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	b.ReportMetric(float64(b.N*benchBatch)/b.Elapsed().Seconds(), "items/s")
}

// The read benchmarks query one partition of queryItems items, flushed
// to sstables, in three shapes: the latest 10 items (a descending query
// with a limit, the dashboard's question), a range of 1000 items, and the
// same range projected on two attributes. The raw baseline walks the same
// key range with a bare Pebble iterator and copies each key and value out,
// the least a caller that keeps the data must do; it decodes nothing, so
// the gap to BenchmarkQuery is the cost of building each item's
// map[string]any, which the storage contract requires.
const queryItems = 10000

// queryShapes are the benchmarked queries: a name, the query (table and
// partition filled in), and the number of items it returns.
var queryShapes = []struct {
	name string
	q    storage.Query
	n    int
}{
	{"latest10", storage.Query{Desc: true, Limit: 10}, 10},
	{"range1000", storage.Query{Low: benchItem("", 4000).SK, High: benchItem("", 4999).SK}, 1000},
	{"range1000-2attrs", storage.Query{Low: benchItem("", 4000).SK, High: benchItem("", 4999).SK, Attrs: []string{"speed", "gear"}}, 1000},
}

const queryPK = "tenant-1#a_table#car-17#0"

// queryStore opens a store holding the query benchmarks' partition.
func queryStore(b *testing.B) *Store {
	ctx := context.Background()
	s, err := Open(b.TempDir(), quiet())
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, s.Close()) })
	require.NoError(b, s.CreateTable(ctx, storage.TableSpec{Name: benchTable}))
	for i := 0; i < queryItems; i += benchBatch {
		batch := make([]storage.Item, benchBatch)
		for j := range batch {
			batch[j] = benchItem(queryPK, i+j)
		}
		require.NoError(b, s.BatchWrite(ctx, benchTable, batch))
	}
	require.NoError(b, s.db.Flush())
	return s
}

func BenchmarkQuery(b *testing.B) {
	ctx := context.Background()
	s := queryStore(b)
	for _, shape := range queryShapes {
		b.Run(shape.name, func(b *testing.B) {
			q := shape.q
			q.Table, q.PK = benchTable, queryPK
			b.ReportAllocs()
			for b.Loop() {
				it := s.Query(ctx, q)
				n := 0
				for it.Next() {
					_ = it.Item()
					n++
				}
				if err := it.Close(); err != nil || n != shape.n {
					b.Fatalf("%d items, %v", n, err)
				}
			}
			b.ReportMetric(float64(b.N*shape.n)/b.Elapsed().Seconds(), "items/s")
		})
	}
}

func BenchmarkRawIterator(b *testing.B) {
	s := queryStore(b)
	id := s.catalog.lookup(benchTable).id
	prefix := appendPartitionPrefix(nil, id, queryPK)
	for _, shape := range queryShapes {
		b.Run(shape.name, func(b *testing.B) {
			lower := append(prefix[:len(prefix):len(prefix)], shape.q.Low...)
			upper := keySuccessor(prefix)
			if shape.q.High != "" {
				upper = append(append(prefix[:len(prefix):len(prefix)], shape.q.High...), 0)
			}
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				ok := it.First()
				if shape.q.Desc {
					ok = it.Last()
				}
				for ; ok && (shape.q.Limit == 0 || n < shape.q.Limit); n++ {
					v, err := it.ValueAndErr()
					if err != nil {
						b.Fatal(err)
					}
					buf = append(append(buf[:0], it.Key()...), v...)
					if shape.q.Desc {
						ok = it.Prev()
					} else {
						ok = it.Next()
					}
				}
				if err := it.Close(); err != nil || n != shape.n {
					b.Fatalf("%d items, %v", n, err)
				}
			}
			b.ReportMetric(float64(b.N*shape.n)/b.Elapsed().Seconds(), "items/s")
		})
	}
}

// BenchmarkDecodeItem measures what a query pays per item on top of the
// raw iterator: decoding one benchmark item's attributes into a fresh map,
// with this package's codec and, for comparison, with encoding/json (the
// obvious alternative, which also needs UseNumber to keep numbers exact
// and still cannot tell []byte from string).
func BenchmarkDecodeItem(b *testing.B) {
	attrs := benchItem("p", 1).Attrs
	enc, err := appendItem(nil, attrs, false)
	require.NoError(b, err)
	js, err := json.Marshal(attrs)
	require.NoError(b, err)
	b.Run("codec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d := decoder{s: string(enc)}
			if _, err := d.item(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			dec := json.NewDecoder(bytes.NewReader(js))
			dec.UseNumber()
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
