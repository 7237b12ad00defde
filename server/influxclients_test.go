package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/internal/clients"
	"github.com/timetabledb/timetable/server"
)

// The influx 1.x CLI imports a line protocol file (it pings, then posts
// batches to /write with the password as the key), and timetable's own
// API reads every line back.
func TestInfluxCLIImport(t *testing.T) {
	influx := clients.Command(t, "influx")
	f := newFixture(t, server.Options{})
	u, err := url.Parse(f.url)
	require.NoError(t, err)

	start := now.Add(-2 * time.Hour)
	var b strings.Builder
	b.WriteString("# DML\n# CONTEXT-DATABASE: plant\n")
	for i := range 250 {
		fmt.Fprintf(&b, "boiler,site=north,unit=u%d temp=%d.5,on=true,note=\"ok %d\" %d\n", i%3, 60+i%7, i, start.Add(time.Duration(i)*time.Second).Unix())
	}
	path := filepath.Join(t.TempDir(), "import.txt")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))

	run := func() string {
		out, err := exec.Command(influx, "-host", u.Hostname(), "-port", u.Port(), "-username", "acme", "-password", f.acme,
			"-import", "-path", path, "-precision", "s").CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	out := run()
	require.Contains(t, out, "Processed 250 inserts")
	require.Contains(t, out, "Failed 0 inserts")

	events := f.all(f.acme, "boiler", wide)
	require.Len(t, events, 250)
	series := map[string]int{}
	for _, e := range events {
		series[e.Series]++
	}
	require.Equal(t, map[string]int{"site=north,unit=u0": 84, "site=north,unit=u1": 83, "site=north,unit=u2": 83}, series)
	require.Equal(t, map[string]any{"site": "north", "unit": "u0", "temp": 60.5, "on": true, "note": "ok 0"}, events[0].Fields)
	require.Equal(t, start.Format(time.RFC3339), events[0].Time)

	// Importing the file again stores nothing twice.
	run()
	require.Len(t, f.all(f.acme, "boiler", wide), 250)

	// A file with a bad line: the CLI's batch is refused whole, and
	// nothing of it is written.
	bad := fmt.Sprintf("# DML\n# CONTEXT-DATABASE: plant\nchiller temp=4 %d\nchiller temp= %d\n", start.Unix(), start.Unix())
	require.NoError(t, os.WriteFile(path, []byte(bad), 0o600))
	refused, _ := exec.Command(influx, "-host", u.Hostname(), "-port", u.Port(), "-username", "acme", "-password", f.acme,
		"-import", "-path", path, "-precision", "s").CombinedOutput()
	require.Contains(t, string(refused), "2 points were not inserted", "%s", refused)
	require.Contains(t, string(refused), "unable to parse 'chiller temp=", "%s", refused)
	require.Equal(t, http.StatusNotFound, f.get(f.acme, "chiller", wide).status)
}

// InfluxDB's Python client (InfluxDBClient.write_points) writes points,
// and a bad one is refused with InfluxDB's 400, naming the line.
func TestInfluxPythonClient(t *testing.T) {
	python := clients.Python(t, "influxdb")
	f := newFixture(t, server.Options{})
	u, err := url.Parse(f.url)
	require.NoError(t, err)

	script := `
import json, sys
from influxdb import InfluxDBClient
from influxdb.exceptions import InfluxDBClientError
host, port, key, at = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
c = InfluxDBClient(host=host, port=port, username="acme", password=key, database="plant")
points = [{"measurement": "cpu", "tags": {"host": "web %d" % (i % 2)}, "time": at + i,
           "fields": {"usage": 0.25 * i, "cores": 4, "label": "x"}} for i in range(10)]
result = {"ok": c.write_points(points, time_precision="s")}
try:
    c.write_points([{"measurement": "cpu", "tags": {"host": "a"}, "time": at, "fields": {"pk": 1}}], time_precision="s")
    result["bad"] = None
except InfluxDBClientError as e:
    result["bad"] = {"code": e.code, "content": e.content if isinstance(e.content, str) else e.content.decode()}
print(json.dumps(result))
`
	at := now.Add(-time.Hour).Unix()
	out, err := exec.Command(python, "-c", script, u.Hostname(), u.Port(), f.acme, fmt.Sprint(at)).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var result struct {
		OK  bool `json:"ok"`
		Bad *struct {
			Code    int    `json:"code"`
			Content string `json:"content"`
		} `json:"bad"`
	}
	require.NoError(t, json.Unmarshal(out, &result), "%s", out)
	require.True(t, result.OK)
	require.NotNil(t, result.Bad, "the bad point was refused")
	require.Equal(t, 400, result.Bad.Code)
	require.Contains(t, result.Bad.Content, `line 1: unable to parse 'cpu,host=a pk=1i`)
	require.Contains(t, result.Bad.Content, `\"pk\" is reserved`)

	events := f.all(f.acme, "cpu", wide)
	require.Len(t, events, 10)
	require.Equal(t, `host=web\ 0`, events[0].Series)
	require.Equal(t, map[string]any{"host": "web 0", "usage": float64(0), "cores": float64(4), "label": "x"}, events[0].Fields)
}

