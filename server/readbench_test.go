package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
)

// BenchmarkQueryOneHour reads one series' hour of events, one a second,
// over loopback HTTP from a server on Pebble: the one-hour read of the
// peer comparison.
func BenchmarkQueryOneHour(b *testing.B) {
	db, srv, key := benchServer(b)
	from := now.Add(-time.Hour).Truncate(time.Hour)
	evs := make([]event.Event, 3600)
	for i := range evs {
		evs[i] = event.Event{Time: from.Add(time.Duration(i) * time.Second), Series: "device-0001", Fields: map[string]any{
			"temperature": json.Number(fmt.Sprintf("%d.25", 20+i%10)), "humidity": json.Number(fmt.Sprint(40 + i%30)), "status": "ok", "firmware": "v1.2.3"}}
	}
	_, err := db.Write(context.Background(), "acme", "bench", evs)
	require.NoError(b, err)
	u := srv.URL + "/v1/tables/bench/events?" + url.Values{"series": {"device-0001"}, "from": {from.Format(time.RFC3339)},
		"to": {from.Add(time.Hour - time.Nanosecond).Format(time.RFC3339Nano)}, "limit": {"10000"}}.Encode()
	getLoop(b, u, key, 3600*100)
	b.ReportMetric(float64(b.N*len(evs))/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkQueryLatest10 reads the latest 10 events of one series among a
// few, over loopback HTTP from a server on Pebble: the point read of the
// peer comparison, whose cost is per request rather than per event.
func BenchmarkQueryLatest10(b *testing.B) {
	benchmarkLatest10(b, family.DefaultSchema())
}

// BenchmarkQueryLatest10Chunks is BenchmarkQueryLatest10 on a family of
// the chunk layout, the peer comparison's first column.
func BenchmarkQueryLatest10Chunks(b *testing.B) {
	benchmarkLatest10(b, chunkSchema())
}

// benchmarkLatest10 is BenchmarkQueryLatest10 under schema.
func benchmarkLatest10(b *testing.B, schema family.Schema) {
	db, srv, key := benchServerOf(b, schema)
	from := now.Add(-7 * 24 * time.Hour)
	var evs []event.Event
	for i := range 400 {
		evs = append(evs, event.Event{Time: from.Add(time.Duration(i) * 25 * time.Minute), Series: fmt.Sprintf("device-%04d", i%4), Fields: map[string]any{
			"temperature": json.Number(fmt.Sprintf("%d.25", 20+i%10)), "humidity": json.Number(fmt.Sprint(40 + i%30)), "pressure": json.Number("1013"), "voltage": json.Number("3.3")}})
	}
	_, err := db.Write(context.Background(), "acme", "bench", evs)
	require.NoError(b, err)
	u := srv.URL + "/v1/tables/bench/events?" + url.Values{"series": {"device-0001"}, "from": {from.Add(-time.Hour).Format(time.RFC3339)},
		"to": {now.Format(time.RFC3339)}, "order": {"desc"}, "limit": {"10"}}.Encode()
	getLoop(b, u, key, 0)
}

// BenchmarkAggregateOneSeries7Days sums one series' field by the hour
// over 7 days, over loopback HTTP from a server on Pebble whose family is
// of the chunk layout: the "aggregate by hour, one series, 7 days" query
// of the peer comparison (bench/internal/bench/peers.go), one event of
// the series every 33.6 minutes among 50 series. cpu-ns/op is the
// process's CPU (server and client, user and system) per query.
func BenchmarkAggregateOneSeries7Days(b *testing.B) {
	db, srv, key := benchServerOf(b, chunkSchema())
	const series, perSeries = 50, 300
	from := now.Add(-8 * 24 * time.Hour).Truncate(24 * time.Hour)
	step := 7 * 24 * time.Hour / (series * perSeries)
	evs := make([]event.Event, series*perSeries)
	for i := range evs {
		evs[i] = event.Event{Time: from.Add(time.Millisecond + time.Duration(i)*step), Series: fmt.Sprintf("sensor-%04d", i%series), Fields: map[string]any{
			"temperature": json.Number(fmt.Sprintf("%d.25", 15+i%20)), "humidity": json.Number(fmt.Sprint(30 + i%60)),
			"pressure": json.Number(fmt.Sprint(1000 + i%30)), "voltage": json.Number("3.3")}}
	}
	_, err := db.Write(context.Background(), "acme", "bench", evs)
	require.NoError(b, err)
	u := srv.URL + "/v1/tables/bench/aggregate?" + url.Values{"series": {"sensor-0007"}, "from": {from.Format(time.RFC3339)},
		"to": {from.Add(7*24*time.Hour - time.Nanosecond).Format(time.RFC3339Nano)}, "bucket": {"1h"}, "fields": {"temperature"}, "fn": {"count,sum"}}.Encode()
	getLoop(b, u, key, 168*50)
}

// chunkSchema is the default schema with its family of the chunk layout.
func chunkSchema() family.Schema {
	schema := family.DefaultSchema()
	schema.Families[0].Layout, schema.Families[0].ChunkWindow = family.LayoutChunk, family.DefaultChunkWindow
	return schema
}

// processCPU returns the CPU time the process has used, user and
// system, in nanoseconds.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// getLoop asks GET u with key b.N times, and fails unless every answer is
// a 200 of at least least bytes.
func getLoop(b *testing.B, u, key string, least int) {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(b, err)
	req.Header.Set("Authorization", "Bearer "+key)
	b.ReportAllocs()
	cpu := processCPU(b)
	for b.Loop() {
		resp, err := http.DefaultClient.Do(req)
		require.NoError(b, err)
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.NoError(b, err)
		if resp.StatusCode != http.StatusOK || n < int64(least) {
			b.Fatalf("status %d, %d bytes", resp.StatusCode, n)
		}
	}
	b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
}
