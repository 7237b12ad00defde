package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/server"
)

// TestArchivedSeriesOverHTTP asks, through the HTTP API, for a table's
// series list and InfluxQL's SHOW TAG VALUES, SHOW SERIES and a mean
// filtered by the series tag, before and after the lifecycle archived and
// deleted the week that alone holds most of its series: the answers are
// the same, read from the archive's Parquet.
func TestArchivedSeriesOverHTTP(t *testing.T) {
	store, cfg := backend.Open(t)
	cfg.Families[0].WriteTimeGrouping = false
	families := append([]family.Family(nil), cfg.Families...)
	families[0].Retention = 36 * time.Hour
	families[0].Archive = "file://" + t.TempDir()
	reader := archive.NewReader(archive.ReaderOptions{CacheDir: t.TempDir()})
	t.Cleanup(func() { reader.Close() })
	f := newFixtureEngine(t, store, cfg, prometheus.NewRegistry(), server.Options{}, engine.Options{Archives: reader})

	old := now.Add(-16 * 24 * time.Hour).Truncate(24 * time.Hour)
	var body strings.Builder
	for i := range 90 {
		fmt.Fprintf(&body, `{"time": %q, "series": "dev-%d", "fields": {"temp": %d}}`+"\n", old.Add(time.Duration(i)*10*time.Minute).Format(time.RFC3339), i%3, i)
	}
	fmt.Fprintf(&body, `{"time": %q, "series": "dev-9", "fields": {"temp": 1}}`+"\n", now.Add(-time.Hour).Format(time.RFC3339))
	res := f.postNDJSON(f.acme, "legacy", body.String())
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)

	from, to := old.Add(-time.Hour).Format(time.RFC3339), old.Add(24*time.Hour).Format(time.RFC3339)
	queries := []string{
		`SHOW TAG VALUES FROM legacy WITH KEY = "series"`,
		`SHOW SERIES FROM legacy`,
		fmt.Sprintf(`SELECT mean(temp) FROM legacy WHERE "series" = 'dev-1' AND time >= '%s' AND time < '%s' GROUP BY time(30m)`, from, to),
		fmt.Sprintf(`SELECT count(temp) FROM legacy WHERE "series" =~ /dev-[02]/ AND time >= '%s' AND time < '%s' GROUP BY "series"`, from, to),
	}
	answers := func() []string {
		t.Helper()
		var out []string
		for _, path := range []string{"/v1/tables/legacy/series", "/v1/tables/legacy/series?limit=2", "/v1/tables/legacy/series?prefix=dev-1"} {
			r := f.do("GET", path, f.acme, nil)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			out = append(out, string(r.body))
		}
		for _, q := range queries {
			r := f.do("GET", "/query?"+url.Values{"q": {q}, "db": {"acme"}}.Encode(), f.acme, nil)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			require.NotContains(t, string(r.body), `"error"`, q)
			out = append(out, string(r.body))
		}
		return out
	}
	before := answers()
	require.Contains(t, before[0], `"dev-0","dev-1","dev-2","dev-9"`)
	require.Contains(t, before[3], `["series","dev-1"]`)
	require.Contains(t, before[5], `"mean"`)
	require.Regexp(t, `"2017-05-30T00:30:00Z",\d`, before[5], "a bucket of dev-1 has a mean")

	clk := clock.NewManual(now)
	// The archiver learns the table's family and period from the registry
	// (an endpoint without tagging, DynamoDB Local, keeps no tags).
	facts := registry.New(store, f.db.Options().Schema.MetaTable).Finder([]string{cfg.Families[0].Name})
	r, err := lifecycle.New(lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: families, MetaTable: cfg.MetaTable, Clock: clk,
		Logger: slog.New(slog.DiscardHandler), Registerer: prometheus.NewRegistry(),
		OpenArchiver: func(target string, format family.ArchiveFormat) (lifecycle.Archiver, error) {
			return archive.Open(context.Background(), target, store, archive.Options{Clock: clk, Format: format, Facts: facts, Logger: slog.New(slog.DiscardHandler)})
		}})
	require.NoError(t, err)
	for range 2 { // archived, then deleted
		_, err = r.Reconcile(context.Background(), false)
		require.NoError(t, err)
	}
	entries, err := registry.New(store, f.db.Options().Schema.MetaTable).List(context.Background(), cfg.Families[0].Name)
	require.NoError(t, err)
	deleted := 0
	for _, e := range entries {
		if e.State == registry.Deleted {
			deleted++
			require.True(t, e.Ref.Period.Overlaps(old, old.Add(24*time.Hour)), "the old week's table, %s", e.Name)
		}
	}
	require.Equal(t, 1, deleted, "the old week's table is archived and deleted")

	f.clock.Advance(time.Minute) // past the InfluxQL series cache's TTL
	after := answers()
	require.Equal(t, before, after)
}
