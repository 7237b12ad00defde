package archive_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/influxql"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore/dynamofault"
)

// TestReaderAnswersAsBefore writes events over an old week and a recent
// one, records the answers of many queries and aggregates, lets the
// lifecycle archive and delete the old week's table, and asks again: the
// answers are the same, byte for byte, read from the archive's Parquet
// and merged with the live table. An engine without the archive reader says
// which part of the range is gone.
func TestReaderAnswersAsBefore(t *testing.T) {
	for _, b := range backends.All(t) {
		for _, tg := range targets {
			t.Run(b.Name+"/"+tg.name, func(t *testing.T) { testReader(t, b, tg.open) })
		}
	}
	// On DynamoDB with its own export (faked: the local servers have
	// none), the archive is the export, and answers the same.
	if os.Getenv(backends.EndpointEnv) != "" {
		t.Run("dynamodb-export/s3", func(t *testing.T) {
			var cp *dynamofault.ControlPlane
			b := backends.Backend{Name: "dynamodb-export", Open: func(t *testing.T) (storage.Store, family.Schema) {
				s, cfg, c := backends.OpenDynamoExports(t)
				cp = c
				return s, cfg
			}}
			testReader(t, b, s3Target)
			require.Equal(t, 1, cp.Calls()["ExportTableToPointInTime"], "archived by the store's export")
		})
	}
}

// TestReaderAnswersAsBeforeChunks is TestReaderAnswersAsBefore for a
// family of the chunk layout: the archive of a table of chunks holds
// their events, with the ids their rows would have, and answers every
// query, page and cursor as the chunks did.
func TestReaderAnswersAsBeforeChunks(t *testing.T) {
	for _, b := range backends.All(t) {
		chunked := backends.Backend{Name: b.Name, Open: func(t *testing.T) (storage.Store, family.Schema) {
			s, cfg := b.Open(t)
			cfg.Families[0].Layout = family.LayoutChunk
			cfg.Families[0].ChunkWindow = 6 * time.Hour
			return s, cfg
		}}
		t.Run(b.Name, func(t *testing.T) { testReader(t, chunked, targets[0].open) })
	}
}

