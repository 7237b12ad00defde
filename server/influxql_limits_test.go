package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/internal/metricstest"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/tenant"
)

// andTerms returns a WHERE of n comparisons joined by AND, about
// eleven bytes each in a form.
func andTerms(n int) string {
	return strings.TrimSuffix(strings.Repeat("i>1 AND ", n), " AND ")
}

// The inputs that broke the connection, burnt a core or were silently
// changed: each gets an answer, a 400 naming the bound where it is past
// one (a 413 for the query budget).
func TestInfluxQLEdgeInputs(t *testing.T) {
	f := newFixture(t, server.Options{})
	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "iq", ndjson(now.Add(-time.Hour), "s1", 3)).status)
	form := func(q string) []byte { return []byte(url.Values{"q": {q}, "db": {"acme"}}.Encode()) }
	post := func(q string, headers ...string) response {
		t.Helper()
		return f.do("POST", "/query", f.acme, form(q), append([]string{"Content-Type", "application/x-www-form-urlencoded"}, headers...)...)
	}
	for _, c := range []struct {
		name, q string
		status  int
		answer  string // in the body: the error, or a statement's
	}{
		// A read of every series holds OFFSET's rows: past the query
		// budget, whatever the events; a series alone skips them.
		{"OFFSET at int64", "SELECT i FROM iq OFFSET 9223372036854775807", http.StatusRequestEntityTooLarge, "for OFFSET 9223372036854775807 and 0 rows: with the statements before it about 8796093022208 MiB to build: timetable: tenant over its limit: this request alone is over max_query_partitions = 16384"},
		{"OFFSET at int64 of a series alone", "SELECT i FROM iq GROUP BY * OFFSET 9223372036854775807", http.StatusOK, `{"results":[{"statement_id":0}]}`},
		{"LIMIT past int64", "SELECT i FROM iq LIMIT 9223372036854775808", http.StatusBadRequest, "LIMIT 9223372036854775808 in statement 1 is over a limit: at most 9223372036854775807"},
		{"SLIMIT past int64", "SELECT i FROM iq SLIMIT 9223372036854775808", http.StatusBadRequest, "SLIMIT 9223372036854775808"},
		{"60,000 terms", "SELECT i FROM iq WHERE " + andTerms(60_000), http.StatusBadRequest, "influxql.MaxOperators"},
		{"deep parentheses", "SELECT i FROM iq WHERE " + strings.Repeat("(", 100_000) + "i > 1" + strings.Repeat(")", 100_000), http.StatusBadRequest, "influxql.MaxDepth"},
		{"GROUP BY time(0s)", "SELECT count(i) FROM iq WHERE time > now() - 2h GROUP BY time(0s)", http.StatusOK, "GROUP BY time(0s): the interval must be positive"},
		{"only a separator", ";", http.StatusBadRequest, "no statement"},
	} {
		res := post(c.q)
		require.Equal(t, c.status, res.status, "%s: %s", c.name, res.body)
		require.Contains(t, string(res.body), c.answer, c.name)
		if c.status == http.StatusBadRequest {
			require.Contains(t, string(res.body), "error parsing query: ", c.name)
		}
	}
	// A key in the form body is checked against the header's, as one in
	// the URL is, and as line protocol does.
	res := post("SHOW DATABASES", "Authorization", "Token "+f.acme)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	two := url.Values{"q": {"SHOW DATABASES"}, "p": {f.globex}}.Encode()
	for _, r := range []response{
		f.do("POST", "/query", "", []byte(two), "Content-Type", "application/x-www-form-urlencoded", "Authorization", "Token "+f.acme),
		f.do("POST", "/query?p="+url.QueryEscape(f.acme), "", []byte(two), "Content-Type", "application/x-www-form-urlencoded"),
		f.do("GET", "/query?"+two, "", nil, "Authorization", "Token "+f.acme),
	} {
		require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
		require.Contains(t, string(r.body), "two different API keys")
	}
	same := url.Values{"q": {"SHOW DATABASES"}, "p": {f.acme}}.Encode()
	res = f.do("POST", "/query", "", []byte(same), "Content-Type", "application/x-www-form-urlencoded", "Authorization", "Token "+f.acme)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	require.Contains(t, string(res.body), `"acme"`)
}

