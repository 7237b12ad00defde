package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/storage/pebblestore"
	"github.com/timetabledb/timetable/tenant"
)

// BenchmarkWriteNDJSON posts batches of 5,000 events of about 180 bytes
// (as NDJSON) over loopback HTTP to a server on Pebble, from two clients.
func BenchmarkWriteNDJSON(b *testing.B) {
	benchmarkWrite(b, "/v1/tables/bench/events", func(h http.Header, key string) {
		h.Set("Authorization", "Bearer "+key)
		h.Set("Content-Type", "application/x-ndjson")
	}, func(w io.Writer, t time.Time, i int) {
		fmt.Fprintf(w, `{"time":%q,"series":"device-%04d","fields":{"temperature":%d.25,"humidity":%d,"status":"ok","firmware":"v1.2.3"}}`+"\n",
			t.Format(time.RFC3339Nano), i%1000, 20+i%10, 40+i%30)
	})
}

// BenchmarkWriteLineProtocol is BenchmarkWriteNDJSON with the same
// events as line protocol, their series as a tag.
func BenchmarkWriteLineProtocol(b *testing.B) {
	benchmarkWrite(b, "/api/v2/write?bucket=b", func(h http.Header, key string) {
		h.Set("Authorization", "Token "+key)
	}, func(w io.Writer, t time.Time, i int) {
		fmt.Fprintf(w, "bench,device=device-%04d temperature=%d.25,humidity=%di,status=\"ok\",firmware=\"v1.2.3\" %d\n",
			i%1000, 20+i%10, 40+i%30, t.UnixNano())
	})
}

// benchmarkWrite posts batches of 5,000 events, each written by line, to
// path from two clients.
func benchmarkWrite(b *testing.B, path string, header func(http.Header, string), line func(w io.Writer, t time.Time, i int)) {
	const batch = 5000
	_, srv, key := benchServer(b)

	// Distinct bodies, so that every batch writes new events.
	bodies := make([][]byte, 64)
	for k := range bodies {
		var body strings.Builder
		for i := range batch {
			line(&body, now.Add(-time.Duration(k*batch+i)*time.Millisecond), i)
		}
		bodies[k] = []byte(body.String())
	}
	b.SetBytes(int64(len(bodies[0])))
	b.ResetTimer()
	b.SetParallelism(1) // GOMAXPROCS clients
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		client := &http.Client{}
		k := 0
		for pb.Next() {
			req, _ := http.NewRequest("POST", srv.URL+path, bytes.NewReader(bodies[k%len(bodies)]))
			header(req.Header, key)
			res, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			res.Body.Close()
			if res.StatusCode/100 != 2 {
				b.Errorf("status %d", res.StatusCode)
				return
			}
			k++
		}
	})
	b.ReportMetric(float64(b.N*batch)/time.Since(start).Seconds(), "events/s")
}

// benchServer starts a server on a Pebble store in a temp dir, its clock
// at now, with the tenant acme, and returns its engine, the server and
// acme's API key; the benchmark's cleanup stops them.
func benchServer(b *testing.B) (*engine.DB, *httptest.Server, string) {
	return benchServerOf(b, family.DefaultSchema())
}

// benchServerOf is benchServer with the engine's schema.
func benchServerOf(b *testing.B, schema family.Schema) (*engine.DB, *httptest.Server, string) {
	ctx := context.Background()
	clk := clock.NewManual(now)
	store, err := pebblestore.Open(b.TempDir(), pebblestore.Options{Clock: clk, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(b, err)
	b.Cleanup(func() { store.Close() })
	db, err := engine.Open(ctx, store, engine.Options{Schema: schema, Clock: clk})
	require.NoError(b, err)
	b.Cleanup(func() { db.Close() })
	tenants := tenant.New(store, db.Options().Schema.MetaTable, tenant.Options{Clock: db.Options().Clock})
	key, err := tenants.Add(ctx, "acme", now)
	require.NoError(b, err)
	handler, err := server.New(db, server.Options{TenantDirectory: tenants, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(b, err)
	srv := httptest.NewServer(handler)
	b.Cleanup(srv.Close)
	return db, srv, key
}
