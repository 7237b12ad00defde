package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/internal/metricstest"
	"github.com/timetabledb/timetable/server"
)

// The admin API sets and shows a tenant's limits: its overrides, those
// in force over the server's defaults, and its usage.
func TestAdminTenantLimits(t *testing.T) {
	// The rates' clock stands still unless moved: nothing refills the
	// buckets meanwhile.
	rates := clock.NewManual(now)
	f := newFixture(t, server.Options{AdminToken: adminToken, Clock: rates})
	admin := func(method, path, body string) response {
		t.Helper()
		return f.do(method, path, adminToken, []byte(body), "Content-Type", "application/json")
	}
	res := admin("GET", "/v1/admin/tenants/acme/limits", "")
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	var l api.Limits
	require.NoError(t, json.Unmarshal(res.body, &l))
	require.Zero(t, l.Overrides)
	require.Equal(t, api.TenantLimits(server.DefaultTenantLimits()), l.Effective)
	require.Equal(t, server.MetricsLabel("acme"), l.MetricsLabel)
	require.NotContains(t, l.MetricsLabel, "acme")

	res = admin("PUT", "/v1/admin/tenants/acme/limits", `{"write_events_per_second": 10, "write_events_burst": 10, "max_concurrent_queries": 1}`)
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	require.NoError(t, json.Unmarshal(res.body, &l))
	require.Equal(t, api.TenantLimits{WriteEventsPerSecond: 10, WriteEventsBurst: 10, MaxConcurrentQueries: 1}, l.Overrides)
	require.Equal(t, float64(10), l.Effective.WriteEventsPerSecond)
	require.Equal(t, server.DefaultWriteBytesPerSecond, int(l.Effective.WriteBytesPerSecond))

	// The tenant list shows them too (the console reads it).
	res = admin("GET", "/v1/admin/tenants", "")
	var ts api.Tenants
	require.NoError(t, json.Unmarshal(res.body, &ts))
	require.Equal(t, "acme", ts.Tenants[0].Name)
	require.Equal(t, float64(10), ts.Tenants[0].Limits.Effective.WriteEventsPerSecond)
	require.Equal(t, server.DefaultWriteEventsPerSecond, int(ts.Tenants[1].Limits.Effective.WriteEventsPerSecond))

	// The limit holds at once on this server: a burst of ten events.
	res = f.postNDJSON(f.acme, "t", ndjson(now.Add(-time.Hour), "a", 11))
	require.Equal(t, http.StatusRequestEntityTooLarge, res.status, "more than the burst: %s", res.body)
	require.Contains(t, string(res.body), "write_events_burst")
	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "t", ndjson(now.Add(-time.Hour), "a", 10)).status)
	res = f.postNDJSON(f.acme, "t", ndjson(now.Add(-time.Hour), "a", 10))
	require.Equal(t, http.StatusTooManyRequests, res.status, "body: %s", res.body)
	require.Contains(t, string(res.body), "write_events_per_second")
	require.NotEmpty(t, res.header.Get("Retry-After"))

	// Back to the defaults; bad limits and unknown tenants are refused.
	require.Equal(t, http.StatusOK, admin("PUT", "/v1/admin/tenants/acme/limits", `{}`).status)
	rates.Advance(time.Second)
	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "t", ndjson(now.Add(-time.Hour), "a", 10)).status)
	require.Equal(t, http.StatusBadRequest, admin("PUT", "/v1/admin/tenants/acme/limits", `{"write_events_per_second": -1}`).status)
	require.Equal(t, http.StatusBadRequest, admin("PUT", "/v1/admin/tenants/acme/limits", `{"write_events": 1}`).status)
	require.Equal(t, http.StatusNotFound, admin("PUT", "/v1/admin/tenants/nobody/limits", `{}`).status)
	require.Equal(t, http.StatusNotFound, admin("GET", "/v1/admin/tenants/nobody/limits", "").status)
}

