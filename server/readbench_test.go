package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

// BenchmarkQueryOneHour reads one series' hour of events, one a second,
// over loopback HTTP from a server on Pebble: the one-hour read of the
// peer comparison.
func BenchmarkQueryOneHour(b *testing.B) {
	ctx := context.Background()
	clk := clock.NewManual(now)
	store, err := pebblestore.Open(b.TempDir(), pebblestore.Options{Clock: clk, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(b, err)
	defer store.Close()
	db, err := engine.Open(ctx, store, engine.Options{Clock: clk})
	require.NoError(b, err)
	defer db.Close()
	key, err := db.Tenants().Add(ctx, "acme", now)
	require.NoError(b, err)
	from := now.Add(-time.Hour).Truncate(time.Hour)
	evs := make([]event.Event, 3600)
	for i := range evs {
		evs[i] = event.Event{Time: from.Add(time.Duration(i) * time.Second), Series: "device-0001", Fields: map[string]any{
			"temperature": json.Number(fmt.Sprintf("%d.25", 20+i%10)), "humidity": json.Number(fmt.Sprint(40 + i%30)), "status": "ok", "firmware": "v1.2.3"}}
	}
	_, err = db.Write(ctx, "acme", "bench", evs)
	require.NoError(b, err)
	handler, err := server.New(db, server.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(b, err)
	srv := httptest.NewServer(handler)
	defer srv.Close()
	u := srv.URL + "/v1/tables/bench/events?" + url.Values{"series": {"device-0001"}, "from": {from.Format(time.RFC3339)},
		"to": {from.Add(time.Hour - time.Nanosecond).Format(time.RFC3339Nano)}, "limit": {"10000"}}.Encode()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(b, err)
	req.Header.Set("Authorization", "Bearer "+key)
	b.ReportAllocs()
	for b.Loop() {
		resp, err := http.DefaultClient.Do(req)
		require.NoError(b, err)
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.NoError(b, err)
		if resp.StatusCode != http.StatusOK || n < 3600*100 {
			b.Fatalf("status %d, %d bytes", resp.StatusCode, n)
		}
	}
	b.ReportMetric(float64(b.N*len(evs))/b.Elapsed().Seconds(), "events/s")
}