// /query runs among its tenant's concurrent queries, as /v1's reads do:
// past max_concurrent_queries, an InfluxQL query and a /v1 read are
// 429 naming it. Its aggregates of several series take the CPU pool's
// slot while another tenant is active.
func TestInfluxQLConcurrentQueries(t *testing.T) {
	inner, cfg := backends.Pebble().Open(t)
	store := &gate{Store: inner, waiting: make(chan struct{}), open: make(chan struct{})}
	reg := prometheus.NewRegistry()
	f := newFixtureEngine(t, store, cfg, reg, server.Options{AdminToken: adminToken, CPU: admission.NewCPU(1)}, engine.Options{})
	openGate := sync.OnceFunc(func() { close(store.open) })
	t.Cleanup(openGate)
	res := f.do("PUT", "/v1/admin/tenants/acme/limits", adminToken, []byte(`{"max_concurrent_queries": 1}`), "Content-Type", "application/json")
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	for _, s := range []string{"slow", "a", "b"} {
		require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "t", ndjson(now.Add(-time.Hour), s, 3)).status)
	}
	query := func(q string) url.Values { return url.Values{"q": {q}, "db": {"acme"}} }

	first := make(chan response, 1)
	go func() {
		first <- f.do("GET", "/query?"+query(`SELECT i FROM t WHERE "series" = 'slow'`).Encode(), f.acme, nil)
	}()
	<-store.waiting
	for _, r := range []response{
		f.do("GET", "/query?"+query("SHOW DATABASES").Encode(), f.acme, nil),
		f.get(f.acme, "t", url.Values{"series": {"a"}}),
	} {
		require.Equal(t, http.StatusTooManyRequests, r.status, "%s", r.body)
		require.Contains(t, string(r.body), "max_concurrent_queries")
		require.NotEmpty(t, r.header.Get("Retry-After"))
	}
	// Another tenant is served meanwhile.
	res = f.do("GET", "/query?"+query("SHOW DATABASES").Encode(), f.globex, nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	openGate()
	res = <-first
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	var out api.InfluxQLResponse
	require.NoError(t, json.Unmarshal(res.body, &out))
	require.Len(t, out.Results[0].Series[0].Values, 3)

	// globex was active just now: acme's aggregate of its series takes
	// the slot, and gives it back.
	res = f.do("GET", "/query?"+query(`SELECT sum(i) FROM t WHERE "series" =~ /^[ab]$/ AND time > now() - 2h`).Encode(), f.acme, nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	require.NoError(t, json.Unmarshal(res.body, &out))
	require.Equal(t, float64(6), out.Results[0].Series[0].Values[0][1], "%s", res.body)
	require.Equal(t, 2.0, metricstest.Value(t, reg, "timetable_cpu_slots_taken_total", nil), "a slot for each series")
	require.Zero(t, metricstest.Value(t, reg, "timetable_cpu_slots_held", nil))
}

// heldStore is a store whose reads of series "slow" wait until their
// context ends, saying when the first starts waiting and when it has
// ended.
type heldStore struct {
	storage.Store
	waiting, ended    chan struct{}
	waitOnce, endOnce sync.Once
}

func newHeldStore(inner storage.Store) *heldStore {
	return &heldStore{Store: inner, waiting: make(chan struct{}), ended: make(chan struct{})}
}

func (h *heldStore) Query(ctx context.Context, q storage.Query) storage.Iterator {
	if strings.Contains(q.PK, "#slow#") {
		h.waitOnce.Do(func() { close(h.waiting) })
		<-ctx.Done()
		h.endOnce.Do(func() { close(h.ended) })
	}
	return h.Store.Query(ctx, q)
}

// A query whose client leaves stops: its read sees its context end.
func TestInfluxQLStopsWhenTheClientLeaves(t *testing.T) {
	inner, cfg := backends.Pebble().Open(t)
	store := newHeldStore(inner)
	f := newFixtureEngine(t, store, cfg, prometheus.NewRegistry(), server.Options{}, engine.Options{})
	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "t", ndjson(now.Add(-time.Hour), "slow", 3)).status)
	ctx, leave := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", f.url+"/query?"+url.Values{"q": {`SELECT i FROM t WHERE "series" = 'slow'`}, "db": {"acme"}}.Encode(), nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+f.acme)
	answered := make(chan error, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
		}
		answered <- err
	}()
	<-store.waiting
	leave()
	require.ErrorIs(t, <-answered, context.Canceled)
	<-store.ended
}

// A query still running when a shutdown's wait is over is cut off: its
// work stops with the server rather than outliving it.
func TestInfluxQLStopsWhenTheServerShutsDown(t *testing.T) {
	inner, cfg := backends.Pebble().Open(t)
	store := newHeldStore(inner)
	reg := prometheus.NewRegistry()
	db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Registerer: reg})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	tenants := tenant.New(store, db.Options().Schema.MetaTable, tenant.Options{Clock: db.Options().Clock})
	key, err := tenants.Add(context.Background(), "acme", time.Now())
	require.NoError(t, err)
	srv, err := server.New(db, server.Options{TenantDirectory: tenants, Registry: reg, Logger: slog.New(slog.DiscardHandler), ShutdownTimeout: time.Millisecond})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	serveCtx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(serveCtx, ln) }()
	base := "http://" + ln.Addr().String()
	status, body := send(t, "POST", base+"/v1/tables/t/events", key, ndjson(time.Now().Add(-time.Hour), "slow", 3))
	require.Equal(t, http.StatusOK, status, "%s", body)

	go func() {
		req, _ := http.NewRequest("GET", base+"/query?"+url.Values{"q": {`SELECT i FROM t WHERE "series" = 'slow'`}, "db": {"acme"}}.Encode(), nil)
		req.Header.Set("Authorization", "Bearer "+key)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	}()
	<-store.waiting
	stop()
	require.Error(t, <-served, "the query outlasted the shutdown's wait")
	<-store.ended
}