// One tenant's 200 writers and four aggregates of every series, over
// its limits, get 429s naming the limit; the other tenant's writes and
// latest-ten reads all succeed meanwhile. The writes and the aggregates
// share one CPU slot, as on two cores (admission.CPU): each gets its
// turns, and the pool's slot is given back. Nothing is timed: the test
// asserts on answers only; `make bench`'s limits part measures the
// other tenant's latency.
func TestANoisyTenantIsLimitedAndAQuietOneServed(t *testing.T) {
	cpu := admission.NewCPU(1)
	store, cfg := backend.Open(t)
	reg := prometheus.NewRegistry()
	f := newFixtureEngine(t, store, cfg, reg, server.Options{AdminToken: adminToken, Clock: clock.NewManual(now), CPU: cpu}, engine.Options{})
	res := f.do("PUT", "/v1/admin/tenants/acme/limits", adminToken,
		[]byte(`{"write_events_per_second": 1000, "write_events_burst": 1000, "max_concurrent_queries": 2}`), "Content-Type", "application/json")
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	for i := range 20 {
		require.Equal(t, http.StatusOK, f.postNDJSON(f.globex, "quiet", ndjson(now.Add(-time.Hour), fmt.Sprintf("q%d", i), 1)).status)
	}

	var mu sync.Mutex
	noisy := map[int]int{}
	served := map[string]int{}
	reasons := map[string]bool{}
	record := func(kind string, status int, body []byte) {
		mu.Lock()
		defer mu.Unlock()
		noisy[status]++
		if status == http.StatusOK {
			served[kind]++
		}
		if status == http.StatusTooManyRequests {
			var e api.ErrorBody
			_ = json.Unmarshal(body, &e)
			for _, limit := range []string{"write_events_per_second", "max_concurrent_queries"} {
				if strings.Contains(e.Error, limit) {
					reasons[limit] = true
				}
			}
		}
	}
	// The noisy table exists before its aggregates start: a 404 is no limit.
	status, body := send(t, "POST", f.url+"/v1/tables/noisy/events", f.acme, ndjson(now.Add(-2*time.Hour), "w0", 1))
	require.Equal(t, http.StatusOK, status, "%s", body)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range 200 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil && i < 5; i++ {
				status, body := send(t, "POST", f.url+"/v1/tables/noisy/events", f.acme, ndjson(now.Add(-2*time.Hour), fmt.Sprintf("w%d", w), 50))
				record("write", status, body)
			}
		})
	}
	agg := url.Values{"from": {now.Add(-3 * time.Hour).Format(time.RFC3339)}, "to": {now.Format(time.RFC3339)}, "bucket": {"1h"}, "fn": {"count"}}
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				status, body := send(t, "GET", f.url+"/v1/tables/noisy/aggregate?"+agg.Encode(), f.acme, "")
				record("aggregate", status, body)
			}
		})
	}
	// The quiet tenant reads its latest ten and writes, all the while.
	latest := url.Values{"series": {"q3"}, "order": {"desc"}, "limit": {"10"}}
	for i := range 100 {
		res := f.get(f.globex, "quiet", latest)
		require.Equal(t, http.StatusOK, res.status, "the quiet tenant's read: %s", res.body)
		res = f.postNDJSON(f.globex, "quiet", ndjson(now.Add(-time.Hour+time.Duration(i)*time.Second), "q3", 1))
		require.Equal(t, http.StatusOK, res.status, "the quiet tenant's write: %s", res.body)
	}
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return reasons["write_events_per_second"] && reasons["max_concurrent_queries"] && served["write"] > 0 && served["aggregate"] > 0
	}, time.Minute, 10*time.Millisecond, "the noisy tenant meets both limits, and gets writes and aggregates done")
	stop()
	wg.Wait()
	t.Logf("the noisy tenant's answers: %v", noisy)
	for status := range noisy {
		require.Contains(t, []int{http.StatusOK, http.StatusTooManyRequests}, status)
	}
	require.Equal(t, 1.0, metricstest.Value(t, reg, "timetable_cpu_slots", nil), "the server publishes its pool")
	require.Positive(t, metricstest.Value(t, reg, "timetable_cpu_slots_taken_total", nil), "they took the pool's slot")
	require.Zero(t, metricstest.Value(t, reg, "timetable_cpu_slots_held", nil), "and gave it back")
	require.Positive(t, limitedCounter(t, f), "counted in timetable_tenant_limited_total")
}

// limitedCounter returns the sum of timetable_tenant_limited_total.
func limitedCounter(t *testing.T, f *fixture) float64 {
	t.Helper()
	res := f.do("GET", "/metrics", "", nil)
	var sum float64
	for _, line := range strings.Split(string(res.body), "\n") {
		if rest, ok := strings.CutPrefix(line, "timetable_tenant_limited_total{"); ok {
			require.NotContains(t, rest, `tenant="acme"`, "names stay out of the labels")
			var v float64
			_, err := fmt.Sscanf(rest[strings.LastIndex(rest, " ")+1:], "%g", &v)
			require.NoError(t, err)
			sum += v
		}
	}
	return sum
}