func testReader(t *testing.T, b backends.Backend, open func(t *testing.T) (string, archive.Options)) {
	ctx := context.Background()
	s, cfg := b.Open(t)
	url, opts := open(t)
	archivedFamily(&cfg, url)
	old := time.Date(2017, 4, 10, 0, 0, 0, 0, time.UTC) // the week of April 9
	recent := old.Add(4 * 7 * 24 * time.Hour)
	clk := clock.NewManual(old.Add(24 * time.Hour))

	var evs []event.Event
	for _, start := range []time.Time{old, recent} {
		for i := range 60 {
			fields := map[string]any{
				"speed": json.Number(fmt.Sprintf("%d.%d", 80+i%7, i%10)),
				"count": json.Number(fmt.Sprint(i * 3)),
				"gear":  []string{"P", "R", "N", "D"}[i%4],
				"on":    i%3 == 0,
			}
			if i%5 == 0 {
				fields["raw"] = []byte{byte(i), 0xfe}
				fields["tags"] = []any{"a", json.Number("1.5"), map[string]any{"k": true}}
			}
			series := []string{"car-17", "car-18", "truck#1"}[i%3]
			if start == old && i%10 == 9 {
				// A series of the old week alone: only its archive lists it
				// once the table is deleted.
				series = "van-3"
			}
			evs = append(evs, event.Event{
				Time:   start.Add(time.Duration(i) * 37 * time.Minute).Add(time.Duration(i) * time.Microsecond),
				Series: series,
				Fields: fields,
			})
		}
	}
	archives := archive.NewReader(archive.ReaderOptions{S3: opts.S3, CacheDir: t.TempDir()})
	t.Cleanup(func() { archives.Close() })
	db, err := engine.Open(ctx, s, engine.Options{Schema: cfg, Clock: clk, Archives: archives})
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Write(ctx, "acme", "a_table", evs[:60])
	require.NoError(t, err)
	clk.Set(recent.Add(48 * time.Hour))
	_, err = db.Write(ctx, "acme", "a_table", evs[60:])
	require.NoError(t, err)

	from, to := old.Add(-time.Hour), recent.Add(72*time.Hour)
	gt := &storage.Filter{Op: storage.FilterGt, Attr: "speed", Value: json.Number("83")}
	queries := []engine.Query{
		{From: from, To: to},
		{From: from, To: to, Limit: 7},
		{From: from, To: to, Limit: 9, Desc: true},
		{From: from, To: to, Series: "car-17", Limit: 5},
		{From: from, To: to, Series: "truck#1", Desc: true},
		{From: old.Add(2 * time.Hour), To: old.Add(20 * time.Hour), Series: "car-18"},
		{From: from, To: to, Filter: gt, Limit: 11},
		{From: from, To: to, Fields: []string{"gear", "raw"}, Limit: 13},
		{From: from, To: to, Fields: []string{"gear"}, Filter: gt},
	}
	aggs := []engine.AggregateQuery{
		{From: from, To: to, Bucket: 24 * time.Hour, Fields: []string{"speed", "count"}, Funcs: []string{engine.FnCount, engine.FnSum, engine.FnMin, engine.FnMax, engine.FnAvg, engine.FnFirst, engine.FnLast}},
		{From: from, To: to, Series: "car-17", Bucket: time.Hour, Fields: []string{"speed"}, Funcs: []string{engine.FnSum, engine.FnP50, engine.FnDelta}},
		{From: from, To: to, Bucket: 24 * time.Hour, Fields: []string{"count"}, Funcs: []string{engine.FnSum}, GroupBy: "gear"},
	}
	// The series list, SHOW TAG VALUES and SHOW SERIES, and InfluxQL
	// filtered by the series tag, of the old week alone and of both.
	oldFrom, oldTo := old.Add(-time.Hour).Format(time.RFC3339), old.Add(7*24*time.Hour).Format(time.RFC3339)
	influx := []string{
		`SHOW TAG VALUES FROM a_table WITH KEY = "series"`,
		`SHOW SERIES FROM a_table`,
		`SHOW TAG VALUES FROM a_table WITH KEY = "series" WHERE "series" =~ /^(van|truck)/`,
		fmt.Sprintf(`SELECT mean(speed) FROM a_table WHERE "series" = 'van-3' AND time >= '%s' AND time < '%s' GROUP BY time(30m)`, oldFrom, oldTo),
		fmt.Sprintf(`SELECT mean(speed), count(count) FROM a_table WHERE "series" = 'car-17' AND time >= '%s' AND time < '%s' GROUP BY time(1d)`, from.Format(time.RFC3339), to.Format(time.RFC3339)),
		fmt.Sprintf(`SELECT max(speed) FROM a_table WHERE "series" =~ /^van|^car-18$/ AND time >= '%s' AND time < '%s' GROUP BY time(1d), "series"`, oldFrom, oldTo),
		fmt.Sprintf(`SELECT speed, gear FROM a_table WHERE "series" = 'van-3' AND time >= '%s' AND time < '%s'`, oldFrom, oldTo),
	}
	answers := func(db *engine.DB) []string {
		t.Helper()
		var out []string
		for _, q := range queries {
			q.Table = "a_table"
			pages := 0
			for {
				p, err := db.QueryJSON(ctx, "acme", q, nil)
				require.NoError(t, err)
				require.Empty(t, p.Gaps)
				out = append(out, fmt.Sprintf("%d %s %s", p.Count, p.Events, p.NextCursor))
				pages++
				if p.NextCursor == "" || pages > 40 {
					break
				}
				q.Cursor = p.NextCursor
			}
			q.Cursor = ""
			p, err := db.Query(ctx, "acme", q)
			require.NoError(t, err)
			js, err := json.Marshal(p)
			require.NoError(t, err)
			out = append(out, string(js))
		}
		for _, q := range aggs {
			q.Table = "a_table"
			var v any
			var err error
			if q.GroupBy != "" {
				v, err = db.AggregateGroups(ctx, "acme", q)
			} else {
				v, err = db.Aggregate(ctx, "acme", q)
			}
			require.NoError(t, err)
			js, err := json.Marshal(v)
			require.NoError(t, err)
			out = append(out, string(js))
		}
		for _, prefix := range []string{"", "car", "van"} {
			all, err := db.ListSeries(ctx, "acme", "a_table", prefix, "", 0)
			require.NoError(t, err)
			out = append(out, fmt.Sprintf("series %q: %q", prefix, all.Series))
			for after := ""; ; {
				p, err := db.ListSeries(ctx, "acme", "a_table", prefix, after, 1)
				require.NoError(t, err)
				out = append(out, fmt.Sprintf("series %q after %q: %q next %q", prefix, after, p.Series, p.Next))
				if p.Next == "" {
					break
				}
				after = p.Next
			}
		}
		for _, text := range influx {
			stmts, err := influxql.Parse(text, nil)
			require.NoError(t, err)
			res, errs := influxql.Execute(ctx, db, "acme", stmts, influxql.Options{Database: "acme"})
			for _, err := range errs {
				require.NoError(t, err, text)
			}
			require.NotEmpty(t, res[0].Series, text)
			js, err := json.Marshal(res)
			require.NoError(t, err)
			out = append(out, string(js))
		}
		return out
	}
	before := answers(db)
	require.Contains(t, before[0], `"car-17"`)
	require.Contains(t, before, `series "": ["car-17" "car-18" "truck#1" "van-3"]`)

	r, err := lifecycle.New(lifecycle.Options{Store: s, Families: cfg.Families, Clock: clk, MetaTable: cfg.MetaTable,
		Logger: slog.New(slog.DiscardHandler), OpenArchiver: func(target string, format family.ArchiveFormat) (lifecycle.Archiver, error) {
			o := opts
			o.Clock, o.Format, o.Facts = clk, format, registryFacts(s, cfg)
			return archive.Open(ctx, target, s, o)
		}})
	require.NoError(t, err)
	deleted := ""
	for range 6 {
		clk.Advance(registry.DefaultFenceSettle) // the fence settles
		res, err := r.Reconcile(ctx, false)
		require.NoError(t, err)
		for _, x := range res {
			if x.Kind == lifecycle.Delete && x.Err == nil {
				deleted = x.Table
			}
		}
	}
	require.NotEmpty(t, deleted, "the old week's table is archived and deleted")
	_, err = s.DescribeTable(ctx, deleted)
	require.ErrorIs(t, err, storage.ErrTableNotFound)

	week, err := db.Query(ctx, "acme", engine.Query{Table: "a_table", From: old, To: old.Add(7 * 24 * time.Hour)})
	require.NoError(t, err)
	require.Len(t, week.Events, 60, "the archived week, from its archive")
	after := answers(db)
	require.Equal(t, len(before), len(after))
	for i := range before {
		require.Equal(t, before[i], after[i], "answer %d", i)
	}

	// Without the archive reader, the archived week is a gap of the answer.
	plain, err := engine.Open(ctx, s, engine.Options{Schema: cfg, Clock: clk, ReadOnly: true})
	require.NoError(t, err)
	defer plain.Close()
	p, err := plain.Query(ctx, "acme", engine.Query{Table: "a_table", From: old, To: old.Add(24 * time.Hour)})
	require.NoError(t, err)
	require.Empty(t, p.Events)
	require.Len(t, p.Gaps, 1)
	require.Equal(t, deleted, p.Gaps[0].Table)
	require.Equal(t, old, p.Gaps[0].From)
	require.Equal(t, old.Add(24*time.Hour), p.Gaps[0].To)
	ag, err := plain.AggregateGaps(ctx, "acme", engine.AggregateQuery{Table: "a_table", From: old, To: old.Add(24 * time.Hour),
		Bucket: time.Hour, Fields: []string{"speed"}, Funcs: []string{engine.FnCount}})
	require.NoError(t, err)
	require.Len(t, ag, 1, "an aggregate names the gaps a page does")
	require.Equal(t, p.Gaps[0].Table, ag[0].Table)
	require.Equal(t, p.Gaps[0].From, ag[0].From)
	require.Equal(t, p.Gaps[0].Reason, ag[0].Reason)
	require.WithinDuration(t, p.Gaps[0].To, ag[0].To, time.Nanosecond, "cut to the aggregate's range, whose end is its last nanosecond")
	ag, err = db.AggregateGaps(ctx, "acme", engine.AggregateQuery{Table: "a_table", From: old, To: old.Add(24 * time.Hour),
		Bucket: time.Hour, Fields: []string{"speed"}, Funcs: []string{engine.FnCount}})
	require.NoError(t, err)
	require.Empty(t, ag, "the archive reader reads the archived week")

	// An archive the archive reader cannot read fails the query: it is not
	// an empty period.
	if strings.HasPrefix(url, "s3://") {
		notDir := filepath.Join(t.TempDir(), "a-file")
		require.NoError(t, os.WriteFile(notDir, nil, 0o600))
		broken := archive.NewReader(archive.ReaderOptions{S3: opts.S3, CacheDir: notDir})
		defer broken.Close()
		bdb, err := engine.Open(ctx, s, engine.Options{Schema: cfg, Clock: clk, Archives: broken, ReadOnly: true})
		require.NoError(t, err)
		defer bdb.Close()
		_, err = bdb.Query(ctx, "acme", engine.Query{Table: "a_table", From: old, To: old.Add(24 * time.Hour)})
		require.Error(t, err)
		_, err = bdb.QueryJSON(ctx, "acme", engine.Query{Table: "a_table", Series: "car-17", From: old, To: old.Add(24 * time.Hour)}, nil)
		require.Error(t, err)
	}
}

// registryFacts returns the registry's facts of a schema's tables, as
// the server gives an archiver.
func registryFacts(s storage.Store, cfg family.Schema) func(context.Context, string) (registry.Entry, bool, error) {
	var names []string
	for _, f := range cfg.Families {
		names = append(names, f.Name)
	}
	return registry.New(s, cfg.MetaTable).Finder(names)
}

// archivedFamily makes cfg's first family keep three weeks of tables
// and archive them to url, without write-time grouping, names the
// default meta table where cfg names none.
func archivedFamily(cfg *family.Schema, url string) {
	cfg.MetaTable = backends.MetaTable(*cfg)
	f := &cfg.Families[0]
	f.WriteTimeGrouping = false
	f.Retention = 3 * 7 * 24 * time.Hour
	f.Archive = url
}
