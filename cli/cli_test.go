package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/internal/backends"
)

// testNow is the clock of the CLI tests: Thursday 2017-06-15 09:00 UTC.
const testNow = "2017-06-15T09:00:00Z"

// result is what a command printed and returned.
type result struct {
	stdout, stderr string
	err            error
}

// run runs timetable with args in-process, with the clock stopped at
// testNow and stdin as its standard input.
func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	t.Setenv(EnvNow, testNow)
	root := NewRoot()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return result{stdout: out.String(), stderr: errOut.String(), err: err}
}

// mustRun runs timetable and fails the test if it fails.
func mustRun(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	r := run(t, stdin, args...)
	require.NoError(t, r.err, "timetable %s\nstderr: %s", strings.Join(args, " "), r.stderr)
	return r
}

// goldenFile compares got with testdata/name, or rewrites the file with
// -update.
func goldenFile(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./cli -update to create it")
	require.Equal(t, string(want), got, "differs from %s; run go test ./cli -update if the change is meant", path)
}

// seeded returns a --store flag for a new Pebble store holding tenant acme
// (whose key it returns) and the events of testdata/query/events.ndjson
// in a_table.
func seeded(t *testing.T) (store, key string) {
	t.Helper()
	store = "--store=pebble:" + filepath.Join(t.TempDir(), "data")
	r := mustRun(t, "", "tenant", "add", "acme", store)
	key = strings.TrimSpace(r.stdout)
	mustRun(t, "", "write", store, "--tenant", "acme", "--table", "a_table", filepath.Join("testdata", "query", "events.ndjson"))
	return store, key
}

func TestQueryGolden(t *testing.T) {
	store, _ := seeded(t)
	wide := []string{"--from", "2017-01-01T00:00:00Z", "--to", "2017-06-16T00:00:00Z"}
	tests := []struct {
		golden string
		args   []string
	}{
		{"query/all.txt", []string{"--format", "table"}},
		{"query/all.json", []string{"--format", "json"}},
		{"query/all.csv", []string{"--format", "csv"}},
		{"query/car-17-desc-2.txt", []string{"--series", "car-17", "--order", "desc", "--limit", "2"}},
		{"query/car-17-desc-2.json", []string{"--series", "car-17", "--order", "desc", "--limit", "2", "--format", "json"}},
		{"query/car-17-desc-2.csv", []string{"--series", "car-17", "--order", "desc", "--limit", "2", "--format", "csv"}},
		{"query/fields.csv", []string{"--fields", "speed,note", "--format", "csv"}},
		{"query/fields.txt", []string{"--fields", "speed,note"}},
		{"query/empty.txt", []string{"--series", "car-99"}},
		{"query/empty.json", []string{"--series", "car-99", "--format", "json"}},
		{"query/empty.csv", []string{"--series", "car-99", "--format", "csv"}},
		{"query/filter.csv", []string{"--filter", `speed >= 50 or begins_with(note, "no series")`, "--fields", "speed,note", "--format", "csv"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			args := append([]string{"query", store, "--tenant", "acme", "--table", "a_table"}, wide...)
			r := mustRun(t, "", append(args, tt.args...)...)
			goldenFile(t, tt.golden, r.stdout)
			if strings.HasSuffix(tt.golden, ".json") {
				var events []map[string]any
				require.NoError(t, json.Unmarshal([]byte(r.stdout), &events), "json output is a JSON array")
			}
		})
	}
}

func TestQueryFollowsCursors(t *testing.T) {
	backends.NoDynamoDB(t)
	store := "--store=pebble:" + filepath.Join(t.TempDir(), "data")
	mustRun(t, "", "tenant", "add", "acme", store)
	var in strings.Builder
	for i := range 25_000 {
		// Three series, one event a second for about seven hours.
		in.WriteString(`{"time": ` + itoa(1497430800000+int64(i)*1000) + `, "series": "s` + itoa(int64(i%3)) + `", "fields": {"i": ` + itoa(int64(i)) + "}}\n")
	}
	mustRun(t, in.String(), "write", store, "--tenant", "acme", "--table", "big")
	query := []string{"query", store, "--tenant", "acme", "--table", "big", "--from", "0", "--to", testNow, "--format", "csv"}

	for _, tt := range []struct {
		limit string
		rows  int
	}{{"", 25_000}, {"0", 25_000}, {"25000", 25_000}, {"12345", 12_345}, {"1000", 1000}, {"10001", 10_001}} {
		for _, order := range []string{"asc", "desc"} {
			args := append(slices.Clone(query), "--order", order)
			if tt.limit != "" {
				args = append(args, "--limit", tt.limit)
			}
			r := mustRun(t, "", args...)
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")[1:]
			require.Len(t, lines, tt.rows)
			if tt.rows < 25_000 {
				require.Contains(t, r.stderr, "stopped at --limit "+tt.limit+": the range holds more events")
			} else {
				require.NotContains(t, r.stderr, "stopped at", "nothing was cut")
			}
			seen := make(map[string]bool, len(lines))
			for k, line := range lines {
				cells := strings.Split(line, ",")
				require.False(t, seen[cells[3]], "event %s printed twice", cells[3])
				seen[cells[3]] = true
				want := k
				if order == "desc" {
					want = 25_000 - 1 - k
				}
				require.Equal(t, itoa(int64(want)), cells[3], "limit %s, %s, row %d", tt.limit, order, k)
			}
		}
	}
}