// send sends a request and returns the status and body; errors fail the
// test from any goroutine.
func send(t *testing.T, method, u, key, body string) (int, []byte) {
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return 0, nil
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/x-ndjson")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, nil
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// One tenant's slow uploads hold at most its share of the body budget:
// another tenant's small writes all succeed meanwhile, and the slow
// tenant's own get 429.
func TestSlowUploadsOfOneTenantLeaveRoomForOthers(t *testing.T) {
	f := newFixture(t, server.Options{MaxBodyBytes: 1 << 20, MaxBodyBytesInFlight: 4 << 20, BodyBudgetWait: 50 * time.Millisecond})
	// Five uploads of acme send 800 KiB of a declared 1 MiB, and stall.
	var conns []net.Conn
	for range 5 {
		conns = append(conns, slowBodyOf(t, f, f.acme, 1<<20-1, 800<<10))
	}
	require.Eventually(t, func() bool {
		return f.postJSON(f.acme, "t", `[{"time":"2017-04-10T12:00:00Z","fields":{"v":1}}]`).status == http.StatusTooManyRequests
	}, 10*time.Second, 10*time.Millisecond, "acme holds its share")
	for i := range 50 {
		res := f.postNDJSON(f.globex, "small", ndjson(now.Add(-time.Hour+time.Duration(i)*time.Second), "g", 1))
		require.Equal(t, http.StatusOK, res.status, "globex's write %d: %s", i, res.body)
	}
	_ = conns
}

// TestTenantLimitsOnDynamoDB stores and applies tenant limits with the
// server on the DynamoDB backend.
func TestTenantLimitsOnDynamoDB(t *testing.T) {
	dynamoEndpoint(t)
	backend = backends.Dynamo()
	defer func() { backend = pebble() }()
	TestAdminTenantLimits(t)
}

// A tenant's write requests at work are at most its
// max_concurrent_writes: while two of acme's uploads hold its two turns,
// its next write waits, then is answered 429 naming the limit, another
// tenant's writes are served, and once the uploads end acme's writes go
// again.
func TestConcurrentWritesOfATenant(t *testing.T) {
	f := newFixture(t, server.Options{AdminToken: adminToken, BodyBudgetWait: 50 * time.Millisecond})
	res := f.do("PUT", "/v1/admin/tenants/acme/limits", adminToken, []byte(`{"max_concurrent_writes": 2}`), "Content-Type", "application/json")
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	uploads := []net.Conn{slowBodyOf(t, f, f.acme, 1000, 10), slowBodyOf(t, f, f.acme, 1000, 10)}
	usage := func() api.TenantUsage {
		var l api.Limits
		require.NoError(t, json.Unmarshal(f.do("GET", "/v1/admin/tenants/acme/limits", adminToken, nil).body, &l))
		return l.Usage
	}
	require.Eventually(t, func() bool { return usage().Writes == 2 }, 10*time.Second, 5*time.Millisecond, "the uploads hold acme's turns")

	res = f.postNDJSON(f.acme, "t", ndjson(now.Add(-time.Hour), "a", 1))
	require.Equal(t, http.StatusTooManyRequests, res.status, "body: %s", res.body)
	require.Contains(t, res.json(t)["error"], "max_concurrent_writes = 2")
	require.Equal(t, "1", res.header.Get("Retry-After"))
	for i := range 5 {
		res := f.postNDJSON(f.globex, "t", ndjson(now.Add(-time.Hour+time.Duration(i)*time.Second), "g", 1))
		require.Equal(t, http.StatusOK, res.status, "globex's write %d: %s", i, res.body)
	}

	for _, c := range uploads {
		c.Close()
	}
	require.Eventually(t, func() bool { return usage().Writes == 0 }, 10*time.Second, 5*time.Millisecond, "the uploads gave their turns back")
	res = f.postNDJSON(f.acme, "t", ndjson(now.Add(-time.Hour), "a", 1))
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	require.Contains(t, string(f.do("GET", "/metrics", "", nil).body), `limit="max_concurrent_writes"`)
}
