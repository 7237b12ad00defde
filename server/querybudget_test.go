package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/storage"
)

// gate is a store that holds back the reads of series "slow" until it is
// opened, and says when the first one starts waiting.
type gate struct {
	storage.Store
	waiting chan struct{}
	once    sync.Once
	open    chan struct{}
}

func (g *gate) Query(ctx context.Context, q storage.Query) storage.Iterator {
	if strings.Contains(q.PK, "#slow#") {
		g.once.Do(func() { close(g.waiting) })
		select {
		case <-g.open:
		case <-ctx.Done():
		}
	}
	return g.Store.Query(ctx, q)
}

// While reads of every series hold the whole query budget, a further
// one is answered 503 with Retry-After once it has waited, a read of one
// series is answered all the same, and once the budget is given back the
// further one succeeds.
func TestQueryBudget(t *testing.T) {
	inner, cfg := backends.Pebble().Open(t)
	store := &gate{Store: inner, waiting: make(chan struct{}), open: make(chan struct{})}
	reg := prometheus.NewRegistry()
	// One partition: any read of every series takes all of it; acme may
	// hold the whole budget, so what it meets is the budget full.
	f := newFixtureEngine(t, store, cfg, reg, server.Options{TenantShare: 1},
		engine.Options{MaxQueryPartitions: 1, QueryBudgetWait: 20 * time.Millisecond})
	// Cleanups run last first: the gate opens before the server closes,
	// should the test fail with a read waiting.
	openGate := sync.OnceFunc(func() { close(store.open) })
	t.Cleanup(openGate)
	key, srvURL := f.acme, f.url
	for _, w := range []struct{ table, series string }{{"t", "fast"}, {"t", "slow"}, {"u", "any"}} {
		res := f.postNDJSON(key, w.table, ndjson(now.Add(-time.Hour), w.series, 5))
		require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	}
	params := func(series string) url.Values {
		p := rangeParams(now.Add(-2*time.Hour), now)
		p.Set("order", "desc")
		p.Set("limit", "10")
		if series != "" {
			p.Set("series", series)
		}
		return p
	}

	// A latest-10 of every series of t takes the budget, and waits on the
	// read of series slow.
	heavy := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("GET", srvURL+"/v1/tables/t/events?"+params("").Encode(), nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			heavy <- 0
			return
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		heavy <- res.StatusCode
	}()
	<-store.waiting

	busy := f.get(key, "u", params(""))
	require.Equal(t, http.StatusServiceUnavailable, busy.status, "body: %s", busy.body)
	require.Equal(t, "1", busy.header.Get("Retry-After"))
	require.Contains(t, busy.json(t)["error"], "busy with reads of every series; retry the request")

	// A read of one series takes nothing from the budget.
	light := f.getPage(key, "t", params("fast"))
	require.Len(t, light.Events, 5)

	openGate()
	require.Equal(t, http.StatusOK, <-heavy)
	after := f.getPage(key, "u", params(""))
	require.Len(t, after.Events, 5)

	metrics := f.do("GET", "/metrics", "", nil)
	require.Contains(t, string(metrics.body), "timetable_query_budget_exhausted_total 1\n")
	require.Contains(t, string(metrics.body), "timetable_query_budget_partitions 0\n")
}

// A tenant's reads of every series hold at most its query partitions:
// while one of acme's holds them, acme's next is answered 429 naming
// max_query_partitions with Retry-After once it has waited, another
// tenant's reads of every series are served from the rest of the budget,
// the admin API shows what acme holds, and once acme's read is done its
// next succeeds.
func TestTenantQueryPartitions(t *testing.T) {
	inner, cfg := backends.Pebble().Open(t)
	store := &gate{Store: inner, waiting: make(chan struct{}), open: make(chan struct{})}
	reg := prometheus.NewRegistry()
	f := newFixtureEngine(t, store, cfg, reg, server.Options{AdminToken: adminToken},
		engine.Options{MaxQueryPartitions: 1000, QueryBudgetWait: 20 * time.Millisecond})
	openGate := sync.OnceFunc(func() { close(store.open) })
	t.Cleanup(openGate)
	acme, globex, srvURL, db := f.acme, f.globex, f.url, f.db
	res := f.do("PUT", "/v1/admin/tenants/acme/limits", adminToken, []byte(`{"max_query_partitions": 5}`), "Content-Type", "application/json")
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	for _, w := range []struct{ key, table, series string }{{acme, "t", "fast"}, {acme, "t", "slow"}, {acme, "u", "any"}, {globex, "t", "any"}} {
		res := f.postNDJSON(w.key, w.table, ndjson(now.Add(-time.Hour), w.series, 5))
		require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	}
	params := rangeParams(now.Add(-2*time.Hour), now)
	params.Set("order", "desc")
	params.Set("limit", "10")

	// acme's latest ten of every series of t needs more than its five
	// partitions: it runs alone among acme's reads, and waits on series
	// slow.
	heavy := make(chan int, 1)
	go func() {
		status, _ := send(t, "GET", srvURL+"/v1/tables/t/events?"+params.Encode(), acme, "")
		heavy <- status
	}()
	<-store.waiting

	res = f.get(acme, "u", params)
	require.Equal(t, http.StatusTooManyRequests, res.status, "body: %s", res.body)
	require.Contains(t, res.json(t)["error"], "max_query_partitions = 5")
	require.NotEmpty(t, res.header.Get("Retry-After"))
	// The same over InfluxQL.
	res = f.do("GET", "/query?"+url.Values{"db": {"u"}, "q": {"SELECT * FROM u"}}.Encode(), acme, nil)
	require.Equal(t, http.StatusTooManyRequests, res.status, "body: %s", res.body)
	require.Contains(t, string(res.body), "max_query_partitions")

	// globex is served from the rest of the budget.
	require.Len(t, f.getPage(globex, "t", params).Events, 5)

	res = f.do("GET", "/v1/admin/tenants/acme/limits", adminToken, nil)
	var l api.Limits
	require.NoError(t, json.Unmarshal(res.body, &l))
	require.Equal(t, 5, l.Effective.MaxQueryPartitions)
	require.Positive(t, l.Usage.QueryPartitions)
	require.Equal(t, int64(5), l.Usage.QueryPartitionsShare)

	openGate()
	require.Equal(t, http.StatusOK, <-heavy)
	require.Len(t, f.getPage(acme, "u", params).Events, 5)
	held, _ := db.QueryPartitions("acme")
	require.Zero(t, held)
	metrics := f.do("GET", "/metrics", "", nil)
	require.Contains(t, string(metrics.body), `limit="max_query_partitions"`)
	require.Contains(t, string(metrics.body), "timetable_query_budget_exhausted_total 0\n")
}
