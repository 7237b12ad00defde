package archive_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/internal/duckdbtest"
	"github.com/timetabledb/timetable/registry"
)

// TestParquetArchive archives a table of both layouts, two tenants, two
// logical tables, series index entries and rollups in Parquet, and reads
// the Parquet file with DuckDB, hive partitions and all: its rows are the
// events queries return, their sums agree to the digit, its columns have
// their types. Restore still reads the NDJSON back exactly.
func TestParquetArchive(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			s, cfg := b.Open(t)
			now := time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC)
			fam := cfg.Families[0]
			cfg.Families[0].Shards = 2
			cfg.Tables = map[string]family.Table{
				"m": {Family: fam.Name, Layout: family.LayoutMap},
				"r": {Family: fam.Name, Layout: family.LayoutRow, Rollups: true},
			}
			db, err := engine.Open(ctx, s, engine.Options{Schema: cfg, Clock: clock.NewManual(now), Rollups: true})
			require.NoError(t, err)
			t.Cleanup(func() { db.Close() })

			from, to := time.Date(2017, 4, 1, 0, 0, 0, 0, time.UTC), now
			speed, count := new(big.Rat), int64(0)
			var events []event.Event
			for _, tenant := range []string{"acme", "globex"} {
				for _, table := range []string{"m", "r"} {
					var evs []event.Event
					for i := range 25 {
						evs = append(evs, event.Event{
							Time:   time.Date(2017, 4, 10, 12, 0, i, 123456789, time.UTC),
							Series: fmt.Sprintf("car-%d", i%3),
							Fields: map[string]any{"speed": json.Number(fmt.Sprintf("%d.%02d", 80+i, i)), "count": json.Number(fmt.Sprint(i * 7)),
								"gear": "D", "on": i%2 == 0, "stops": []any{json.Number("1"), "depot"}},
						})
					}
					_, err := db.Write(ctx, tenant, table, evs)
					require.NoError(t, err)
					page, err := db.Query(ctx, tenant, engine.Query{Table: table, From: from, To: to, Limit: 100})
					require.NoError(t, err)
					require.Len(t, page.Events, 25)
					for _, e := range page.Events {
						r, _ := new(big.Rat).SetString(string(e.Fields["speed"].(json.Number)))
						speed.Add(speed, r)
						n, _ := e.Fields["count"].(json.Number).Int64()
						count += n
					}
					events = append(events, page.Events...)
				}
			}
			day := time.Date(2017, 4, 10, 0, 0, 0, 0, time.UTC)
			_, err = db.Aggregate(ctx, "acme", engine.AggregateQuery{Table: "r", From: day, To: day.Add(24*time.Hour - 1), Bucket: time.Hour, Fields: []string{"speed"}, Funcs: []string{engine.FnSum}})
			require.NoError(t, err)
			// The events went to the table of this write month.
			tables, err := db.Tables(ctx)
			require.NoError(t, err)
			i := slices.IndexFunc(tables, func(e engine.TableStatus) bool { return e.WriteMonth == "2017-06" })
			require.GreaterOrEqual(t, i, 0)
			table := tables[i]

			url, dir := fileTarget(t)
			a, err := archive.Open(ctx, url, s, archive.Options{Format: family.ArchiveParquet,
				Facts: registry.New(s, cmp.Or(cfg.MetaTable, engine.DefaultMetaTable)).Finder([]string{fam.Name})})
			require.NoError(t, err)
			require.NoError(t, a.Archive(ctx, table.Name))
			m, err := a.Manifest(ctx, table.Name)
			require.NoError(t, err)
			require.True(t, m.Verified())
			require.Len(t, m.Parquet, 1)
			key := fmt.Sprintf("%s/period=%s/write_month=%s/%s-g1-s0-1.parquet", fam.Name, table.PeriodStart.Format(time.RFC3339), table.WriteMonth, table.Name)
			require.Equal(t, key, m.Parquet[0].Key)
			require.EqualValues(t, len(events), m.Parquet[0].Rows)
			require.Greater(t, m.ItemCount, int64(len(events))/2, "the NDJSON holds every item; map items hold one event each here, rows one")

			files := "read_parquet(" + duckdbtest.Quote(filepath.Join(dir, "**", "*.parquet")) + ", hive_partitioning = true)"
			rs := duckdbtest.Query(t,
				"DESCRIBE SELECT * FROM "+files,
				"SELECT count(*) AS n, sum(speed)::VARCHAR AS speed, sum(count) AS count, count(DISTINCT id) AS ids, "+
					"any_value(period)::VARCHAR AS period, any_value(write_month) AS write_month, count(*) FILTER (WHERE gear = 'D' AND json_extract(fields_json, '$.stops[1]') = '\"depot\"') AS depot FROM "+files,
				"SELECT tenant, \"table\", count(*) AS n FROM "+files+" GROUP BY ALL ORDER BY ALL",
				// The README's example.
				"SELECT \"table\", date_trunc('day', time)::VARCHAR AS day, count(*) AS n, sum(speed)::VARCHAR AS speed FROM "+files+
					" WHERE tenant = 'acme' AND period >= '2017-04-01' GROUP BY ALL ORDER BY ALL",
			)
			types := map[string]string{}
			for _, r := range rs[0].Rows {
				types[r["column_name"].(string)] = r["column_type"].(string)
			}
			require.Equal(t, map[string]string{
				"tenant": "VARCHAR", "table": "VARCHAR", "time": "TIMESTAMP WITH TIME ZONE", "series": "VARCHAR", "id": "VARCHAR",
				"count": "BIGINT", "gear": "VARCHAR", "on": "BOOLEAN", "speed": "DECIMAL(38,9)", "fields_json": "JSON",
				"period": types["period"], "write_month": "VARCHAR",
			}, types)
			require.Contains(t, []string{"TIMESTAMP WITH TIME ZONE", "TIMESTAMP", "VARCHAR"}, types["period"])
			got := rs[1].Rows[0]
			duckSpeed, ok := new(big.Rat).SetString(got["speed"].(string))
			require.True(t, ok)
			require.Equal(t, speed.String(), duckSpeed.String(), "DuckDB's sum of an exact decimal column")
			require.Equal(t, fmt.Sprint(count), got["count"])
			require.Equal(t, fmt.Sprint(len(events)), got["n"])
			require.Equal(t, fmt.Sprint(len(events)), got["ids"])
			require.Equal(t, fmt.Sprint(len(events)), got["depot"])
			require.Equal(t, table.WriteMonth, got["write_month"])
			require.Contains(t, got["period"], table.PeriodStart.Format("2006-01-02"))
			require.Equal(t, []map[string]any{
				{"tenant": "acme", "table": "m", "n": "25"}, {"tenant": "acme", "table": "r", "n": "25"},
				{"tenant": "globex", "table": "m", "n": "25"}, {"tenant": "globex", "table": "r", "n": "25"},
			}, rs[2].Rows)

			require.Equal(t, []map[string]any{
				{"table": "m", "day": "2017-04-10 00:00:00+00", "n": "25", "speed": "2303.000000000"},
				{"table": "r", "day": "2017-04-10 00:00:00+00", "n": "25", "speed": "2303.000000000"},
			}, rs[3].Rows)

			// Restore reads the NDJSON: every event is back.
			require.NoError(t, db.Close())
			require.NoError(t, backends.Drop(ctx, s, table.Name))
			require.NoError(t, a.Restore(ctx, table.Name, ""))
			db = openEngine(t, s, cfg, now)
			page, err := db.Query(ctx, "acme", engine.Query{Table: "m", From: from, To: to, Limit: 100})
			require.NoError(t, err)
			require.Equal(t, events[:25], page.Events)
		})
	}
}

