package server_test

import (
	"context"
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
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	db, err := engine.Open(ctx, store, engine.Options{
		Schema: cfg, Clock: clock.NewManual(now), Registerer: reg,
		// One partition: any read of every series takes all of it.
		MaxQueryPartitions: 1, QueryBudgetWait: 20 * time.Millisecond,
	})
	require.NoError(t, err)
	key, err := db.Tenants().Add(ctx, "acme", now)
	require.NoError(t, err)
	handler, err := server.New(db, server.Options{Registry: reg, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	srv := httptest.NewServer(handler)
	t.Cleanup(func() {
		srv.Close()
		require.NoError(t, db.Close())
	})
	// Cleanups run last first: the gate opens before the server closes,
	// should the test fail with a read waiting.
	openGate := sync.OnceFunc(func() { close(store.open) })
	t.Cleanup(openGate)
	f := &fixture{t: t, url: srv.URL, db: db, acme: key}
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
		req, _ := http.NewRequest("GET", srv.URL+"/v1/tables/t/events?"+params("").Encode(), nil)
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
