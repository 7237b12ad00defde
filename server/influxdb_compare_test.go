package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/internal/clients"
	"github.com/timetabledb/timetable/server"
)

// compareQueries are the statements TestAnswersMatchInfluxDB runs on both,
// besides Grafana's (testdata/influxql/grafana.txt); tf is the hour of
// data.
var compareQueries = []string{
	"SHOW MEASUREMENTS",
	"SHOW MEASUREMENTS WITH MEASUREMENT =~ /pow/",
	"SHOW TAG KEYS",
	`SHOW TAG KEYS FROM "power"`,
	`SHOW TAG VALUES WITH KEY = "host"`,
	`SHOW TAG VALUES FROM weather WITH KEY IN ("host", "region") WHERE host !~ /web[12]/`,
	`SHOW TAG VALUES FROM power WITH KEY =~ /s/`,
	"SHOW FIELD KEYS",
	"SHOW FIELD KEYS FROM weather",
	"SHOW SERIES",
	"SHOW SERIES FROM weather WHERE region = 'eu'",

	"SELECT temp FROM weather WHERE host = 'web1' AND tf LIMIT 3",
	"SELECT * FROM weather WHERE temp > 86 AND tf",
	"SELECT temp, note FROM weather WHERE host = 'web3' AND tf ORDER BY time DESC LIMIT 2 OFFSET 1",
	"SELECT kw AS power FROM power WHERE tf AND kw >= 2.5 AND kw < 2.9",
	"SELECT temp FROM weather WHERE note = 'n5' OR note = 'n7' AND tf",
	"SELECT temp FROM weather WHERE ok = true AND temp < 13 AND tf",
	"SELECT temp FROM weather WHERE tf AND temp < 22 GROUP BY host",

	"SELECT count(temp), sum(temp), mean(temp), min(temp), max(temp), first(temp), last(temp), spread(temp), median(temp), stddev(temp) FROM weather WHERE host = 'web2' AND tf GROUP BY time(20m)",
	"SELECT count(kw), sum(kw), mean(kw), min(kw), max(kw), first(kw), last(kw), spread(kw), median(kw), stddev(kw) FROM power WHERE site = 'a' AND tf GROUP BY time(15m)",
	"SELECT percentile(temp, 90), percentile(temp, 95), percentile(temp, 50) FROM weather WHERE host = 'web1' AND tf GROUP BY time(20m)",
	"SELECT percentile(temp, 92), percentile(temp, 1), percentile(temp, 99.9) FROM weather WHERE host = 'web2' AND tf GROUP BY time(20m)",
	"SELECT mean(temp) FROM weather WHERE region = 'eu' AND tf GROUP BY time(15m), host fill(null)",
	"SELECT mean(temp), count(temp), min(temp) FROM weather WHERE region = 'eu' AND tf GROUP BY time(30m)",
	"SELECT mean(kw) FROM power WHERE tf GROUP BY time(5m), site fill(null)",
	"SELECT mean(kw) FROM power WHERE tf GROUP BY time(5m), site fill(none)",
	"SELECT mean(kw) FROM power WHERE tf GROUP BY time(5m), site fill(previous)",
	"SELECT mean(kw) FROM power WHERE tf GROUP BY time(5m), site fill(linear)",
	"SELECT mean(kw) FROM power WHERE tf GROUP BY time(5m), site fill(0)",
	"SELECT count(kw) FROM power WHERE site = 'a' AND tf GROUP BY time(5m) fill(null)",
	"SELECT mean(temp) FROM weather WHERE tf GROUP BY time(1h, 15m)",
	"SELECT max(temp) FROM weather WHERE tf GROUP BY time(30m, -10m)",
	"SELECT max(temp) FROM weather WHERE tf GROUP BY * SLIMIT 2 SOFFSET 1",
	"SELECT last(temp) FROM weather WHERE host = 'web3' AND tf GROUP BY time(10m) ORDER BY time DESC LIMIT 2",
	"SELECT sum(kw), count(kw) FROM power WHERE site = 'a' AND tf",
	"SELECT count(distinct(temp)) FROM weather WHERE host = 'web1' AND tf",
	"SELECT max(temp) FROM weather WHERE tf AND temp < 50",
	"SELECT stddev(temp), median(temp) FROM weather WHERE host = 'web1' AND time >= '2017-06-15T07:58:00Z' AND tf GROUP BY time(1m) fill(none)",
	"SELECT min(kw) FROM power WHERE tf",
	"SELECT count(temp) FROM weather WHERE tf",
	"SELECT difference(max(kw)), derivative(mean(kw), 1m) FROM power WHERE site = 'b' AND tf GROUP BY time(10m) ORDER BY time DESC",
	"SELECT moving_average(mean(kw), 3) FROM power WHERE site = 'a' AND tf GROUP BY time(5m)",
	"SELECT count(distinct(kw)) FROM power WHERE site = 'a' AND tf GROUP BY time(20m)",
	"SELECT temp, host FROM weather WHERE tf LIMIT 5",
	"SELECT temp, host FROM weather WHERE tf ORDER BY time DESC LIMIT 5",
	"SELECT temp FROM weather WHERE host =~ /web[23]/ AND tf ORDER BY time DESC LIMIT 3",
	"SELECT * FROM power WHERE tf ORDER BY time DESC LIMIT 4",
	"SELECT mean(temp) FROM weather WHERE time >= '2017-06-15T09:00:00Z' AND time < '2017-06-15T10:00:00Z' GROUP BY time(30m) fill(none)",
	"SELECT median(kw), mean(kw) FROM power WHERE site = 'a' AND tf GROUP BY time(20m)",
	"SELECT temp FROM weather WHERE tf GROUP BY host LIMIT 1",
	"SELECT temp FROM weather WHERE tf GROUP BY * LIMIT 1 SLIMIT 1 SOFFSET 1",
	"SELECT mean(kw) FROM power WHERE time >= '2017-06-15T06:00:00Z' AND time < '2017-06-15T09:00:00Z' GROUP BY time(1h) fill(null)",
	"SELECT max(kw) FROM power WHERE site =~ /a|b/ AND phase != '3' AND tf GROUP BY time(30m), phase",
	`SHOW TAG KEYS FROM weather WHERE host = 'web3'`,
	`SHOW MEASUREMENTS WHERE site = 'b'`,
	`SHOW SERIES FROM power LIMIT 1 OFFSET 1`,
	"SELECT last(kw), first(kw) FROM power WHERE site = 'b' AND tf GROUP BY time(15m) fill(previous) ORDER BY time DESC",
	"SELECT kw FROM power WHERE tf AND site = 'b' AND time > '2017-06-15T07:30:00Z' AND time <= '2017-06-15T07:40:00Z'",
	"SELECT last(note) FROM weather WHERE tf",
	"SELECT first(kw) FROM power WHERE tf AND kw > 1.5 GROUP BY site",
	"SELECT percentile(kw, 50) FROM power WHERE site = 'a' AND tf",
	"SELECT mean(temp) FROM weather WHERE tf GROUP BY time(10m) LIMIT 2 OFFSET 1",
	"SELECT count(temp) FROM weather WHERE tf GROUP BY region",
	"SELECT spread(kw) FROM power WHERE tf GROUP BY site",
	"SELECT mean(temp) FROM weather WHERE tf GROUP BY time(30m) tz('Europe/Paris')",
	"SELECT temp FROM weather WHERE tf AND host = 'web2' ORDER BY time DESC LIMIT 2 tz('America/New_York')",
	"SELECT derivative(mean(temp), 1m), difference(max(temp)), moving_average(max(temp), 2) FROM weather WHERE host = 'web1' AND tf GROUP BY time(20m)",
	"SELECT non_negative_derivative(last(kw), 1m), non_negative_difference(max(kw)) FROM power WHERE site = 'b' AND tf GROUP BY time(10m)",

	// tz() buckets across DST switches (meterLines): days from local
	// midnight, 23 and 25 hours long at the switches, hours on the hour,
	// and Kolkata's half-hour offset.
	"SELECT count(v), mean(v), max(v), median(v) FROM meter WHERE time >= '2017-03-23T00:00:00Z' AND time < '2017-03-29T00:00:00Z' GROUP BY time(1d) tz('Europe/Berlin')",
	"SELECT first(v), last(v), percentile(v, 90), stddev(v) FROM meter WHERE time >= '2016-10-28T00:00:00Z' AND time < '2016-11-02T00:00:00Z' GROUP BY time(1d) tz('Europe/Berlin')",
	"SELECT count(v), sum(v) FROM meter WHERE time >= '2017-03-26T00:00:00Z' AND time < '2017-04-02T00:00:00Z' GROUP BY time(1d) fill(0) tz('Europe/Berlin')",
	"SELECT mean(v) FROM meter WHERE time >= '2017-03-23T00:00:00Z' AND time < '2017-03-29T00:00:00Z' GROUP BY time(1d) ORDER BY time DESC tz('Europe/Berlin')",
	"SELECT count(v), min(v) FROM meter WHERE time >= '2017-03-25T20:00:00Z' AND time < '2017-03-26T05:00:00Z' GROUP BY time(1h) tz('Europe/Berlin')",
	"SELECT count(v), last(v) FROM meter WHERE time >= '2016-10-29T21:00:00Z' AND time < '2016-10-30T04:00:00Z' GROUP BY time(1h) tz('Europe/Berlin')",
	"SELECT count(v), mean(v) FROM meter WHERE time >= '2017-03-25T00:00:00Z' AND time < '2017-03-27T12:00:00Z' GROUP BY time(12h) tz('Europe/Berlin')",
	"SELECT count(v), mean(v), median(v) FROM meter WHERE time >= '2017-03-10T00:00:00Z' AND time < '2017-03-10T06:00:00Z' GROUP BY time(1h) tz('Asia/Kolkata')",
	"SELECT count(v), max(v) FROM meter WHERE time >= '2017-03-10T00:00:00Z' AND time < '2017-03-13T00:00:00Z' GROUP BY time(1d) tz('Asia/Kolkata')",
	"SELECT count(v), mean(v), median(v) FROM meter WHERE time >= '2017-03-10T00:00:00Z' AND time < '2017-03-15T00:00:00Z' GROUP BY time(1d) tz('America/New_York')",
	"SELECT count(v), spread(v) FROM meter WHERE time >= '2016-11-04T00:00:00Z' AND time < '2016-11-09T00:00:00Z' GROUP BY time(1d) tz('America/New_York')",
	"SELECT count(v) FROM meter WHERE time >= '2016-10-28T00:00:00Z' AND time < '2016-11-09T00:00:00Z' GROUP BY time(1d, 6h) tz('America/New_York')",
	"SELECT max(g) FROM gauge WHERE time >= '2016-10-26T00:00:00Z' AND time < '2016-11-10T00:00:00Z' GROUP BY time(1d, 6h) tz('America/New_York')",
	"SELECT max(g) FROM gauge WHERE time >= '2016-10-26T00:00:00Z' AND time < '2016-11-10T00:00:00Z' GROUP BY time(1d) fill(previous) ORDER BY time DESC tz('Europe/Berlin')",
	"SELECT mean(g) FROM gauge WHERE time >= '2017-03-18T00:00:00Z' AND time < '2017-03-30T00:00:00Z' GROUP BY time(12h) fill(linear) tz('Europe/Berlin')",
	"SELECT mean(g) FROM gauge WHERE time >= '2017-03-18T00:00:00Z' AND time < '2017-03-30T00:00:00Z' GROUP BY time(1d) fill(null) ORDER BY time DESC tz('America/New_York')",
}

