package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/client"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/server"
)

// TestConsoleInABrowser drives the web console in Debian's chromium
// (scripts/browser): signs in with an API key, finds a series among 300
// by prefix, charts a field over a long range (an aggregate) and a short
// one (events), and checks the points against the API's own answers;
// then signs in with the admin token and checks the tiers the timeline
// shows. Screenshots of both views go to artifacts/console.
func TestConsoleInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	if os.Getenv("TIMETABLE_TEST_BACKENDS") == "dynamodb" {
		t.Skip("the console runs on Pebble: the run of every test covers it")
	}

	store, cfg := backend.Open(t)
	r, err := lifecycle.New(lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: cfg.Families, MetaTable: cfg.MetaTable, Clock: clock.NewManual(now),
		Logger: slog.New(slog.DiscardHandler), Registerer: prometheus.NewRegistry()})
	require.NoError(t, err)
	f := newFixtureOn(t, store, cfg, prometheus.NewRegistry(), server.Options{AdminToken: adminToken, Lifecycle: r})
	start := now.Add(-3 * 24 * time.Hour).Truncate(time.Hour)
	var body strings.Builder
	for i := range 300 {
		fmt.Fprintf(&body, `{"time": %q, "series": "dev-%03d", "fields": {"temp": %d}}`+"\n", start.Add(time.Duration(i)*time.Minute).Format(time.RFC3339), i, i)
	}
	for i := range 3 * 24 * 6 { // car-17: every ten minutes for three days
		fmt.Fprintf(&body, `{"time": %q, "series": "car-17", "fields": {"speed": %d, "gear": "D"}}`+"\n", start.Add(time.Duration(i)*10*time.Minute).Format(time.RFC3339), i%97)
	}
	res := f.postNDJSON(f.acme, "cars", body.String())
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	_, err = r.Reconcile(context.Background(), false)
	require.NoError(t, err)

	shots := screenshots(t)
	long := [2]time.Time{start, start.Add(3*24*time.Hour - time.Second)}
	short := [2]time.Time{start.Add(time.Hour), start.Add(3 * time.Hour)}
	local := func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05") }
	arg, err := json.Marshal(map[string]string{
		"url": f.url, "key": f.acme, "admin": adminToken, "table": "cars", "prefix": "car", "series": "car-17", "field": "speed",
		"from": local(long[0]), "to": local(long[1]), "rawFrom": local(short[0]), "rawTo": local(short[1]), "shots": shots,
	})
	require.NoError(t, err)
	out := driveConsole(t, arg)
	var got struct {
		SeriesShown []string `json:"seriesShown"`
		EventRows   int      `json:"eventRows"`
		Aggregate   struct {
			Bucket string  `json:"bucket"`
			Points []point `json:"points"`
		} `json:"aggregate"`
		Events   []point           `json:"events"`
		Tiers    map[string]string `json:"tiers"`
		Plan     int               `json:"planActions"`
		Planner  string            `json:"plannerPeriod"`
		WrongKey string            `json:"wrongKey"`
		Errors   []string          `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	t.Logf("screenshots in %s", shots)
	require.Empty(t, got.Errors, "the page logged errors")
	require.Equal(t, []string{"car-17"}, got.SeriesShown, "the prefix search finds the one car among 300 devices")
	require.Equal(t, 50, got.EventRows)

	// The long range's chart is the API's aggregate, point for point.
	ctx := context.Background()
	acme, err := client.New(f.url, f.acme, nil)
	require.NoError(t, err)
	agg, err := acme.Aggregate(ctx, "cars", api.AggregateQuery{From: long[0], To: long[1], Series: "car-17", Bucket: got.Aggregate.Bucket,
		Fields: []string{"speed"}, Funcs: []string{"avg"}})
	require.NoError(t, err)
	require.NotEmpty(t, agg.Buckets)
	var want []point
	for _, b := range agg.Buckets {
		v, err := b.Values["speed"]["avg"].(json.Number).Float64()
		require.NoError(t, err)
		want = append(want, point{b.Start.Format(time.RFC3339Nano), v})
	}
	require.Equal(t, want, got.Aggregate.Points)

	// The short range's chart is the events.
	want = nil
	for _, e := range f.all(f.acme, "cars", with(with(rangeParams(short[0], short[1]), "series", "car-17"), "fields", "speed")) {
		want = append(want, point{e.Time, e.Fields["speed"].(float64)})
	}
	require.NotEmpty(t, want)
	require.Equal(t, want, got.Events)

	// The operator view shows every table with its tier.
	admin, err := client.New(f.url, adminToken, nil)
	require.NoError(t, err)
	tables, err := admin.PhysicalTables(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, tables)
	wantTiers := map[string]string{}
	for _, tb := range tables {
		wantTiers[tb.Name] = tb.Tier
	}
	require.Equal(t, wantTiers, got.Tiers)
	plan, err := admin.Plan(ctx)
	require.NoError(t, err)
	require.Equal(t, len(plan), got.Plan)
	// The planner's chart, for the AWS guide's 600 events a second of
	// 180 bytes: daily tables.
	planner, err := admin.Planner(ctx, api.PlannerQuery{Rate: 600, ItemBytes: 180, Retention: "90d"})
	require.NoError(t, err)
	var planned struct{ Period string }
	require.NoError(t, json.Unmarshal(planner.Report, &planned))
	require.Equal(t, "day", planned.Period)
	require.Equal(t, planned.Period, got.Planner)
	require.Contains(t, got.WrongKey, "Neither an API key nor the admin token")
}

// screenshots returns the folder the console tests save screenshots in.
func screenshots(t *testing.T) string {
	dir, err := filepath.Abs(filepath.Join("..", "artifacts", "console"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// driveConsole installs what scripts/browser/console.mjs needs and runs it
// with arg, returning what it printed.
func driveConsole(t *testing.T, arg []byte) []byte {
	t.Helper()
	install := exec.Command("../scripts/browser/install.sh")
	install.Stderr = os.Stderr
	dir, err := install.Output()
	require.NoError(t, err, "scripts/browser/install.sh")
	cmd := exec.Command("node", "../scripts/browser/console.mjs", string(arg))
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_DIR="+strings.TrimSpace(string(dir)))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err, "console.mjs: %s", out)
	return out
}

// TestConsoleAtScale gives the console 100,000 series in 500 hourly
// tables: the series search shows a page of 100 at a time, and the
// operator view every table in its timeline.
func TestConsoleAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	if os.Getenv("TIMETABLE_TEST_BACKENDS") == "dynamodb" {
		t.Skip("the console runs on Pebble: the run of every test covers it")
	}
	store, cfg := backend.Open(t)
	cfg.Families[0].Granularity = period.Granularity{Unit: period.Hour}
	cfg.Families[0].Retention = 0
	r, err := lifecycle.New(lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: cfg.Families, MetaTable: cfg.MetaTable, Clock: clock.NewManual(now),
		Logger: slog.New(slog.DiscardHandler), Registerer: prometheus.NewRegistry()})
	require.NoError(t, err)
	f := newFixtureOn(t, store, cfg, prometheus.NewRegistry(), server.Options{AdminToken: adminToken, Lifecycle: r})
	start := now.Add(-600 * time.Hour).Truncate(time.Hour)
	const series, tables = 100000, 500
	for lo := 0; lo < series; lo += 25000 {
		var body strings.Builder
		for i := lo; i < lo+25000; i++ {
			fmt.Fprintf(&body, `{"time": %q, "series": "dev-%06d", "fields": {"v": %d}}`+"\n", start.Add(time.Duration(i%tables)*time.Hour).Format(time.RFC3339), i, i)
		}
		res := f.postNDJSON(f.acme, "fleet", body.String())
		require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	}
	arg, err := json.Marshal(map[string]any{"scale": true, "url": f.url, "key": f.acme, "admin": adminToken,
		"table": "fleet", "prefix": "dev-099", "shots": screenshots(t)})
	require.NoError(t, err)
	var got struct {
		FirstPage int      `json:"firstPage"`
		TwoPages  []string `json:"twoPages"`
		Cells     int      `json:"cells"`
		Rows      int      `json:"rows"`
		Errors    []string `json:"errors"`
	}
	out := driveConsole(t, arg)
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	require.Empty(t, got.Errors)
	require.Equal(t, 100, got.FirstPage)
	require.Len(t, got.TwoPages, 200)
	for i, s := range got.TwoPages {
		require.Equal(t, fmt.Sprintf("dev-%06d", 99000+i), s)
	}
	require.Equal(t, tables, got.Cells)
	require.Equal(t, tables, got.Rows)
}

// point is a point of the console's chart.
type point struct {
	T string  `json:"t"`
	V float64 `json:"v"`
}
