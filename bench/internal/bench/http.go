package bench

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/tenant"
)

// wire is how the HTTP ingest benchmark sends events: the endpoint, the
// encoding of a body, and the headers.
type wire struct {
	path   string
	encode func([]event.Event) []byte
	// header sets the request's headers for the API key.
	header func(h http.Header, key string)
}

// ndjsonWire is timetable's own API: NDJSON to the table's events.
var ndjsonWire = wire{
	path:   "/v1/tables/" + benchTable + "/events",
	encode: ndjson,
	header: func(h http.Header, key string) {
		h.Set("Authorization", "Bearer "+key)
		h.Set("Content-Type", "application/x-ndjson")
	},
}

// lineWire is InfluxDB 2.x's write endpoint: line protocol at
// nanoseconds.
var lineWire = wire{
	path:   "/api/v2/write?bucket=bench&precision=ns",
	encode: lineProtocol,
	header: func(h http.Header, key string) { h.Set("Authorization", "Token "+key) },
}

// httpIngest posts bodies of the wire's format to a real server on
// loopback.
func httpIngest(ctx context.Context, dir string, gen *generator, o Options, w wire) (float64, error) {
	db, store, clk, err := openEngine(ctx, dir)
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	defer store.Close()
	defer db.Close()
	clk.Set(start.Add(time.Duration(o.Events) * time.Millisecond))
	tenants := tenant.New(store, db.Options().Schema.MetaTable, tenant.Options{Clock: db.Options().Clock})
	key, err := tenants.Add(ctx, benchTenant, start)
	if err != nil {
		return 0, err
	}
	handler, err := server.New(db, server.Options{TenantDirectory: tenants, Logger: slog.New(slog.DiscardHandler), TenantLimits: benchTenantLimits()})
	if err != nil {
		return 0, err
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()
	var bodies [][]byte
	var idx [][]int
	for from := 0; from < o.Events; from += o.HTTPBatch {
		idx = append(idx, []int{len(bodies), min(o.HTTPBatch, o.Events-from)})
		bodies = append(bodies, w.encode(gen.batch(from, min(o.HTTPBatch, o.Events-from))))
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.Writers * 2}}
	url := srv.URL + w.path
	took, err := parallel(o.Writers*2, idx, func(b []int) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(bodies[b[0]]))
		if err != nil {
			return err
		}
		w.header(req.Header, key)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("HTTP ingest: status %s", resp.Status)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return rate(count(idx), took), nil
}

// benchTenantLimits are the default tenant limits with the write rates
// raised: the benchmark measures the server's ingest, not a tenant's
// default rate (100,000 events a second), as an operator raises a heavy
// tenant's.
func benchTenantLimits() tenant.Limits {
	l := server.DefaultTenantLimits()
	l.WriteEventsPerSecond, l.WriteEventsBurst = 1e9, 1e9
	l.WriteBytesPerSecond, l.WriteBytesBurst = 1e11, 1e11
	return l
}
