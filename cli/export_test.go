package cli

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/internal/duckdbtest"
)

// exportStore returns a --store flag for a store whose table "big" holds
// 12,000 events, more than a page: a field that appears only on the last
// page, and a fraction on it in a field of integers until then.
func exportStore(t *testing.T) (store string, sumI int64, sumTemp string) {
	t.Helper()
	store = "--store=pebble:" + filepath.Join(t.TempDir(), "data")
	mustRun(t, "", "tenant", "add", "acme", store)
	var in strings.Builder
	for i := range 12_000 {
		fields := fmt.Sprintf(`"i": %d, "temp": 20.%02d`, i, i%100)
		switch {
		case i == 11_999:
			fields = `"i": 11999.5, "temp": 20.99`
		case i >= 11_000:
			fields += `, "late": "yes"`
		}
		fmt.Fprintf(&in, `{"time": %d, "series": "s%d", "fields": {%s}}`+"\n", 1497430800000+int64(i)*1000, i%3, fields)
		if i < 11_999 {
			sumI += int64(i)
		} else {
			sumI += 11_999 // and .5
		}
	}
	mustRun(t, in.String(), "write", store, "--tenant", "acme", "--table", "big")
	// 120 times 20 + 0.00 to 0.99: 12,000 × 20 + 120 × 49.5
	return store, sumI, "245940.00"
}

func TestQueryExport(t *testing.T) {
	backends.NoDynamoDB(t)
	store, sumI, sumTemp := exportStore(t)
	dir := t.TempDir()
	query := []string{"query", store, "--tenant", "acme", "--table", "big", "--from", "0", "--to", testNow}

	t.Run("parquet", func(t *testing.T) {
		out := filepath.Join(dir, "big.parquet")
		r := mustRun(t, "", append(query, "--format", "parquet", "--output", out)...)
		require.Empty(t, r.stdout)
		files := "read_parquet(" + duckdbtest.Quote(out) + ")"
		rs := duckdbtest.Query(t,
			"DESCRIBE SELECT * FROM "+files,
			"SELECT count(*) AS n, count(i) AS counted, sum(i)::VARCHAR AS i, sum(temp)::VARCHAR AS temp, count(DISTINCT series) AS series, "+
				"count(*) FILTER (WHERE late = 'yes') AS late, count(fields_json) AS json FROM "+files)
		types := map[string]string{}
		for _, r := range rs[0].Rows {
			types[r["column_name"].(string)] = r["column_type"].(string)
		}
		// The fraction on the last page makes i a decimal, and the field
		// first seen on the last page has its column: the schema is
		// learnt from every event, and nothing goes to fields_json.
		require.Equal(t, map[string]string{"time": "TIMESTAMP WITH TIME ZONE", "series": "VARCHAR", "id": "VARCHAR",
			"i": "DECIMAL(38,9)", "late": "VARCHAR", "temp": "DECIMAL(38,9)", "fields_json": "JSON"}, types)
		require.Equal(t, map[string]any{"n": "12000", "counted": "12000", "i": fmt.Sprint(sumI) + ".500000000",
			"temp": sumTemp + "0000000", "series": "3", "late": "999", "json": "0"}, rs[1].Rows[0])
	})

	t.Run("parquet of nothing", func(t *testing.T) {
		out := filepath.Join(dir, "none.parquet")
		mustRun(t, "", append(query, "--series", "none", "--format", "parquet", "--output", out)...)
		rs := duckdbtest.Query(t, "SELECT count(*) AS n FROM read_parquet("+duckdbtest.Quote(out)+")")
		require.Equal(t, "0", rs[0].Rows[0]["n"])
	})

	t.Run("ndjson", func(t *testing.T) {
		out := filepath.Join(dir, "big.ndjson")
		mustRun(t, "", append(query, "--format", "ndjson", "--output", out)...)
		f, err := os.Open(out)
		require.NoError(t, err)
		defer f.Close()
		sc := bufio.NewScanner(f)
		n := 0
		for sc.Scan() {
			var e struct {
				Time   string         `json:"time"`
				Fields map[string]any `json:"fields"`
			}
			require.NoError(t, json.Unmarshal(sc.Bytes(), &e), "line %d", n+1)
			n++
		}
		require.NoError(t, sc.Err())
		require.Equal(t, 12_000, n)
		// Without --output, to standard output.
		r := mustRun(t, "", append(query, "--format", "ndjson", "--limit", "3")...)
		require.Len(t, strings.Split(strings.TrimSpace(r.stdout), "\n"), 3)
	})

	t.Run("csv", func(t *testing.T) {
		out := filepath.Join(dir, "big.csv")
		mustRun(t, "", append(query, "--format", "csv", "--output", out)...)
		f, err := os.Open(out)
		require.NoError(t, err)
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		require.NoError(t, err)
		require.Len(t, rows, 12_001)
		require.Equal(t, []string{"time", "series", "id", "i", "temp", "fields_json"}, rows[0])
		// Row k holds event k-1: "late" comes with event 11,000, on the
		// last page.
		require.Equal(t, []string{"", "", `{"late":"yes"}`}, []string{rows[1][5], rows[11_000][5], rows[11_001][5]})
		require.Equal(t, "11999.5", rows[12_000][3])
	})
}

func TestQueryExportRefuses(t *testing.T) {
	store, _, _ := exportStore(t)
	dir := t.TempDir()
	query := []string{"query", store, "--tenant", "acme", "--from", "0", "--to", testNow}

	r := run(t, "", append(query, "--table", "big", "--format", "parquet")...)
	require.Error(t, r.err)
	require.Equal(t, 2, ExitCode(r.err))
	require.Contains(t, r.err.Error(), "--output")

	r = run(t, "", append(query, "--table", "big", "--format", "xml", "--output", filepath.Join(dir, "x"))...)
	require.Equal(t, 2, ExitCode(r.err))

	// A query that fails leaves no file, and no temporary one.
	out := filepath.Join(dir, "none.parquet")
	r = run(t, "", append(query, "--table", "no_such_table", "--format", "parquet", "--output", out)...)
	require.Error(t, r.err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries)

	r = run(t, "", append(query, "--table", "big", "--bucket", "1h", "--output", out)...)
	require.Equal(t, 2, ExitCode(r.err))
	require.Contains(t, r.err.Error(), "--output applies to events")
}
