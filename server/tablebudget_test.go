package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/server"
)

// weeklyBody is n events a week apart, as NDJSON, the last an hour ago.
func weeklyBody(n int, last time.Time) string {
	var b strings.Builder
	for i := range n {
		at := last.Add(-time.Duration(n-1-i) * 7 * 24 * time.Hour)
		fmt.Fprintf(&b, `{"time": %q, "series": "s", "fields": {"v": %d}}`+"\n", at.Format(time.RFC3339), i)
	}
	return b.String()
}

// TestTableBudget is the tester's request over HTTP (2,969 weekly events
// since 1970 made as many tables; 2,400 since 1970 here). Each limit of the table budget answers
// a 4xx naming its setting, and a refused request writes nothing.
func TestTableBudget(t *testing.T) {
	t.Run("backfill horizon", func(t *testing.T) {
		f := newFixture(t, server.Options{})
		res := f.postNDJSON(f.acme, "cars", weeklyBody(2400, now.Add(-time.Hour)))
		require.Equal(t, http.StatusBadRequest, res.status, "%s", res.body)
		body := res.json(t)
		problems := body["problems"].([]any)
		require.Len(t, problems, 2400-53, "every event older than a year, and only those")
		require.Contains(t, problems[0].(map[string]any)["reason"], "older than the backfill horizon of 365d (backfill_horizon")
		res = f.get(f.acme, "cars", wide)
		require.Equal(t, http.StatusNotFound, res.status, "nothing written: %s", res.body)
	})
	t.Run("new tables per request and per tenant and hour", func(t *testing.T) {
		store, cfg := backend.Open(t)
		f := newFixtureBudget(t, store, cfg, prometheus.NewRegistry(), server.Options{},
			engine.TableBudget{BackfillHorizon: engine.NoBackfillHorizon, MaxNewTablesPerRequest: 10, MaxNewTablesPerTenantHour: 12})
		res := f.postNDJSON(f.acme, "cars", weeklyBody(2400, now.Add(-time.Hour)))
		require.Equal(t, http.StatusBadRequest, res.status, "%s", res.body)
		require.Contains(t, res.json(t)["error"], "over the 10 a request may make (new_tables.per_request")

		require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "cars", weeklyBody(8, now.Add(-time.Hour))).status)
		res = f.postNDJSON(f.acme, "cars", weeklyBody(8, now.Add(-9*7*24*time.Hour)))
		require.Equal(t, http.StatusTooManyRequests, res.status, "%s", res.body)
		require.Equal(t, "3600", res.header.Get("Retry-After"))
		require.Contains(t, res.json(t)["error"], "new_tables.per_tenant_hour")
		require.Len(t, f.all(f.acme, "cars", rangeParams(time.Unix(0, 0), now)), 8, "what was written stays, and nothing more")
	})
	t.Run("a line protocol body is one request over all its measurements", func(t *testing.T) {
		store, cfg := backend.Open(t)
		f := newFixtureBudget(t, store, cfg, prometheus.NewRegistry(), server.Options{},
			engine.TableBudget{BackfillHorizon: engine.NoBackfillHorizon, MaxNewTablesPerRequest: 10, MaxNewTablesPerTenantHour: 12})
		tables := func() int {
			n := 0
			require.NoError(t, store.ListTables(context.Background(), cfg.Families[0].Prefix, func(name string) bool {
				if strings.HasPrefix(name, cfg.Families[0].Prefix) {
					n++
				}
				return true
			}))
			return n
		}
		// Measurements m0 to m<n-1>, each of three weeks of its own.
		body := func(measurements, from int) string {
			var b strings.Builder
			for m := range measurements {
				for w := range 3 {
					at := now.Add(-time.Hour - time.Duration(from+3*m+w)*7*24*time.Hour)
					fmt.Fprintf(&b, "m%d,s=a v=%d %d\n", m, w, at.Unix())
				}
			}
			return b.String()
		}
		write := func(body string) response {
			return f.do("POST", "/write?precision=s", "", []byte(body), "Authorization", "Token "+f.acme)
		}
		measured := func(m int) int {
			return f.get(f.acme, fmt.Sprintf("m%d", m), wide).status
		}

		// Four measurements of three weeks: twelve new tables, though
		// each measurement makes three.
		res := write(body(4, 0))
		require.Equal(t, http.StatusBadRequest, res.status, "%s", res.body)
		require.Contains(t, res.json(t)["error"], "12 new physical tables, over the 10 a request may make (new_tables.per_request")
		require.Zero(t, tables(), "a refused body makes no table")
		for m := range 4 {
			require.Equal(t, http.StatusNotFound, measured(m), "nothing written")
		}

		// Three measurements fit; then the hour has room for three
		// tables, and a body that needs six writes none.
		res = write(body(3, 0))
		require.Equal(t, http.StatusNoContent, res.status, "%s", res.body)
		made := tables()
		require.Equal(t, 9, made)
		res = write(body(2, 20))
		require.Equal(t, http.StatusTooManyRequests, res.status, "%s", res.body)
		require.Equal(t, "3600", res.header.Get("Retry-After"))
		require.Contains(t, res.json(t)["error"], "new_tables.per_tenant_hour")
		require.Equal(t, made, tables(), "a refused body makes no table")
		res = f.get(f.acme, "m0", rangeParams(now.Add(-30*7*24*time.Hour), now.Add(-18*7*24*time.Hour)))
		require.Equal(t, http.StatusOK, res.status, "%s", res.body)
		require.Empty(t, res.json(t)["events"], "and writes none of its lines")

		// A body whose tables exist is never refused.
		res = write(body(3, 0))
		require.Equal(t, http.StatusNoContent, res.status, "%s", res.body)
	})
}
