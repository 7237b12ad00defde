package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestQueryBucketsGolden(t *testing.T) {
	store, _ := seeded(t)
	base := []string{"query", store, "--tenant", "acme", "--table", "a_table", "--from", "2017-01-01T00:00:00Z", "--to", "2017-06-16T00:00:00Z", "--bucket", "1d", "--fields", "speed", "--fn", "count,sum,avg,max,last"}
	for _, format := range []string{"table", "json", "csv"} {
		t.Run(format, func(t *testing.T) {
			r := mustRun(t, "", append(base, "--format", format)...)
			goldenFile(t, "query/buckets."+map[string]string{"table": "txt", "json": "json", "csv": "csv"}[format], r.stdout)
		})
	}
	// Calendar months, filled; sums exact, averages to six digits in a
	// table (the JSON and CSV keep 38).
	r := mustRun(t, "", "query", store, "--tenant", "acme", "--table", "a_table", "--from", "2017-01-01T00:00:00Z", "--to", "2017-06-16T00:00:00Z", "--bucket", "1mo", "--fields", "speed", "--fn", "count,sum,avg", "--fill")
	goldenFile(t, "query/buckets-months.txt", r.stdout)
	r = run(t, "", "query", store, "--tenant", "acme", "--table", "a_table", "--from", "2017-01-01T00:00:00Z", "--to", "2017-06-16T00:00:00Z", "--bucket", "2mo", "--fields", "speed")
	require.ErrorContains(t, r.err, `--bucket "2mo": use a duration that divides a day (1m, 1h, 1d), 1w or week:<weekday> for weeks, 1mo for months, or quarter`)
	r = run(t, "", "query", store, "--tenant", "acme", "--table", "a_table", "--from", "2017-01-01T00:00:00Z", "--to", "2017-06-16T00:00:00Z", "--bucket", "7m", "--fields", "speed")
	require.Error(t, r.err)
	require.ErrorContains(t, r.err, "does not divide a day")
	r = run(t, "", "query", store, "--tenant", "acme", "--table", "a_table", "--from", "2017-01-01T00:00:00Z", "--to", "2017-06-16T00:00:00Z", "--bucket", "1h", "--fn", "sum")
	require.Error(t, r.err)
	require.True(t, strings.Contains(r.err.Error(), "--fields"), r.err)
	// A filter picks the events summarised.
	r = mustRun(t, "", "query", store, "--tenant", "acme", "--table", "a_table", "--from", "2017-01-01T00:00:00Z", "--to", "2017-06-16T00:00:00Z", "--bucket", "1mo", "--fields", "speed", "--fn", "count,max", "--filter", `speed < 50`)
	goldenFile(t, "query/buckets-filtered.txt", r.stdout)
	// Grouped by series, every group's rows, the group first.
	r = mustRun(t, "", "query", store, "--tenant", "acme", "--table", "a_table", "--from", "2017-01-01T00:00:00Z", "--to", "2017-06-16T00:00:00Z", "--bucket", "1mo", "--fields", "speed", "--fn", "count,max,p50", "--group-by", "series", "--format", "csv")
	goldenFile(t, "query/buckets-grouped.csv", r.stdout)
	r = run(t, "", "query", store, "--tenant", "acme", "--table", "a_table", "--from", "0", "--to", "1", "--group-by", "series")
	require.ErrorContains(t, r.err, "--group-by applies to aggregates")
	// Count alone counts events, and needs no field.
	r = mustRun(t, "", "query", store, "--tenant", "acme", "--table", "a_table", "--from", "2017-01-01T00:00:00Z", "--to", "2017-06-16T00:00:00Z", "--bucket", "1d", "--format", "json")
	require.Contains(t, r.stdout, `"events"`)
}