// TestAnswersMatchInfluxDB loads the same line protocol into timetable
// and into InfluxDB 1.x (Debian's influxd, on loopback) and checks that
// both answer Grafana's queries and compareQueries alike, numbers
// compared as docs/influxql.md says.
func TestAnswersMatchInfluxDB(t *testing.T) {
	influxd := clients.Command(t, "influxd")
	d, err := clients.StartInfluxd(influxd, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(d.Close)
	f := newFixture(t, server.Options{})
	start := now.Add(-2 * time.Hour)
	lines := weatherLines(start) + powerLines(start) + meterLines() + gaugeLines

	influx := func(q string, params url.Values) []byte {
		t.Helper()
		v := url.Values{"q": {q}, "db": {"plant"}}
		for k, p := range params {
			v[k] = p
		}
		r, err := http.PostForm(d.URL+"/query", v)
		require.NoError(t, err)
		defer r.Body.Close()
		b, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, r.StatusCode, "%s", b)
		return b
	}
	influx("CREATE DATABASE plant", nil)
	r, err := http.Post(d.URL+"/write?db=plant", "text/plain", strings.NewReader(lines))
	require.NoError(t, err)
	r.Body.Close()
	require.Equal(t, http.StatusNoContent, r.StatusCode)
	w := f.do("POST", "/write?db=plant", "", []byte(lines), "Authorization", "Token "+f.acme)
	require.Equal(t, http.StatusNoContent, w.status, "%s", w.body)

	queries := grafanaQueries(t)
	tf := fmt.Sprintf("time >= %s AND time < %s", rfc(start), rfc(start.Add(time.Hour)))
	for _, q := range compareQueries {
		queries = append(queries, strings.ReplaceAll(q, "tf", tf))
	}
	for i, q := range queries {
		params := url.Values{}
		if i%2 == 0 {
			params.Set("epoch", "ms")
		}
		want := influx(q, params)
		params.Set("q", q)
		params.Set("db", "plant")
		got := f.do("GET", "/query?"+params.Encode(), f.acme, nil)
		require.Equal(t, http.StatusOK, got.status, "%s: %s", q, got.body)
		if !sameAnswers(t, want, got.body) {
			t.Errorf("%s (epoch %q):\n InfluxDB: %s\ntimetable: %s", q, params.Get("epoch"), bytes.TrimSpace(want), bytes.TrimSpace(got.body))
		}
	}
}

