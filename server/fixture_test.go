package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/tenant"
)

// backend is the store the fixtures run on: Pebble, except inside
// TestEndToEndOnDynamoDB.
var backend = pebble()

// pebble is backends.Pebble for the fixtures: a test whose store it opens
// reaches no DynamoDB, so it skips in scripts/test.sh's run against
// DynamoDB Local (backends.NoDynamoDB), where it would run a second time
// for nothing. The tests on DynamoDB set backend to backends.Dynamo.
func pebble() backends.Backend {
	b := backends.Pebble()
	open := b.Open
	b.Open = func(t *testing.T) (storage.Store, family.Schema) {
		backends.NoDynamoDB(t)
		return open(t)
	}
	return b
}

// TestEndToEndOnDynamoDB runs the end-to-end tests again with the server
// on the DynamoDB backend: the embedded server and the same server on
// DynamoDB must behave identically.
func TestEndToEndOnDynamoDB(t *testing.T) {
	backend = backends.Dynamo()
	defer func() { backend = pebble() }()
	for name, test := range map[string]func(*testing.T){
		"WriteFormats": TestWriteFormats, "RetryStoresOnce": TestRetryStoresOnce,
		"BadEventsWriteNothing": TestBadEventsWriteNothing, "Authentication": TestAuthentication,
		"TenantIsolation": TestTenantIsolation, "QueryErrors": TestQueryErrors, "CursorWalk": TestCursorWalk,
		"DefaultRange": TestDefaultRange, "LateData": TestLateData, "Limits": TestLimits,
		"Routing": TestRouting, "Metrics": TestMetrics, "RequestLog": TestRequestLog,
		"Aggregate": TestAggregate, "Nesting": TestNesting,
		"AdminTenantsAndKeys": TestAdminTenantsAndKeys, "AdminTablesAndLifecycle": TestAdminTablesAndLifecycle,
		"RevocationAcrossServers": TestRevocationAcrossServers, "Discovery": TestDiscovery,
		"InfluxWrite": TestInfluxWriteV1, "InfluxBadLines": TestInfluxBadLinesWriteNothing,
		"InfluxQLShow": TestInfluxQLShow, "InfluxQLSelect": TestInfluxQLSelect, "InfluxQLProtocol": TestInfluxQLProtocol,
		"InfluxQLOffsetStddevPercentile": TestInfluxQLOffsetStddevPercentile, "AnswersMatchInfluxDB": TestAnswersMatchInfluxDB,
		"FilterLimits": TestFilterLimits, "TableBudget": TestTableBudget,
		"InfluxQLEdgeInputs": TestInfluxQLEdgeInputs, "ArchivedSeries": TestArchivedSeriesOverHTTP,
		"CatalogOnce": TestARequestReadsTheCatalogOnce,
	} {
		t.Run(name, test)
	}
}

// now is the fixtures' clock: Thursday 2017-06-15 09:00 UTC.
var now = time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC)

// fixture is a server on a real Pebble store in a temporary directory,
// with two tenants, acme and globex.
type fixture struct {
	t     *testing.T
	url   string
	dir   string
	store storage.Store
	db    *engine.DB
	// tenants is the registry of tenants and keys the server
	// authenticates with.
	tenants *tenant.Directory
	clock   *clock.Manual
	logs    *syncBuffer
	acme    string // API keys
	globex  string
}

func newFixture(t *testing.T, opts server.Options) *fixture {
	t.Helper()
	store, cfg := backend.Open(t)
	return newFixtureOn(t, store, cfg, prometheus.NewRegistry(), opts)
}

// newFixtureOn is newFixture on a store the caller opened and closes, with
// the engine's and the server's metrics on reg.
func newFixtureOn(t *testing.T, store storage.Store, cfg family.Schema, reg *prometheus.Registry, opts server.Options) *fixture {
	t.Helper()
	return newFixtureBudget(t, store, cfg, reg, opts, engine.TableBudget{})
}

// newFixtureBudget is newFixtureOn with the engine's table budget.
func newFixtureBudget(t *testing.T, store storage.Store, cfg family.Schema, reg *prometheus.Registry, opts server.Options, budget engine.TableBudget) *fixture {
	t.Helper()
	return newFixtureEngine(t, store, cfg, reg, opts, engine.Options{Tables: budget})
}

