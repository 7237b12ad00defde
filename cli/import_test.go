package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/internal/clients"
	"github.com/timetabledb/timetable/storage/dynamostore"
)

// influxHistory is line protocol at second precision for an influxd:
// series with and without tags, every field type, and times from more
// than the backfill horizon before testNow to its week.
func influxHistory() (string, int) {
	var b strings.Builder
	n := 0
	times := []time.Time{
		time.Date(2015, 3, 1, 10, 0, 0, 0, time.UTC),
		time.Date(2015, 3, 1, 10, 0, 1, 0, time.UTC),
		time.Date(2016, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(2017, 5, 2, 8, 0, 0, 0, time.UTC),
		time.Date(2017, 6, 14, 12, 30, 0, 0, time.UTC),
	}
	for i, at := range times {
		fmt.Fprintf(&b, "weather,site=north,probe=7 temp=%d.5,rain=%di,ok=%t,note=\"day %d\" %d\n", 20+i, i, i%2 == 0, i, at.Unix())
		fmt.Fprintf(&b, "weather temp=%d.25 %d\n", 10+i, at.Unix())
		fmt.Fprintf(&b, "power,meter=m-1 kwh=%di %d\n", 1000+i, at.Unix())
		n += 3
	}
	return b.String(), n
}

// exportInfluxd writes lp into database plant of a new influxd, stops it,
// and returns the file influx_inspect export makes of its data.
func exportInfluxd(t *testing.T, lp string) string {
	t.Helper()
	influxd := clients.Command(t, "influxd")
	inspect := clients.Command(t, "influx_inspect")
	dir := t.TempDir()
	d, err := clients.StartInfluxd(influxd, dir)
	require.NoError(t, err)
	t.Cleanup(d.Close)
	post := func(path, body string) int {
		res, err := http.Post(d.URL+path, "text/plain", strings.NewReader(body))
		require.NoError(t, err)
		res.Body.Close()
		return res.StatusCode
	}
	require.Equal(t, http.StatusOK, post("/query?q=CREATE+DATABASE+plant", ""))
	// The new database may take a moment to be found by writes.
	require.Eventually(t, func() bool { return post("/write?db=plant&precision=s", lp) == http.StatusNoContent },
		10*time.Second, 50*time.Millisecond)
	d.Close()
	out := filepath.Join(t.TempDir(), "plant.lp")
	b, err := exec.Command(inspect, "export", "-datadir", filepath.Join(dir, "data"), "-waldir", filepath.Join(dir, "wal"),
		"-database", "plant", "-out", out).CombinedOutput()
	require.NoError(t, err, "influx_inspect export: %s", b)
	return out
}

// An influx_inspect export of a real influxd comes in whole: its DDL is
// skipped, its measurements are tables, its tags series, its fields keep
// their values and types, each event lands in its own month's tables,
// and history past the backfill horizon is taken with --any-age and
// refused line by line without it. A second import stores nothing twice.
func TestImportInfluxdExport(t *testing.T) {
	lp, n := influxHistory()
	exported := exportInfluxd(t, lp)
	export, err := os.ReadFile(exported)
	require.NoError(t, err)
	require.Contains(t, string(export), "# DDL", "influx_inspect's format")
	require.Contains(t, string(export), "CREATE DATABASE plant")

	t.Run("pebble", func(t *testing.T) {
		importInfluxdExport(t, []string{"--store=pebble:" + filepath.Join(t.TempDir(), "data")}, exported, lp, n)
	})
	t.Run("dynamodb", func(t *testing.T) {
		importInfluxdExport(t, dynamoStoreFlags(t), exported, lp, n)
	})
}

// dynamoStoreFlags returns the flags of a store on the test's DynamoDB
// server, in tables of the test's own that are deleted when it ends; the
// test skips without a server.
func dynamoStoreFlags(t *testing.T) []string {
	t.Helper()
	if os.Getenv(backends.EndpointEnv) == "" {
		t.Skipf("set %s or run `make test` to start a DynamoDB-API server", backends.EndpointEnv)
	}
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", os.Getenv(backends.EndpointEnv))
	t.Setenv("AWS_REGION", "us-east-1")
	b := make([]byte, 4)
	rand.Read(b)
	id := "im" + hex.EncodeToString(b)
	cfg := filepath.Join(t.TempDir(), "timetable.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("meta_table: "+id+"_meta\nfamilies:\n  - name: events\n    prefix: "+id+"_ev_\n"), 0o644))
	ctx := context.Background()
	store, err := dynamostore.Open(ctx, dynamostore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		var names []string
		_ = store.ListTables(ctx, id, func(name string) bool {
			if !strings.HasPrefix(name, id) {
				return false
			}
			names = append(names, name)
			return true
		})
		for _, name := range names {
			_ = backends.Drop(ctx, store, name)
		}
		store.Close()
	})
	return []string{"--store", "dynamodb", "--config", cfg}
}

// importInfluxdExport runs TestImportInfluxdExport on one store.
func importInfluxdExport(t *testing.T, store []string, exported, lp string, n int) {
	path := filepath.Join(t.TempDir(), "plant.lp")
	export, err := os.ReadFile(exported)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, export, 0o644))
	cmd := func(args ...string) []string { return append(args, store...) }
	queryJSON := func(t *testing.T, _ []string, table string) []map[string]any {
		t.Helper()
		r := mustRun(t, "", cmd("query", "--tenant", "acme", "--table", table, "--from", "0", "--to", testNow, "--limit", "0", "--format", "json")...)
		dec := json.NewDecoder(strings.NewReader(r.stdout))
		dec.UseNumber()
		var events []map[string]any
		require.NoError(t, dec.Decode(&events))
		return events
	}
	mustRun(t, "", cmd("tenant", "add", "acme")...)

	// Without --any-age, the lines older than the horizon are refused,
	// each named, and written to the refused file to import later.
	r := run(t, "", cmd("import", "--tenant", "acme", path)...)
	require.ErrorContains(t, r.err, "6 points refused: see "+path+".refused", r.stderr)
	require.Contains(t, r.stderr, "older than the backfill horizon of 365d")
	require.Contains(t, r.stderr, "imported 9 events into tenant acme, 6 points refused")
	refused, err := os.ReadFile(path + ".refused")
	require.NoError(t, err)
	require.Equal(t, 12, strings.Count(string(refused), "\n"), "a comment and the line, for each")
	require.Contains(t, string(refused), "1425204000000000000", "the refused line as it was")
	require.NoFileExists(t, path+".timetable-import", "a finished import leaves no checkpoint")

	// With it, everything comes in, the 9 lines already written once.
	require.NoError(t, os.Remove(path+".refused"))
	r = mustRun(t, "", cmd("import", "--tenant", "acme", "--any-age", path)...)
	require.Contains(t, r.stderr, fmt.Sprintf("imported %d events into tenant acme, 0 points refused", n))
	weather := queryJSON(t, store, "weather")
	power := queryJSON(t, store, "power")
	require.Len(t, weather, 10)
	require.Len(t, power, 5)

	// Every line of the original, as InfluxDB stored it, is an event.
	for _, line := range strings.Split(strings.TrimSpace(lp), "\n") {
		key, rest, _ := strings.Cut(line, " ") // no key here holds a space
		values, ts := rest[:strings.LastIndex(rest, " ")], rest[strings.LastIndex(rest, " ")+1:]
		measurement, tags, _ := strings.Cut(key, ",")
		sorted := strings.Split(tags, ",")
		slices.Sort(sorted)
		series := strings.Join(sorted, ",")
		if tags == "" {
			series = ""
		}
		events := weather
		if measurement == "power" {
			events = power
		}
		var unix int64
		_, err := fmt.Sscan(ts, &unix)
		require.NoError(t, err)
		at := time.Unix(unix, 0).UTC().Format(time.RFC3339)
		i := slices.IndexFunc(events, func(e map[string]any) bool {
			s, _ := e["series"].(string)
			return e["time"] == at && s == series
		})
		require.GreaterOrEqual(t, i, 0, "line %q in %v", line, events)
		got := events[i]["fields"].(map[string]any)
		for _, kv := range strings.Split(values, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch {
			case strings.HasSuffix(v, "i"):
				require.Equal(t, json.Number(strings.TrimSuffix(v, "i")), got[k], "%s of %q", k, line)
			case v == "true" || v == "false":
				require.Equal(t, v == "true", got[k], "%s of %q", k, line)
			case strings.HasPrefix(v, `"`):
				require.Equal(t, strings.Trim(v, `"`), got[k], "%s of %q", k, line)
			default:
				require.Equal(t, json.Number(v), got[k], "%s of %q", k, line)
			}
		}
	}

	// Each event is in the tables of its own write month.
	r = mustRun(t, "", cmd("tables", "--format", "json")...)
	var tables []struct {
		PeriodStart time.Time `json:"period_start"`
		PeriodEnd   time.Time `json:"period_end"`
		WriteMonth  string    `json:"write_month"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &tables))
	var months []string
	for _, tb := range tables {
		months = append(months, tb.WriteMonth)
		require.Contains(t, []string{tb.PeriodStart.Format("2006-01"), tb.PeriodEnd.Add(-time.Nanosecond).Format("2006-01")}, tb.WriteMonth, "a week's table of a month of its own")
	}
	slices.Sort(months)
	require.Equal(t, []string{"2015-03", "2016-12", "2017-05", "2017-06"}, slices.Compact(months), "the months of the events")

	// Again: nothing twice.
	mustRun(t, "", cmd("import", "--tenant", "acme", "--any-age", path)...)
	require.Len(t, queryJSON(t, store, "weather"), 10)
}

// A line that cannot be stored is refused alone, by its line number in
// the file, and the others of its batch are written; a bad precision or
// a --server are usage errors.
func TestImportRefusesLineByLine(t *testing.T) {
	store := "--store=pebble:" + filepath.Join(t.TempDir(), "data")
	mustRun(t, "", "tenant", "add", "acme", store)
	path := filepath.Join(t.TempDir(), "in.lp")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join([]string{
		"# a comment",
		"m,host=a v=1 1497500000",
		"m,host=a v= 1497500001",
		"m,host=a pk=3 1497500002",
		"bad#name v=4 1497500003",
		"",
		"m,host=b v=5 1497500004",
	}, "\n")), 0o644))
	r := run(t, "", "import", store, "--tenant", "acme", "--precision", "s", "--batch", "3", path)
	require.ErrorContains(t, r.err, "3 points refused")
	for _, want := range []string{"line 3: ", `line 4: fields: name "pk" is reserved`, `line 5: measurement "bad#name" is not a table name`} {
		require.Contains(t, r.stderr, want)
	}
	require.Len(t, queryJSON(t, store, "m"), 2)

	r = run(t, "", "import", store, "--tenant", "acme", "--precision", "d", path)
	require.ErrorContains(t, r.err, `--precision "d": use ns, us, ms, s, m or h`)
	r = run(t, "", "import", store, "--tenant", "acme", "--server", "http://127.0.0.1:1", path)
	require.ErrorContains(t, r.err, "import writes to the store itself")
}

// An import stopped after some batches resumes after the last batch its
// checkpoint names, and a checkpoint of another version of the file is
// ignored.
func TestImportResumesFromItsCheckpoint(t *testing.T) {
	store := "--store=pebble:" + filepath.Join(t.TempDir(), "data")
	mustRun(t, "", "tenant", "add", "acme", store)
	path := filepath.Join(t.TempDir(), "in.lp")
	var b strings.Builder
	for i := range 10 {
		fmt.Fprintf(&b, "m,host=h%d v=%d %d\n", i, i, 1497500000+i)
	}
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	st, err := os.Stat(path)
	require.NoError(t, err)
	// As a run killed after its first 6 lines would have left it.
	offset := int64(strings.Index(b.String(), "m,host=h6"))
	cp := importCheckpoint{Size: st.Size(), ModTime: st.ModTime().UTC(), Offset: offset, Line: 6, Written: 6}
	js, err := json.Marshal(cp)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path+".timetable-import", js, 0o644))

	r := mustRun(t, "", "import", store, "--tenant", "acme", "--precision", "s", path)
	require.Contains(t, r.stderr, "resuming after line 6 (6 events written, 0 points refused so far)")
	require.Contains(t, r.stderr, "imported 10 events")
	events := queryJSON(t, store, "m")
	require.Len(t, events, 4, "only the lines after the checkpoint were read")
	require.Equal(t, "host=h6", events[0]["series"])

	// The file changed: the checkpoint is not of it.
	require.NoError(t, os.WriteFile(path+".timetable-import", js, 0o644))
	require.NoError(t, os.WriteFile(path, []byte(b.String()+"m,host=h10 v=10 1497500010\n"), 0o644))
	r = mustRun(t, "", "import", store, "--tenant", "acme", "--precision", "s", path)
	require.Contains(t, r.stderr, "is of another version of the file: importing from the start")
	require.Len(t, queryJSON(t, store, "m"), 11)
}

// The lines of a point are joined whatever their keys, strings and
// escapes hold; a field twice keeps the later value; a line without a
// timestamp, or that is not line protocol, is a point of its own; and a
// point met again after its window was flushed is counted as split.
func TestPointWindowJoinsAPointsLines(t *testing.T) {
	var w pointWindow
	for i, line := range []string{
		`m\ 1,tag=a\,b\ c f1=1i 100`,
		`other f="x y, z=1 \" still" 100`,
		`m\ 1,tag=a\,b\ c f2="a, b=c d" 100`,
		`m\ 1,tag=a\,b\ c f1=2i 100`,
		`m\ 1,tag=a\,b\ c f1=3i 101`,
		`no timestamp=1`,
		`not line protocol`,
	} {
		w.add([]byte(line), i+1)
	}
	body, lines := w.flush()
	require.Equal(t, strings.Join([]string{
		`m\ 1,tag=a\,b\ c f1=2i,f2="a, b=c d" 100`,
		`other f="x y, z=1 \" still" 100`,
		`m\ 1,tag=a\,b\ c f1=3i 101`,
		`no timestamp=1`,
		`not line protocol`,
	}, "\n")+"\n", string(body))
	require.Equal(t, [][]int{{1, 3, 4}, {2}, {5}, {6}, {7}}, lines)
	require.Zero(t, w.bytes)

	w.add([]byte(`m\ 1,tag=a\,b\ c f3=true 100`), 8)
	w.add([]byte(`new f=1 100`), 9)
	require.Equal(t, 1, w.split, "the point of line 1 met again")
}
