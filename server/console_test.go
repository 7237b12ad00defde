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
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/client"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/compact"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/storage"
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
	// The lifecycle archives tables a day and a half past their period
	// to a folder: the week of globex's old event below is archived by
	// the first cycle the test runs, and deleted by the second. Tables
	// are grouped by period alone, so that a week past is past retention
	// whenever it was written.
	cfg.Families[0].WriteTimeGrouping = false
	families := slices.Clone(cfg.Families)
	families[0].Retention = 36 * time.Hour
	families[0].Archive = "file://" + t.TempDir()
	// The lifecycle's metrics are on the server's /metrics, as serve
	// puts them.
	reg := prometheus.NewRegistry()
	r, err := lifecycle.New(lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: families, MetaTable: cfg.MetaTable, Clock: clock.NewManual(now),
		Logger: slog.New(slog.DiscardHandler), Registerer: reg,
		OpenArchiver: func(target string, format family.ArchiveFormat) (lifecycle.Archiver, error) {
			return archive.Open(context.Background(), target, store, archive.Options{Clock: clock.NewManual(now), Format: format, Logger: slog.New(slog.DiscardHandler)})
		}})
	require.NoError(t, err)
	f := newFixtureOn(t, store, cfg, reg, server.Options{AdminToken: adminToken, Lifecycle: r, StoreKind: "pebble"})
	start := now.Add(-3 * 24 * time.Hour).Truncate(time.Hour)
	var body strings.Builder
	for i := range 300 {
		fmt.Fprintf(&body, `{"time": %q, "series": "dev-%03d", "fields": {"temp": %d}}`+"\n", start.Add(time.Duration(i)*time.Minute).Format(time.RFC3339), i, i)
	}
	for i := range 3 * 24 * 6 { // car-17: every ten minutes for three days
		fmt.Fprintf(&body, `{"time": %q, "series": "car-17", "fields": {"speed": %d, "rpm": %d, "gear": "D"}}`+"\n", start.Add(time.Duration(i)*10*time.Minute).Format(time.RFC3339), i%97, 1000+i)
	}
	res := f.postNDJSON(f.acme, "cars", body.String())
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	res = f.postNDJSON(f.acme, "other", fmt.Sprintf(`{"time": %q, "series": "other-1", "fields": {"v": 1}}`, start.Format(time.RFC3339)))
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	res = f.postNDJSON(f.globex, "old", fmt.Sprintf(`{"time": %q, "series": "old-1", "fields": {"v": 1}}`, now.Add(-16*24*time.Hour).Format(time.RFC3339)))
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	lastEvent := start.Add(time.Duration(3*24*6-1) * 10 * time.Minute)
	// busy: 6,000 events of three series, one every 10 s: more than a
	// raw page of 5,000.
	body.Reset()
	const busyEvents = 6000
	for i := range busyEvents {
		fmt.Fprintf(&body, `{"time": %q, "series": "m-%d", "fields": {"v": %d}}`+"\n", start.Add(time.Duration(i)*10*time.Second).Format(time.RFC3339), i%3, i)
	}
	res = f.postNDJSON(f.acme, "busy", body.String())
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	busyNewest := start.Add((busyEvents - 1) * 10 * time.Second)
	// The first cycle archives the old week's table, the second deletes
	// it: the Archives section lists it still, its period read from the
	// archive.
	for range 2 {
		_, err = r.Reconcile(context.Background(), false)
		require.NoError(t, err)
	}
	rewritten := rewriteTwice(t, store, cfg)

	shots := screenshots(t)
	long := [2]time.Time{start, start.Add(3*24*time.Hour - time.Second)}
	short := [2]time.Time{start.Add(time.Hour), start.Add(3 * time.Hour)}
	local := func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05") }
	// The event the page's auto-refresh must show, in table other,
	// beside other-1's one event.
	newTime, newValue := start.Add(30*time.Minute), 500.0
	arg, err := json.Marshal(map[string]any{
		"url": f.url, "key": f.acme, "admin": adminToken, "tenant": "acme", "table": "cars", "table2": "other", "prefix": "car", "series": "car-17",
		"field": "speed", "field2": "rpm", "unit": "km/h",
		"from": local(long[0]), "to": local(long[1]), "rawFrom": local(short[0]), "rawTo": local(short[1]), "shots": shots,
		"refreshSeries": "other-1", "refreshField": "v", "refreshFrom": local(start), "refreshTo": local(short[1]),
		"newTime": newTime.Format(time.RFC3339), "newValue": newValue,
		"topField": "temp", "topFilter": "temp >= 295", "topFrom": local(start), "topTo": local(start.Add(6 * time.Hour)),
		"busy": "busy", "busyFrom": local(start), "busyTo": local(start.Add(busyEvents * 10 * time.Second)),
	})
	require.NoError(t, err)
	out := driveConsole(t, arg)
	var got struct {
		TablePick struct {
			Series int        `json:"series"`
			Field  string     `json:"field"`
			To     string     `json:"to"`
			Points int        `json:"points"`
			Error  string     `json:"error"`
			Chart  chartState `json:"chart"`
		} `json:"tablePick"`
		Top            chartState `json:"top"`
		TopByCount     chartState `json:"topByCount"`
		Hidden         []string   `json:"hidden"`
		HiddenAfter    []string   `json:"hiddenAfter"`
		Filtered       chartState `json:"filtered"`
		FilteredEvents []string   `json:"filteredEvents"`
		Zoomed         chartState `json:"zoomed"`
		Restored       struct {
			chartState
			Field string `json:"field"`
		} `json:"restored"`
		Pasted  chartState `json:"pasted"`
		Busy    chartState `json:"busy"`
		BusyRaw struct {
			chartState
			First, Count, Total string
		} `json:"busyRaw"`
		BusyOlder struct {
			chartState
			First, Count string
			Older, Newer bool
		} `json:"busyOlder"`
		EventsCaption   string          `json:"eventsCaption"`
		Operator        operatorFigures `json:"operator"`
		PlannerHeadline struct {
			Text, Total string
		} `json:"plannerHeadline"`
		SeriesShown []string `json:"seriesShown"`
		EventRows   int      `json:"eventRows"`
		Aggregate   struct {
			Mode   string  `json:"mode"`
			Bucket string  `json:"bucket"`
			Points []point `json:"points"`
			chartAxes
		} `json:"aggregate"`
		Tooltip string `json:"tooltip"`
		Two     struct {
			Mode   string             `json:"mode"`
			Bucket string             `json:"bucket"`
			Lines  map[string][]point `json:"lines"`
			Legend []string           `json:"legend"`
			YTitle string             `json:"yTitle"`
		} `json:"two"`
		Events       []point   `json:"events"`
		EventsMode   string    `json:"eventsMode"`
		EventsAxes   chartAxes `json:"eventsAxes"`
		UnknownField struct {
			Error   string `json:"error"`
			Circles int    `json:"circles"`
			Caption string `json:"caption"`
			Hidden  bool   `json:"chartHidden"`
		} `json:"unknownField"`
		Inverted struct {
			Error   string `json:"error"`
			Circles int    `json:"circles"`
		} `json:"inverted"`
		Preset struct {
			From, To, Now string
		} `json:"preset"`
		OtherTable struct {
			Prefix string   `json:"prefix"`
			Series []string `json:"series"`
		} `json:"otherTable"`
		Tiers         map[string]string `json:"tiers"`
		ArchivedCells []string          `json:"archivedCells"`
		Plan          int               `json:"planActions"`
		Planner       string            `json:"plannerPeriod"`
		Metrics       map[string]string `json:"metrics"`
		Tenants       []string          `json:"tenants"`
		Keys          struct {
			Added, Rotated, AddedID, Newest string
			Before                          int
			States                          map[string]string
		} `json:"keys"`
		Refresh struct {
			Before      []point `json:"before"`
			After       []point `json:"after"`
			PlotsBefore int     `json:"plotsBefore"`
			PlotsAfter  int     `json:"plotsAfter"`
		} `json:"refresh"`
		Archives    int `json:"archives"`
		ArchiveRows []struct {
			Table, State, Target string
			Cells                []string
		} `json:"archiveRows"`
		OperatorError string   `json:"operatorError"`
		WrongKey      string   `json:"wrongKey"`
		Errors        []string `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	t.Logf("screenshots in %s", shots)
	require.Empty(t, got.Errors, "the page logged errors")

	// Picking a table lists its series and charts its newest day, which
	// ends after the newest event, at the first numeric field.
	require.Equal(t, 100, got.TablePick.Series, "a page of the table's series, none picked")
	require.Equal(t, "rpm", got.TablePick.Field, "the first numeric field of the newest events")
	require.Empty(t, got.TablePick.Error)
	require.Positive(t, got.TablePick.Points)
	to, err := time.Parse(time.RFC3339, got.TablePick.To)
	require.NoError(t, err)
	require.True(t, to.After(lastEvent), "the window %s ends after the newest event %s", to, lastEvent)
	// Of every series, aggregated by default, the newest event on the
	// chart: the one series with rpm, its newest bucket holding it.
	require.Equal(t, "aggregate", got.TablePick.Chart.Mode)
	require.Equal(t, []string{"car-17"}, got.TablePick.Chart.Legend)
	got.TablePick.Chart.holds(t, lastEvent)

	// Every series, the top 10 by value (dev-i's temp is i, one event a
	// minute from start): dev-299 … dev-290, the 290 others one grey
	// line, their avg together; the bucket from the range (6h / 450
	// points: 1m); the newest event on the chart.
	require.Equal(t, "aggregate", got.Top.Mode)
	require.Equal(t, "1m", got.Top.Bucket)
	var wantTop []string
	for i := 299; i >= 290; i-- {
		wantTop = append(wantTop, fmt.Sprintf("dev-%03d", i))
	}
	require.Equal(t, wantTop, got.Top.Legend)
	require.Equal(t, "290 other series, 290 events: the grey line is their avg together", got.Top.Others)
	require.Len(t, got.Top.Lines, 11)
	others := 0
	for _, l := range got.Top.Lines {
		if l.Other {
			others++
			require.Equal(t, 290, l.Points, "one bucket a minute of the others")
		} else {
			require.Equal(t, 1, l.Points, l.Label)
		}
	}
	require.Equal(t, 1, others)
	got.Top.holds(t, start.Add(299*time.Minute))
	require.Contains(t, got.Top.Caption, "the top 10 of 300 series by mean avg of temp")
	// A click on a legend item hides its line, another shows it.
	require.Equal(t, []string{"dev-299"}, got.Hidden)
	require.Empty(t, got.HiddenAfter)
	// By events, ties in name order.
	require.Equal(t, []string{"dev-000", "dev-001", "dev-002", "dev-003", "dev-004", "dev-005", "dev-006", "dev-007", "dev-008", "dev-009"}, got.TopByCount.Legend)

	// A filter keeps the events it holds for: five series, no others.
	require.Equal(t, []string{"dev-299", "dev-298", "dev-297", "dev-296", "dev-295"}, got.Filtered.Legend)
	require.Empty(t, got.Filtered.Others)
	require.Contains(t, got.Filtered.Hash, "filter=temp")
	require.Equal(t, []string{"dev-299", "dev-298", "dev-297", "dev-296", "dev-295"}, got.FilteredEvents, "the events table follows the chart's range and filter, newest first")

	// Dragging across the middle half of the chart zooms to it.
	zf, zt := got.Zoomed.rng(t)
	require.WithinDuration(t, start.Add(90*time.Minute), zf, 2*time.Minute)
	require.WithinDuration(t, start.Add(270*time.Minute), zt, 2*time.Minute)
	require.Len(t, got.Zoomed.Legend, 10)
	for _, c := range []chartState{got.Top, got.Zoomed, got.Busy} {
		require.GreaterOrEqual(t, c.YTop, c.VTop, "the value axis spans every point")
	}
	for _, s := range got.Zoomed.Legend {
		var i int
		_, err := fmt.Sscanf(s, "dev-%d", &i)
		require.NoError(t, err)
		m := start.Add(time.Duration(i) * time.Minute)
		require.True(t, !m.Before(zf) && !m.After(zt), "%s outside the zoomed range", s)
	}
	require.Contains(t, got.Zoomed.Hash, "table=cars")
	// Its link, opened in a fresh page and signed in, shows the same view.
	require.Equal(t, "temp", got.Restored.Field)
	require.Equal(t, got.Zoomed.From, got.Restored.From)
	require.Equal(t, got.Zoomed.To, got.Restored.To)
	require.Equal(t, got.Zoomed.Legend, got.Restored.Legend)
	require.Equal(t, got.Zoomed.Last, got.Restored.Last)
	// Another link pasted into the signed-in page opens its view.
	require.Equal(t, got.Zoomed.Legend[:5], got.Pasted.Legend)
	require.Contains(t, got.Pasted.Hash, "top=5")

	// A busy table's range: aggregated, its newest event is on the chart
	// (6,000 events; the console once drew the oldest 5,000 alone).
	require.Equal(t, "5m", got.Busy.Bucket, "16h40m / 450 points, rounded up")
	require.Equal(t, []string{"m-2", "m-1", "m-0"}, got.Busy.Legend, "by mean value")
	got.Busy.holds(t, busyNewest)
	// Raw, a page of the newest 5,000 events, said so, the newest drawn;
	// the next page the 1,000 older ones.
	require.Equal(t, "events", got.BusyRaw.Mode)
	rawLast, err := time.Parse(time.RFC3339Nano, got.BusyRaw.Last)
	require.NoError(t, err)
	require.Equal(t, busyNewest, rawLast.UTC(), "the newest event is the chart's newest point")
	require.Equal(t, []string{"1", "5000", "6000"}, []string{got.BusyRaw.First, got.BusyRaw.Count, got.BusyRaw.Total})
	require.Contains(t, got.BusyRaw.Caption, "raw events 1–5,000 of the newest 6,000 in the range, from "+start.Add(1000*10*time.Second).Format(time.RFC3339)+" to "+busyNewest.Format(time.RFC3339))
	require.Equal(t, []string{"5001", "1000"}, []string{got.BusyOlder.First, got.BusyOlder.Count})
	require.Contains(t, got.BusyOlder.Caption, "raw events 5,001–6,000 of the newest 6,000")
	require.False(t, got.BusyOlder.Older)
	require.True(t, got.BusyOlder.Newer)

	require.Equal(t, []string{"car-17"}, got.SeriesShown, "the prefix search finds the one car among 300 devices")
	require.Equal(t, 50, got.EventRows)
	require.Equal(t, "aggregate", got.Aggregate.Mode)
	got.Aggregate.check(t, long[0], long[1], got.Aggregate.Points, "01-02 15:04")
	require.Equal(t, "avg of speed (km/h)", got.Aggregate.YTitle)
	require.Regexp(t, `^2017-\d\d-\d\d \d\d:\d\d(:\d\d)? UTC — speed: [\d.]+ km/h$`, got.Tooltip)

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

	// Two fields, max per 6h: both lines are the API's aggregate.
	require.Equal(t, "aggregate", got.Two.Mode)
	require.Equal(t, "6h", got.Two.Bucket)
	require.Equal(t, []string{"speed", "rpm"}, got.Two.Legend)
	require.Equal(t, "max of speed, rpm (km/h)", got.Two.YTitle)
	agg, err = acme.Aggregate(ctx, "cars", api.AggregateQuery{From: long[0], To: long[1], Series: "car-17", Bucket: "6h",
		Fields: []string{"speed", "rpm"}, Funcs: []string{"max"}})
	require.NoError(t, err)
	for _, field := range []string{"speed", "rpm"} {
		var want []point
		for _, b := range agg.Buckets {
			v, err := b.Values[field]["max"].(json.Number).Float64()
			require.NoError(t, err)
			want = append(want, point{b.Start.Format(time.RFC3339Nano), v})
		}
		require.Equal(t, want, got.Two.Lines[field], field)
	}

	// The short range's chart is the events.
	want = nil
	for _, e := range f.all(f.acme, "cars", with(with(rangeParams(short[0], short[1]), "series", "car-17"), "fields", "speed")) {
		want = append(want, point{e.Time, e.Fields["speed"].(float64)})
	}
	require.NotEmpty(t, want)
	require.Equal(t, want, got.Events)
	require.Equal(t, "events", got.EventsMode)
	require.Contains(t, got.EventsCaption, fmt.Sprintf("raw events 1–%d of the newest %d in the range", len(want), len(want)))
	got.EventsAxes.check(t, short[0], short[1], got.Events, "15:04")
	require.Equal(t, "speed (km/h)", got.EventsAxes.YTitle)

	// Errors replace the chart and its caption.
	require.Contains(t, got.UnknownField.Error, `no numeric values of "nope" of series "car-17"`)
	require.Zero(t, got.UnknownField.Circles)
	require.Empty(t, got.UnknownField.Caption)
	require.True(t, got.UnknownField.Hidden, "the message stands in the chart's place")
	require.Contains(t, got.Inverted.Error, "is after to")
	require.Zero(t, got.Inverted.Circles)
	// A preset ends now; another table starts with an empty prefix box.
	presetTo, err := time.Parse(time.RFC3339, got.Preset.To)
	require.NoError(t, err)
	browserNow, err := time.Parse(time.RFC3339Nano, got.Preset.Now)
	require.NoError(t, err)
	require.WithinDuration(t, browserNow, presetTo, time.Minute)
	presetFrom, err := time.Parse(time.RFC3339, got.Preset.From)
	require.NoError(t, err)
	require.Equal(t, 24*time.Hour, presetTo.Sub(presetFrom))
	require.Empty(t, got.OtherTable.Prefix)
	require.Equal(t, []string{"other-1"}, got.OtherTable.Series)

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
	// The headline is the recommended plan's bill, what `timetable plan`
	// recommends.
	var costs struct {
		Bill struct{ Total float64 }
		Cost struct {
			Recommended, ProvisionedTiers struct{ Total float64 }
		} `json:"monthly_cost"`
	}
	require.NoError(t, json.Unmarshal(planner.Report, &costs))
	require.InDelta(t, costs.Cost.Recommended.Total, costs.Bill.Total, 0.005)
	require.Equal(t, strconv.FormatFloat(costs.Bill.Total, 'f', 2, 64), got.PlannerHeadline.Total)
	require.True(t, strings.HasPrefix(got.PlannerHeadline.Text, "Recommended: day tables"), got.PlannerHeadline.Text)
	require.Contains(t, got.WrongKey, "Neither an API key nor the admin token")

	// The server's metrics, tenants and keys, archives.
	require.Empty(t, got.OperatorError)
	written, err := strconv.Atoi(got.Metrics["events written"])
	require.NoError(t, err)
	require.GreaterOrEqual(t, written, 300+3*24*6+1)
	for _, m := range []string{"writes/s (events)", "HTTP errors (5xx)", "lifecycle cycles", "last lifecycle cycle"} {
		require.Contains(t, got.Metrics, m)
	}
	// Every figure resolves, and on Pebble nothing of DynamoDB's.
	require.Equal(t, "ok 2", got.Metrics["lifecycle cycles"], "the two cycles run above, by their result")
	require.NotContains(t, got.Metrics, "DynamoDB throttles")
	for m, v := range got.Metrics {
		require.NotContains(t, v, "?", m)
	}
	require.Equal(t, "pebble", got.Operator.Store)
	require.Equal(t, []string{"table", "family", "tier", "state", "stored in", "rewrite"}, got.Operator.Columns,
		"no billing, capacity nor items on Pebble; where a rewritten table is, and its rewrite that failed")
	// The table rewritten into NAME.r1 says so, and that its rewrite into
	// NAME.r2 did not verify: why, and when the next may start.
	require.Len(t, got.Operator.Rows, len(tables))
	for i, tb := range tables {
		row := got.Operator.Rows[i]
		require.Equal(t, tb.Name, row.Table)
		cells := got.Operator.Cells[i*6 : (i+1)*6]
		if tb.Name != rewritten {
			require.Empty(t, row.Physical, tb.Name)
			require.Empty(t, row.RewriteFailed, tb.Name)
			require.Equal(t, []string{"", ""}, cells[4:], tb.Name)
			continue
		}
		require.Equal(t, rewritten+".r1", tb.Physical)
		require.Equal(t, tb.Physical, row.Physical)
		require.Equal(t, tb.Physical, cells[4])
		require.Contains(t, tb.RewriteFailed, "1 rewrites into "+rewritten+".r2 did not verify")
		require.Contains(t, tb.RewriteFailed, "the next from "+now.Add(compact.FirstRetryDelay).UTC().Format(time.RFC3339))
		require.Equal(t, tb.RewriteFailed, row.RewriteFailed)
		require.Equal(t, "rewrite failed", row.Badge)
		require.Equal(t, "rewrite failed "+tb.RewriteFailed, cells[5])
	}
	for _, c := range got.Operator.Cells {
		require.NotEqual(t, "?", c)
		require.NotContains(t, c, "PAY_PER_REQUEST")
	}
	tenants, err := admin.Tenants(ctx)
	require.NoError(t, err)
	var names []string
	for _, tn := range tenants {
		names = append(names, tn.Name)
	}
	require.Equal(t, names, got.Tenants)
	keys, err := admin.Keys(ctx, "acme")
	require.NoError(t, err)
	states := map[string]string{}
	for _, k := range keys {
		states[k.ID] = k.State
	}
	require.Equal(t, states, got.Keys.States, "the keys the page shows are the API's")
	require.Len(t, keys, got.Keys.Before+2, "one added, one made by its rotation")
	require.Equal(t, "expiring", states[got.Keys.AddedID], "rotated with a grace")
	require.Equal(t, "revoked", states[got.Keys.Newest])
	require.NotEmpty(t, got.Keys.Added)
	require.NotEqual(t, got.Keys.Added, got.Keys.Rotated)
	archived := 0
	for _, tb := range tables {
		if tb.ArchiveTarget != "" {
			archived++
			require.Equal(t, "deleted", tb.State, "archived and deleted by the second cycle")
		}
	}
	require.Equal(t, archived, got.Archives)
	// The archived table is listed with where its archive is.
	var withArchive []string
	for _, tb := range tables {
		if tb.ArchiveTarget != "" {
			withArchive = append(withArchive, tb.Name)
			require.Equal(t, families[0].Archive, tb.ArchiveTarget)
		}
	}
	require.NotEmpty(t, withArchive, "the cycle archived the oldest day")
	var listed []string
	for _, row := range got.ArchiveRows {
		listed = append(listed, row.Table)
		require.Equal(t, "deleted", row.State)
		require.Equal(t, families[0].Archive, row.Target)
		require.Contains(t, row.Cells, families[0].Archive, "the archive's location is shown")
		require.Contains(t, row.Cells, now.Format(time.RFC3339), "and when it was made")
	}
	require.Equal(t, withArchive, listed)
	require.Equal(t, withArchive, got.ArchivedCells, "the timeline marks the deleted table's period as read from its archive")

	// The auto-refresh plotted again by itself, and the new event is in
	// the chart.
	require.Greater(t, got.Refresh.PlotsAfter, got.Refresh.PlotsBefore)
	require.Len(t, got.Refresh.After, len(got.Refresh.Before)+1)
	require.NotContains(t, got.Refresh.Before, point{T: newTime.Format(time.RFC3339), V: newValue})
	require.Contains(t, got.Refresh.After, point{T: newTime.Format(time.RFC3339), V: newValue})
}

// chartState is what the console's chart shows: its mode and bucket,
// the time of its newest point (and the end of that point's bucket),
// the range, the legend, the lines, the caption and the URL's hash.
type chartState struct {
	Mode    string   `json:"mode"`
	Bucket  string   `json:"bucket"`
	Last    string   `json:"last"`
	LastEnd string   `json:"lastEnd"`
	From    string   `json:"from"`
	To      string   `json:"to"`
	Legend  []string `json:"legend"`
	Others  string   `json:"others"`
	Lines   []struct {
		Label  string `json:"label"`
		Other  bool   `json:"other"`
		Points int    `json:"points"`
	} `json:"lines"`
	Caption string `json:"caption"`
	Error   string `json:"error"`
	Hash    string `json:"hash"`
	// YTop is the top value tick, VTop the highest point.
	YTop float64 `json:"yTop"`
	VTop float64 `json:"vTop"`
}

// holds checks that the chart's newest point is the bucket holding
// newest: the newest event of the range is on the chart.
func (c chartState) holds(t *testing.T, newest time.Time) {
	t.Helper()
	require.Empty(t, c.Error)
	last, err := time.Parse(time.RFC3339Nano, c.Last)
	require.NoError(t, err, "the chart's data-last")
	end, err := time.Parse(time.RFC3339Nano, c.LastEnd)
	require.NoError(t, err, "the chart's data-last-end")
	require.True(t, !newest.Before(last) && newest.Before(end), "the newest event %s is in the chart's newest bucket [%s, %s)", newest, last, end)
}

// rng is the range the chart's form shows.
func (c chartState) rng(t *testing.T) (time.Time, time.Time) {
	t.Helper()
	from, err := time.Parse(time.RFC3339, c.From)
	require.NoError(t, err)
	to, err := time.Parse(time.RFC3339, c.To)
	require.NoError(t, err)
	return from, to
}

// rewriteTwice rewrites the family's live table (the week of the
// console's events) into its next generation, NAME.r1, as a compaction
// does, then again into NAME.r2 through a store that loses what it
// writes there: that rewrite does not verify, and the entry records why
// and when the next may start. It returns the table's name.
func rewriteTwice(t *testing.T, store storage.Store, cfg family.Schema) string {
	t.Helper()
	ctx := context.Background()
	entries := registry.New(store, backends.MetaTable(cfg))
	es, err := entries.List(ctx, cfg.Families[0].Name)
	require.NoError(t, err)
	var live []registry.Entry
	for _, e := range es {
		if e.State.Live() {
			live = append(live, e)
		}
	}
	require.Len(t, live, 1, "the console's events are in one week")
	e, err := entries.Save(ctx, compact.AsChunks(live[0], time.Hour))
	require.NoError(t, err)
	e, _, err = compact.Entry(ctx, store, entries, e, now, compact.Options{Method: compact.NextGeneration})
	require.NoError(t, err)
	require.Equal(t, e.Name+".r1", e.TableName())
	_, _, err = compact.Entry(ctx, losing{store}, entries, e, now, compact.Options{Method: compact.NextGeneration})
	require.ErrorIs(t, err, compact.ErrVerify)
	return e.Name
}

// losing is a store whose writes to a rewrite's new table are lost.
type losing struct{ storage.Store }

func (s losing) BatchWrite(ctx context.Context, table string, items []storage.Item) error {
	if strings.HasSuffix(table, ".r2") {
		return nil
	}
	return s.Store.BatchWrite(ctx, table, items)
}

// operatorFigures is what the operator view shows of the store.
type operatorFigures struct {
	Store   string   `json:"store"`
	Columns []string `json:"columns"`
	Cells   []string `json:"cells"`
	Rows    []struct {
		Table, Physical, RewriteFailed, Badge string
	} `json:"rows"`
	Metrics map[string]string `json:"metrics"`
}

// chartAxes are the ticks and titles of the console's chart.
type chartAxes struct {
	XTicks []struct {
		T     string `json:"t"`
		Label string `json:"label"`
	} `json:"xTicks"`
	YTicks []struct {
		V     float64 `json:"v"`
		Label string  `json:"label"`
	} `json:"yTicks"`
	XTitle string `json:"xTitle"`
	YTitle string `json:"yTitle"`
}

// check holds the axes to the range and the points: time ticks in order
// inside [from, to], each labelled with its UTC time in layout; value
// ticks in order, labelled with their value, spanning every point.
func (a chartAxes) check(t *testing.T, from, to time.Time, points []point, layout string) {
	t.Helper()
	require.Equal(t, "time (UTC)", a.XTitle)
	require.GreaterOrEqual(t, len(a.XTicks), 3)
	require.LessOrEqual(t, len(a.XTicks), 10)
	prev := time.Time{}
	for _, x := range a.XTicks {
		at, err := time.Parse(time.RFC3339Nano, x.T)
		require.NoError(t, err)
		require.True(t, !at.Before(from) && !at.After(to), "tick %s outside the range", at)
		require.True(t, at.After(prev))
		require.Equal(t, at.UTC().Format(layout), x.Label)
		prev = at
	}
	require.GreaterOrEqual(t, len(a.YTicks), 3)
	lo, hi := points[0].V, points[0].V
	for _, p := range points {
		lo, hi = min(lo, p.V), max(hi, p.V)
	}
	for i, y := range a.YTicks {
		require.Equal(t, strconv.FormatFloat(y.V, 'f', -1, 64), y.Label)
		if i > 0 {
			require.Greater(t, y.V, a.YTicks[i-1].V)
		}
	}
	require.LessOrEqual(t, a.YTicks[0].V, lo)
	require.GreaterOrEqual(t, a.YTicks[len(a.YTicks)-1].V, hi)
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
	// 500 hourly tables in a request: over the default table budget.
	f := newFixtureBudget(t, store, cfg, prometheus.NewRegistry(), server.Options{AdminToken: adminToken, Lifecycle: r},
		engine.TableBudget{MaxNewTablesPerRequest: 500, MaxNewTablesPerTenantHour: 500})
	start := now.Add(-600 * time.Hour).Truncate(time.Hour)
	const series, tables = 100000, 500
	for lo := 0; lo < series; lo += 25000 {
		var body strings.Builder
		for i := lo; i < lo+25000; i++ {
			fmt.Fprintf(&body, `{"time": %q, "series": "dev-%06d", "fields": {"v": %d}}`+"\n", start.Add(time.Duration(i%tables)*time.Hour).Format(time.RFC3339), i, i)
		}
		res := f.postNDJSON(f.acme, "fleet", body.String())
		// A store slowed past the write timeout by a loaded machine
		// answers 503, which a client retries: the events' ids make the
		// retry write the same items.
		for retry := 0; res.status == http.StatusServiceUnavailable && retry < 5; retry++ {
			res = f.postNDJSON(f.acme, "fleet", body.String())
		}
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

// TestConsoleOperatorViewOnDynamoDB shows the operator view on DynamoDB:
// the store is said, the tables' billing and capacity shown in words,
// DynamoDB's throttles among the metrics, and every figure resolves.
func TestConsoleOperatorViewOnDynamoDB(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	store, cfg := backends.Dynamo().Open(t)
	reg := prometheus.NewRegistry()
	r, err := lifecycle.New(lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: cfg.Families, MetaTable: cfg.MetaTable, Clock: clock.NewManual(now),
		Logger: slog.New(slog.DiscardHandler), Registerer: reg})
	require.NoError(t, err)
	f := newFixtureOn(t, store, cfg, reg, server.Options{AdminToken: adminToken, Lifecycle: r, StoreKind: "dynamodb"})
	res := f.postNDJSON(f.acme, "cars", fmt.Sprintf(`{"time": %q, "series": "car-1", "fields": {"speed": 1}}`, now.Add(-time.Hour).Format(time.RFC3339)))
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	arg, err := json.Marshal(map[string]any{"operatorOnly": true, "url": f.url, "admin": adminToken, "shots": screenshots(t), "shot": "operator-dynamodb.png"})
	require.NoError(t, err)
	var got struct {
		Operator operatorFigures `json:"operator"`
		Errors   []string        `json:"errors"`
	}
	out := driveConsole(t, arg)
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	require.Empty(t, got.Errors)
	require.Equal(t, "dynamodb", got.Operator.Store)
	require.Equal(t, []string{"table", "family", "tier", "state", "billing", "read", "write"}, got.Operator.Columns[:7])
	require.Equal(t, "0", got.Operator.Metrics["DynamoDB throttles"])
	for m, v := range got.Operator.Metrics {
		require.NotContains(t, v, "?", m)
	}
	tables, err := client.New(f.url, adminToken, nil)
	require.NoError(t, err)
	physical, err := tables.PhysicalTables(context.Background())
	require.NoError(t, err)
	require.NotEmpty(t, physical)
	cols := len(got.Operator.Columns)
	require.Len(t, got.Operator.Cells, cols*len(physical))
	for i, tb := range physical {
		row := got.Operator.Cells[i*cols : (i+1)*cols]
		require.Equal(t, tb.Name, row[0])
		billing := map[string]string{"PAY_PER_REQUEST": "on demand", "PROVISIONED": "provisioned"}[tb.Billing]
		require.NotEmpty(t, billing, "billing %q", tb.Billing)
		require.Equal(t, billing, row[4])
		if tb.Billing == "PROVISIONED" {
			require.Equal(t, strconv.FormatInt(tb.ReadCapacity, 10), row[5])
			require.Equal(t, strconv.FormatInt(tb.WriteCapacity, 10), row[6])
		}
		if cols == 8 {
			if tb.ItemCount >= 0 {
				require.Equal(t, strconv.FormatInt(tb.ItemCount, 10), row[7])
			} else {
				require.Equal(t, "not counted yet", row[7])
			}
		}
	}
}