// The influx CLI queries with -execute in each of its formats, at a
// precision, and its `use` command finds the database.
func TestInfluxCLIQuery(t *testing.T) {
	influx := clients.Command(t, "influx")
	f := newFixture(t, server.Options{})
	u, err := url.Parse(f.url)
	require.NoError(t, err)
	start := now.Add(-2 * time.Hour)
	writeWeather(t, f, start)
	run := func(args ...string) string {
		t.Helper()
		args = append([]string{"-host", u.Hostname(), "-port", u.Port(), "-username", "acme", "-password", f.acme}, args...)
		out, err := exec.Command(influx, args...).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	out := run("-database", "acme", "-format", "json", "-execute", "SHOW DATABASES")
	require.JSONEq(t, `{"results":[{"series":[{"name":"databases","columns":["name"],"values":[["acme"]]}]}]}`, out)

	out = run("-database", "plant", "-format", "csv", "-precision", "s", "-execute",
		`SELECT mean(temp), count(temp) FROM weather WHERE time >= '`+start.Format(time.RFC3339)+`' AND time < '`+start.Add(time.Hour).Format(time.RFC3339)+`' GROUP BY time(30m), "region"`)
	require.Equal(t, fmt.Sprintf("name,tags,time,mean,count\nweather,region=eu,%d,29.5,60\nweather,region=eu,%d,59.5,60\nname,tags,time,mean,count\nweather,region=us,%d,44.5,30\nweather,region=us,%d,74.5,30\n",
		start.Unix(), start.Add(30*time.Minute).Unix(), start.Unix(), start.Add(30*time.Minute).Unix()), out)

	out = run("-database", "plant", "-format", "column", "-execute", `SHOW TAG VALUES FROM weather WITH KEY = "host" WHERE region = 'eu'`)
	require.Contains(t, out, "key  value\n---  -----\nhost web1\nhost web2\n")

	out = run("-database", "plant", "-format", "column", "-precision", "rfc3339", "-execute", `SELECT temp FROM weather WHERE host = 'web3' ORDER BY time DESC LIMIT 1`)
	require.Contains(t, out, start.Add(59*time.Minute).Format(time.RFC3339)+" 89")

	// An unsupported statement is the CLI's ERR: line, naming it.
	cmd := exec.Command(influx, "-host", u.Hostname(), "-port", u.Port(), "-username", "acme", "-password", f.acme, "-database", "plant", "-execute", "DROP MEASUREMENT weather")
	failed, _ := cmd.CombinedOutput()
	require.Contains(t, string(failed), "ERR: DROP MEASUREMENT is not supported")
}

// InfluxDB's Python client reads: query() and its points, at an epoch,
// chunked, and its listings of databases and measurements.
func TestInfluxPythonClientQuery(t *testing.T) {
	python := clients.Python(t, "influxdb")
	f := newFixture(t, server.Options{})
	u, err := url.Parse(f.url)
	require.NoError(t, err)
	start := now.Add(-2 * time.Hour)
	writeWeather(t, f, start)
	script := `
import json, sys
from influxdb import InfluxDBClient
from influxdb.exceptions import InfluxDBClientError
host, port, key, start, end = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
c = InfluxDBClient(host=host, port=port, username="acme", password=key, database="plant")
out = {}
out["databases"] = c.get_list_database()
c.create_database("plant")
out["measurements"] = c.get_list_measurements()
rs = c.query("SELECT mean(temp) FROM weather WHERE time >= '%s' AND time < '%s' GROUP BY time(30m), host" % (start, end))
out["mean_web2"] = list(rs.get_points(tags={"host": "web2"}))
rs = c.query("SELECT temp FROM weather WHERE host = 'web1' LIMIT 2", epoch="ms")
out["raw_ms"] = list(rs.get_points())
chunks = c.query("SELECT temp FROM weather WHERE host =~ /web[13]/", chunked=True, chunk_size=7)
out["chunked"] = sum(len(list(r.get_points())) for r in chunks)
try:
    c.query("SELECT holt_winters(mean(temp), 2, 1) FROM weather WHERE time >= '%s' AND time < '%s' GROUP BY time(30m)" % (start, end))
    out["error"] = None
except InfluxDBClientError as e:
    out["error"] = str(e)
print(json.dumps(out))
`
	cmd := exec.Command(python, "-c", script, u.Hostname(), u.Port(), f.acme, start.Format(time.RFC3339), start.Add(time.Hour).Format(time.RFC3339))
	raw, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", raw)
	var out struct {
		Databases    []map[string]string `json:"databases"`
		Measurements []map[string]string `json:"measurements"`
		MeanWeb2     []map[string]any    `json:"mean_web2"`
		RawMS        []map[string]any    `json:"raw_ms"`
		Chunked      int                 `json:"chunked"`
		Error        *string             `json:"error"`
	}
	require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	require.Equal(t, []map[string]string{{"name": "acme"}}, out.Databases)
	require.Equal(t, []map[string]string{{"name": "weather"}}, out.Measurements)
	require.Equal(t, []map[string]any{{"time": start.Format(time.RFC3339), "mean": 34.5}, {"time": start.Add(30 * time.Minute).Format(time.RFC3339), "mean": 64.5}}, out.MeanWeb2)
	require.Equal(t, []map[string]any{{"time": float64(start.UnixMilli()), "temp": float64(10)}, {"time": float64(start.Add(time.Minute).UnixMilli()), "temp": float64(11)}}, out.RawMS)
	require.Equal(t, 120, out.Chunked)
	require.NotNil(t, out.Error)
	require.Contains(t, *out.Error, "holt_winters() is not supported")
}