// TestParquetDamaged finds a Parquet file that does not match its
// manifest, and makes it again when the archive is not yet verified.
func TestParquetDamaged(t *testing.T) {
	ctx := context.Background()
	s, cfg := backends.Pebble().Open(t)
	f := cfg.Families[0]
	table := f.Prefix + "1491696000000_1492300799000_4_2017"
	makeTable(t, s, table, 30)
	facts := registered(t, s, f, table, "cold")
	url, dir := fileTarget(t)
	a, err := archive.Open(ctx, url, s, archive.Options{Format: family.ArchiveParquet, Facts: facts})
	require.NoError(t, err)
	require.NoError(t, a.Archive(ctx, table))
	m, err := a.Manifest(ctx, table)
	require.NoError(t, err)
	require.Len(t, m.Parquet, 1)
	require.EqualValues(t, 31, m.Parquet[0].Rows, "30 events and one with a value of every type")

	p := filepath.Join(dir, filepath.FromSlash(m.Parquet[0].Key))
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	data[len(data)/2] ^= 0xff
	require.NoError(t, os.WriteFile(p, data, 0o644))
	require.ErrorIs(t, a.Verify(ctx, table), archive.ErrMismatch)
	require.NoError(t, os.Remove(p))
	require.ErrorIs(t, a.Verify(ctx, table), archive.ErrNotFound)

	// An NDJSON export, not verified, of a family now archived in
	// Parquet is exported again, Parquet and all.
	nd, err := archive.Open(ctx, url, s, archive.Options{Format: family.ArchiveNDJSON, Facts: facts})
	require.NoError(t, err)
	require.NoError(t, nd.Archive(ctx, table))
	m, err = nd.Manifest(ctx, table)
	require.NoError(t, err)
	require.Empty(t, m.Parquet)
	m.VerifiedAt = nil
	b, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, table, archive.ManifestObject), b, 0o644))
	require.NoError(t, a.Archive(ctx, table))
	m, err = a.Manifest(ctx, table)
	require.NoError(t, err)
	require.True(t, m.Verified())
	require.Len(t, m.Parquet, 1)
	require.FileExists(t, p)
}

// TestParquetToS3 archives in Parquet to an S3 bucket: the hive
// partitions' keys ("=", ":") go through the SDK and back, and listing
// the archives passes over the Parquet folders.
func TestParquetToS3(t *testing.T) {
	ctx := context.Background()
	s, cfg := backends.Pebble().Open(t)
	f := cfg.Families[0]
	table := f.Prefix + "1491696000000_1492300799000_4_2017"
	makeTable(t, s, table, 10)
	url, opts := s3Target(t)
	opts.Format, opts.Facts = family.ArchiveParquet, registered(t, s, f, table, "cold")
	a, err := archive.Open(ctx, url, s, opts)
	require.NoError(t, err)
	require.NoError(t, a.Archive(ctx, table))
	require.NoError(t, a.Verify(ctx, table))
	m, err := a.Manifest(ctx, table)
	require.NoError(t, err)
	require.Equal(t, f.Name+"/period=2017-04-09T00:00:00Z/write_month=2017-04/"+table+"-g1-s0-0.parquet", m.Parquet[0].Key)
	ms, err := a.List(ctx)
	require.NoError(t, err)
	require.Len(t, ms, 1)
}
