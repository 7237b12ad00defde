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
