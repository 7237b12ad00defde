package server_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/storage"
)

// versionReads counts the reads of the table registry's versions.
type versionReads struct {
	storage.Store
	meta  string
	reads atomic.Int64
}

func (s *versionReads) GetItem(ctx context.Context, table, pk, sk string) (storage.Item, error) {
	if table == s.meta && strings.HasPrefix(pk, "registryversion#") {
		s.reads.Add(1)
	}
	return s.Store.GetItem(ctx, table, pk, sk)
}

// An aggregate request and its gaps read the registry's version once
// between them (engine.WithCatalogSnapshot), and each request reads it
// again: a table made since the last request is seen.
func TestARequestReadsTheCatalogOnce(t *testing.T) {
	store, cfg := backend.Open(t)
	counted := &versionReads{Store: store, meta: backends.MetaTable(cfg)}
	f := newFixtureOn(t, counted, cfg, prometheus.NewRegistry(), server.Options{})
	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "cars", ndjson(now.Add(-time.Hour), "car-1", 3)).status)
	params := url.Values{"from": {now.Add(-90 * 24 * time.Hour).Format(time.RFC3339)}, "to": {now.Format(time.RFC3339)},
		"bucket": {"1d"}, "fn": {"count"}}
	for range 2 {
		counted.reads.Store(0)
		res := f.do(http.MethodGet, "/v1/tables/cars/aggregate?"+params.Encode(), f.acme, nil)
		require.Equal(t, http.StatusOK, res.status, string(res.body))
		require.Equal(t, int64(1), counted.reads.Load())
	}
	// A table of an earlier period, made after: the next request sees it.
	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "cars", ndjson(now.Add(-60*24*time.Hour), "car-1", 2)).status)
	res := f.do(http.MethodGet, "/v1/tables/cars/aggregate?"+params.Encode(), f.acme, nil)
	require.Equal(t, http.StatusOK, res.status, string(res.body))
	require.Len(t, res.json(t)["buckets"], 2)
}