// powerLines is a second measurement: decimals, two series with gaps.
func powerLines(start time.Time) string {
	var b strings.Builder
	for i := range 60 {
		at := start.Add(time.Duration(i) * time.Minute).UnixNano()
		if i < 20 || i >= 30 {
			fmt.Fprintf(&b, "power,site=a,phase=1 kw=%.2f %d\n", 1+0.05*float64(i%17), at)
		}
		if i%5 == 0 && i < 45 {
			fmt.Fprintf(&b, "power,site=b,phase=3 kw=%.1f %d\n", 2.5+0.1*float64(i/5), at)
		}
	}
	return b.String()
}

// meterLines are a measurement across the DST switches of Europe/Berlin
// and America/New_York (the spring ones of 2017, before the tests' now,
// and the autumn ones of 2016), a value every 20 minutes.
func meterLines() string {
	var b strings.Builder
	for _, r := range [][2]time.Time{
		{time.Date(2016, 10, 27, 0, 0, 0, 0, time.UTC), time.Date(2016, 11, 9, 0, 0, 0, 0, time.UTC)},
		{time.Date(2017, 3, 9, 0, 0, 0, 0, time.UTC), time.Date(2017, 3, 29, 0, 0, 0, 0, time.UTC)},
	} {
		for i, at := 0, r[0]; at.Before(r[1]); i, at = i+1, at.Add(20*time.Minute) {
			fmt.Fprintf(&b, "meter,site=x v=%.1f %d\n", float64(i*7%23)+0.5, at.UnixNano())
		}
	}
	return b.String()
}