// Without --from and --to, query reads the last 24 hours, as the HTTP API
// does; times may be relative to now (TIMETABLE_NOW in the tests).
func TestQueryDefaultRange(t *testing.T) {
	store, _ := seeded(t)
	query := []string{"query", store, "--tenant", "acme", "--table", "a_table", "--format", "ndjson"}
	lines := func(args ...string) []string {
		r := mustRun(t, "", append(slices.Clone(query), args...)...)
		return strings.Split(strings.TrimSpace(r.stdout), "\n")
	}
	day := lines("--from", "2017-06-14T09:00:00Z", "--to", testNow)
	require.Len(t, day, 5)
	require.Equal(t, day, lines())
	require.Equal(t, day, lines("--from", "now-24h", "--to", "now"))
	require.Equal(t, day, lines("--from", "now-1d"))
	require.Equal(t, day, lines("--to", testNow))
	require.Equal(t, day[:1], lines("--to", "now-9h"), "the last 24 hours before 2017-06-15T00:00Z")
	require.Equal(t, lines("--from", "0", "--to", "now"), lines("--from", "0"))

	r := run(t, "", append(slices.Clone(query), "--from", "now-1x")...)
	require.Equal(t, ExitUsage, ExitCode(r.err))
	require.ErrorContains(t, r.err, "now-1h")
	r = run(t, "", append(slices.Clone(query), "--from", "now+1h")...)
	require.ErrorContains(t, r.err, "is after --to")
}

// Flags that do not apply are refused, not ignored.
func TestQueryRefusesFlagsThatDoNotApply(t *testing.T) {
	store, _ := seeded(t)
	query := []string{"query", store, "--tenant", "acme", "--table", "a_table", "--from", "0", "--to", testNow}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--fn", "sum"}, "--fn applies to aggregates"},
		{[]string{"--fill"}, "--fill applies to aggregates"},
		{[]string{"--bucket", "1h", "--fields", "speed", "--order", "desc"}, "--order applies to events"},
		{[]string{"--bucket", "1h", "--fields", "speed", "--limit", "5"}, "--limit applies to events"},
		{[]string{"--limit", "-1"}, "--limit -1"},
		{[]string{"--filter", "speed >"}, "--filter: expected a string, number, true, false or null, found the end at offset 7"},
	} {
		r := run(t, "", append(slices.Clone(query), tt.args...)...)
		require.ErrorContains(t, r.err, tt.want, "%v", tt.args)
		require.Equal(t, ExitUsage, ExitCode(r.err), "%v", tt.args)
	}
}

func itoa(i int64) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func TestTablesGolden(t *testing.T) {
	store, _ := seeded(t)
	for _, tt := range []struct {
		golden string
		args   []string
	}{
		{"tables/all.txt", nil},
		{"tables/all.json", []string{"--format", "json"}},
		{"tables/events.txt", []string{"--family", "events"}},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			r := mustRun(t, "", append([]string{"tables", store}, tt.args...)...)
			goldenFile(t, tt.golden, r.stdout)
		})
	}
	t.Run("json keys", func(t *testing.T) {
		r := mustRun(t, "", "tables", store, "--format", "json")
		var tables []map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &tables))
		require.NotEmpty(t, tables)
		for _, tb := range tables {
			for _, k := range []string{"name", "family", "period_start", "period_end", "write_month", "tier", "status", "billing", "read_capacity", "write_capacity"} {
				require.Contains(t, tb, k)
			}
			require.Equal(t, "2017-06", tb["write_month"])
		}
	})
	t.Run("unknown family", func(t *testing.T) {
		r := run(t, "", "tables", store, "--family", "nope")
		require.ErrorContains(t, r.err, `--family "nope": the configuration has events`)
		require.Equal(t, ExitUsage, ExitCode(r.err))
	})
	t.Run("no store", func(t *testing.T) {
		r := run(t, "", "tables", "--store=pebble:"+filepath.Join(t.TempDir(), "absent"))
		require.ErrorContains(t, r.err, "no store in")
	})
}

// A table the store refused to create says why, under the table and in
// json, so that `tables` shows a reached table quota.
func TestTablesShowACreateError(t *testing.T) {
	why := `create table "events_2017_04_10": timetable: account's table quota reached: LimitExceededException: Subscriber limit exceeded`
	ts := []engine.TableStatus{{
		Name: "events_2017_04_10", Family: "events", PeriodStart: time.Date(2017, 4, 10, 0, 0, 0, 0, time.UTC),
		PeriodEnd: time.Date(2017, 4, 17, 0, 0, 0, 0, time.UTC), State: "creating", Shards: 1, Tier: "hot",
		Billing: "PAY_PER_REQUEST", ItemCount: -1, CreateError: why,
	}}
	var table strings.Builder
	require.NoError(t, writeTablesTable(&table, ts))
	require.Contains(t, table.String(), "\nnot created: "+why+"\n")

	var js strings.Builder
	require.NoError(t, writeTablesJSON(&js, ts))
	var got []map[string]any
	require.NoError(t, json.Unmarshal([]byte(js.String()), &got))
	require.Equal(t, why, got[0]["create_error"])
}