// newFixtureEngine is newFixtureOn with the engine's options eo (its
// schema, clock and registerer the fixture's).
func newFixtureEngine(t *testing.T, store storage.Store, cfg family.Schema, reg *prometheus.Registry, opts server.Options, eo engine.Options) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{t: t, dir: t.TempDir(), clock: clock.NewManual(now), logs: &syncBuffer{}, store: store}
	var err error
	eo.Schema, eo.Clock, eo.Registerer = cfg, f.clock, reg
	f.db, err = engine.Open(ctx, f.store, eo)
	require.NoError(t, err)
	f.tenants = tenant.New(f.store, f.db.Options().Schema.MetaTable, tenant.Options{Clock: f.clock})
	if opts.TenantDirectory != nil {
		f.tenants = opts.TenantDirectory
	}
	f.acme, err = f.tenants.Add(ctx, "acme", now)
	require.NoError(t, err)
	f.globex, err = f.tenants.Add(ctx, "globex", now)
	require.NoError(t, err)
	opts.Logger = slog.New(slog.NewJSONHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts.Registry, opts.TenantDirectory = reg, f.tenants
	handler, err := server.New(f.db, opts)
	require.NoError(t, err)
	srv := httptest.NewServer(handler)
	f.url = srv.URL
	t.Cleanup(func() {
		srv.Close()
		require.NoError(t, f.db.Close())
	})
	return f
}

// response is an answer of the server.
type response struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into a generic value.
func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal(r.body, &v), "body: %s", r.body)
	return v
}

// do sends a request; key is sent as a bearer token unless empty, and
// headers are name, value pairs.
func (f *fixture) do(method, path, key string, body []byte, headers ...string) response {
	f.t.Helper()
	req, err := http.NewRequest(method, f.url+path, bytes.NewReader(body))
	require.NoError(f.t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Transfer-Encoding" {
			// The body's length is not sent: the server learns it
			// by reading.
			req.TransferEncoding = []string{headers[i+1]}
			req.ContentLength = -1
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(f.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(f.t, err)
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// postNDJSON writes events as NDJSON.
func (f *fixture) postNDJSON(key, table, body string) response {
	f.t.Helper()
	return f.do("POST", "/v1/tables/"+table+"/events", key, []byte(body), "Content-Type", "application/x-ndjson")
}

// postJSON writes events as a JSON array.
func (f *fixture) postJSON(key, table, body string) response {
	f.t.Helper()
	return f.do("POST", "/v1/tables/"+table+"/events", key, []byte(body), "Content-Type", "application/json")
}

// get queries a table.
func (f *fixture) get(key, table string, params url.Values) response {
	f.t.Helper()
	return f.do("GET", "/v1/tables/"+table+"/events?"+params.Encode(), key, nil)
}

// outEvent is an event as the API returns it.
type outEvent struct {
	Time   string         `json:"time"`
	Series string         `json:"series"`
	ID     string         `json:"id"`
	Fields map[string]any `json:"fields"`
}

// page is a query answer.
type page struct {
	Events     []outEvent `json:"events"`
	NextCursor *string    `json:"next_cursor"`
}

func (f *fixture) getPage(key, table string, params url.Values) page {
	f.t.Helper()
	res := f.get(key, table, params)
	require.Equal(f.t, http.StatusOK, res.status, "body: %s", res.body)
	var p page
	require.NoError(f.t, json.Unmarshal(res.body, &p))
	require.NotNil(f.t, p.Events, "events is always present")
	return p
}

// all follows cursors to the end of a query and returns every event.
func (f *fixture) all(key, table string, params url.Values) []outEvent {
	f.t.Helper()
	var out []outEvent
	params = cloneValues(params)
	for range 1000 {
		p := f.getPage(key, table, params)
		out = append(out, p.Events...)
		if p.NextCursor == nil {
			return out
		}
		require.NotEmpty(f.t, *p.NextCursor)
		params.Set("cursor", *p.NextCursor)
	}
	f.t.Fatal("the cursor never ran out")
	return nil
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// rangeParams returns from and to parameters.
func rangeParams(from, to time.Time) url.Values {
	return url.Values{"from": {from.Format(time.RFC3339Nano)}, "to": {to.Format(time.RFC3339Nano)}}
}

// wide is a range holding every event of the tests.
var wide = rangeParams(time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC), now.Add(24*time.Hour))

// ndjson returns n events of series, one a minute from start, as NDJSON.
func ndjson(start time.Time, series string, n int) string {
	var b strings.Builder
	for i := range n {
		e := map[string]any{"time": start.Add(time.Duration(i) * time.Minute).Format(time.RFC3339Nano), "series": series, "fields": map[string]any{"i": i}}
		line, _ := json.Marshal(e)
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// records returns the log records holding every given key and value.
func (b *syncBuffer) records(t *testing.T, match map[string]any) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		ok := true
		for k, v := range match {
			if rec[k] != v {
				ok = false
			}
		}
		if ok {
			out = append(out, rec)
		}
	}
	return out
}