// gaugeLines are a value now and then, with days without any across
// the DST switches of meterLines, which tz() fills.
const gaugeLines = `gauge g=1.5 1477569600000000000
gauge g=2.5 1478174400000000000
gauge g=4 1478606400000000000
gauge g=3.5 1490011200000000000
gauge g=7.25 1490702400000000000
`

// grafanaQueries are the queries of testdata/influxql/grafana.txt but
// SHOW RETENTION POLICIES, whose answer is timetable's own (docs/influxql.md).
func grafanaQueries(t *testing.T) []string {
	src, err := os.ReadFile("testdata/influxql/grafana.txt")
	require.NoError(t, err)
	var out []string
	for _, line := range strings.Split(string(src), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "SHOW RETENTION POLICIES") {
			out = append(out, line)
		}
	}
	return out
}

// sameAnswers compares two /query answers: the same JSON but for
// numbers, equal within a relative 1e-12 (InfluxDB computes in float64,
// timetable in decimals: docs/influxql.md, Differences).
func sameAnswers(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	for _, p := range []struct {
		raw []byte
		v   *any
	}{{a, &x}, {b, &y}} {
		dec := json.NewDecoder(bytes.NewReader(p.raw))
		dec.UseNumber()
		require.NoError(t, dec.Decode(p.v), "%s", p.raw)
	}
	return sameJSON(x, y)
}

// sameJSON compares two decoded answers: the same JSON but for numbers,
// equal within a relative 1e-12 (the last digits of a float's text).
func sameJSON(a, b any) bool { return sameJSONWithin(a, b, 1e-12) }

// sameJSONWithin compares two decoded answers (numbers as json.Number):
// the same JSON but for numbers, equal within the relative tolerance.
func sameJSONWithin(a, b any, tolerance float64) bool {
	switch a := a.(type) {
	case json.Number:
		n, ok := b.(json.Number)
		if !ok {
			return false
		}
		if a == n {
			return true
		}
		fa, err1 := a.Float64()
		fb, err2 := n.Float64()
		return err1 == nil && err2 == nil && (fa == fb || math.Abs(fa-fb) <= tolerance*math.Max(math.Abs(fa), math.Abs(fb)))
	case []any:
		bb, ok := b.([]any)
		if !ok || len(a) != len(bb) {
			return false
		}
		for i := range a {
			if !sameJSONWithin(a[i], bb[i], tolerance) {
				return false
			}
		}
		return true
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, v := range a {
			if w, ok := bm[k]; !ok || !sameJSONWithin(v, w, tolerance) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
