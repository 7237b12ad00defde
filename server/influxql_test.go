package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/tenant"
)

// writeWeather writes a measurement of three series over an hour: a
// reading a minute each, temp rising by one a minute from a base of the
// series.
func writeWeather(t *testing.T, f *fixture, start time.Time) {
	t.Helper()
	r := f.do("POST", "/write?db=plant", "", []byte(weatherLines(start)), "Authorization", "Token "+f.acme)
	require.Equal(t, http.StatusNoContent, r.status, "%s", r.body)
}

// weatherLines is writeWeather's line protocol.
func weatherLines(start time.Time) string {
	var b strings.Builder
	for i := range 60 {
		at := start.Add(time.Duration(i) * time.Minute).UnixNano()
		fmt.Fprintf(&b, "weather,host=web1,region=eu temp=%d,ok=true %d\n", 10+i, at)
		fmt.Fprintf(&b, "weather,host=web2,region=eu temp=%d %d\n", 20+i, at)
		fmt.Fprintf(&b, "weather,host=web3,region=us temp=%d,note=\"n%d\" %d\n", 30+i, i, at)
	}
	return b.String()
}

// influxQL runs a query and decodes its answer.
func influxQL(t *testing.T, f *fixture, q string, params ...string) api.InfluxQLResponse {
	t.Helper()
	v := url.Values{"q": {q}, "db": {"plant"}}
	for i := 0; i+1 < len(params); i += 2 {
		v.Set(params[i], params[i+1])
	}
	r := f.do("GET", "/query?"+v.Encode(), f.acme, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var out api.InfluxQLResponse
	require.NoError(t, json.Unmarshal(r.body, &out), "%s", r.body)
	return out
}

// rfc is a time as an InfluxQL string literal.
func rfc(t time.Time) string { return "'" + t.Format(time.RFC3339Nano) + "'" }

// The SHOW statements read the tenant's tables and the tags of their
// series.
func TestInfluxQLShow(t *testing.T) {
	f := newFixture(t, server.Options{})
	writeWeather(t, f, now.Add(-2*time.Hour))
	values := func(q string) [][]any {
		t.Helper()
		out := influxQL(t, f, q)
		require.Len(t, out.Results, 1)
		require.Empty(t, out.Results[0].Error, q)
		var all [][]any
		for _, s := range out.Results[0].Series {
			all = append(all, s.Values...)
		}
		return all
	}
	for _, tc := range []struct {
		q    string
		want [][]any
	}{
		{"SHOW DATABASES", [][]any{{"acme"}}},
		{"SHOW MEASUREMENTS", [][]any{{"weather"}}},
		{"SHOW MEASUREMENTS LIMIT 1", [][]any{{"weather"}}},
		{"SHOW MEASUREMENTS WITH MEASUREMENT =~ /(?i)WEA/ LIMIT 100", [][]any{{"weather"}}},
		{"SHOW MEASUREMENTS WITH MEASUREMENT = nope", nil},
		{`SHOW MEASUREMENTS WHERE "host" = 'web9'`, nil},
		{"SHOW TAG KEYS", [][]any{{"host"}, {"region"}}},
		{`SHOW TAG KEYS FROM "autogen"."weather"`, [][]any{{"host"}, {"region"}}},
		{`SHOW TAG VALUES WITH KEY = "host"`, [][]any{{"host", "web1"}, {"host", "web2"}, {"host", "web3"}}},
		{`SHOW TAG VALUES FROM "weather" WITH KEY = "host" WHERE "region" = 'eu'`, [][]any{{"host", "web1"}, {"host", "web2"}}},
		{`SHOW TAG VALUES FROM weather WITH KEY IN ("host", "region") WHERE host !~ /web[12]/`, [][]any{{"host", "web3"}, {"region", "us"}}},
		{`SHOW TAG VALUES FROM weather WITH KEY =~ /reg/`, [][]any{{"region", "eu"}, {"region", "us"}}},
		{`SHOW TAG VALUES FROM weather WITH KEY = "host" WHERE region = 'eu' OR host = 'web3' LIMIT 2 OFFSET 1`, [][]any{{"host", "web2"}, {"host", "web3"}}},
		{"SHOW FIELD KEYS FROM weather", [][]any{{"note", "string"}, {"ok", "boolean"}, {"temp", "float"}}},
		{`SHOW SERIES FROM weather WHERE host =~ /web[12]/ AND region = 'eu'`, [][]any{{"weather,host=web1,region=eu"}, {"weather,host=web2,region=eu"}}},
		{`SHOW RETENTION POLICIES ON "plant"`, [][]any{{"autogen", "0s", "168h0m0s", float64(1), true}}},
		{"CREATE DATABASE plant", nil},
	} {
		require.Equal(t, tc.want, values(tc.q), tc.q)
	}
}

// SELECT answers events and aggregates; the aggregates are those of the
// /v1 aggregate endpoint for the same series and buckets.
func TestInfluxQLSelect(t *testing.T) {
	f := newFixture(t, server.Options{})
	start := now.Add(-2 * time.Hour)
	writeWeather(t, f, start)
	end := start.Add(time.Hour)
	series := func(q string, params ...string) []api.InfluxQLSeries {
		t.Helper()
		out := influxQL(t, f, q, params...)
		require.Len(t, out.Results, 1)
		require.Empty(t, out.Results[0].Error, q)
		return out.Results[0].Series
	}

	// Raw events of one series picked by its tag, at an epoch.
	s := series(fmt.Sprintf(`SELECT "temp", host AS h FROM weather WHERE host = 'web1' AND time >= %dms LIMIT 2`, start.UnixMilli()), "epoch", "s")
	require.Equal(t, []api.InfluxQLSeries{{Name: "weather", Columns: []string{"time", "temp", "h"},
		Values: [][]any{{float64(start.Unix()), float64(10), "web1"}, {float64(start.Unix() + 60), float64(11), "web1"}}}}, s)
	// A filter on a field, newest first, *.
	s = series(`SELECT * FROM weather WHERE temp > 87 ORDER BY time DESC`)
	require.Equal(t, []string{"time", "host", "note", "ok", "region", "temp"}, s[0].Columns, "every field of the measurement, as InfluxDB")
	require.Equal(t, [][]any{{end.Add(-time.Minute).Format(time.RFC3339), "web3", "n59", nil, "us", float64(89)}, {end.Add(-2 * time.Minute).Format(time.RFC3339), "web3", "n58", nil, "us", float64(88)}}, s[0].Values)

	// Aggregates of one series, grouped by time, against /v1.
	q := fmt.Sprintf(`SELECT count("temp"), sum(temp), mean(temp), min(temp), max(temp), first(temp), last(temp), spread(temp), median(temp), percentile(temp, 90) FROM "weather" WHERE "host" = 'web2' AND time >= %s AND time < %s GROUP BY time(20m) fill(null)`, rfc(start), rfc(end))
	s = series(q)
	require.Len(t, s, 1)
	agg := f.do("GET", "/v1/tables/weather/aggregate?"+url.Values{"series": {"host=web2,region=eu"}, "bucket": {"20m"}, "fields": {"temp"},
		"fn": {"count,sum,avg,min,max,first,last,median,p90"}, "from": {start.Format(time.RFC3339)}, "to": {end.Add(-time.Nanosecond).Format(time.RFC3339Nano)}}.Encode(), f.acme, nil)
	require.Equal(t, http.StatusOK, agg.status, "%s", agg.body)
	var v1 struct {
		Buckets []struct {
			Start  string                    `json:"start"`
			Values map[string]map[string]any `json:"values"`
		} `json:"buckets"`
	}
	require.NoError(t, json.Unmarshal(agg.body, &v1))
	require.Len(t, s[0].Values, len(v1.Buckets))
	for i, b := range v1.Buckets {
		r := s[0].Values[i]
		tv := b.Values["temp"]
		require.Equal(t, b.Start, r[0])
		require.Equal(t, []any{tv["count"], tv["sum"], tv["avg"], tv["min"], tv["max"], tv["first"], tv["last"]}, r[1:8], "bucket %s", b.Start)
		require.Equal(t, tv["max"].(float64)-tv["min"].(float64), r[8])
		require.Equal(t, []any{tv["median"], tv["p90"]}, r[9:11])
	}

	// Every series, one read: every function, as /v1 answers it.
	s = series(fmt.Sprintf(`SELECT count(temp), mean(temp), first(temp), last(temp), median(temp), count(distinct(temp)) FROM weather WHERE time >= %s AND time < %s GROUP BY time(20m)`, rfc(start), rfc(end)))
	agg = f.do("GET", "/v1/tables/weather/aggregate?"+url.Values{"bucket": {"20m"}, "fields": {"temp"},
		"fn": {"count,avg,first,last,median,count_distinct"}, "from": {start.Format(time.RFC3339)}, "to": {end.Add(-time.Nanosecond).Format(time.RFC3339Nano)}}.Encode(), f.acme, nil)
	require.Equal(t, http.StatusOK, agg.status, "%s", agg.body)
	require.NoError(t, json.Unmarshal(agg.body, &v1))
	require.Len(t, s[0].Values, len(v1.Buckets))
	for i, b := range v1.Buckets {
		tv := b.Values["temp"]
		require.Equal(t, []any{b.Start, tv["count"], tv["avg"], tv["first"], tv["last"], tv["median"], tv["count_distinct"]}, s[0].Values[i])
	}

	// Several series: merged where exact, grouped by a tag, filled.
	s = series(fmt.Sprintf(`SELECT mean(temp), count(temp) FROM weather WHERE region = 'eu' AND time >= %s AND time < %s GROUP BY time(30m)`, rfc(start), rfc(end.Add(30*time.Minute))))
	require.Equal(t, [][]any{{start.Format(time.RFC3339), 29.5, float64(60)}, {start.Add(30 * time.Minute).Format(time.RFC3339), 59.5, float64(60)},
		{start.Add(time.Hour).Format(time.RFC3339), nil, float64(0)}}, s[0].Values)
	s = series(fmt.Sprintf(`SELECT max(temp) FROM weather WHERE time >= %s AND time < %s GROUP BY time(30m), "region" fill(none)`, rfc(start), rfc(end.Add(30*time.Minute))))
	require.Len(t, s, 2)
	require.Equal(t, map[string]string{"region": "eu"}, s[0].Tags)
	require.Equal(t, [][]any{{start.Format(time.RFC3339), float64(49)}, {start.Add(30 * time.Minute).Format(time.RFC3339), float64(79)}}, s[0].Values)
	require.Equal(t, map[string]string{"region": "us"}, s[1].Tags)
	s = series(fmt.Sprintf(`SELECT last(temp) FROM weather WHERE time >= %s AND time < %s GROUP BY * SLIMIT 1 SOFFSET 2`, rfc(start), rfc(end)))
	require.Equal(t, []api.InfluxQLSeries{{Name: "weather", Tags: map[string]string{"host": "web3", "region": "us"}, Columns: []string{"time", "last"},
		Values: [][]any{{end.Add(-time.Minute).Format(time.RFC3339), float64(89)}}}}, s, "a selector alone answers its event's time")
	for _, tc := range []struct {
		fill string
		want any
	}{{"fill(previous)", float64(24)}, {"fill(linear)", 46.5}, {"fill(-1)", float64(-1)}, {"fill(null)", nil}} {
		s = series(fmt.Sprintf(`SELECT max(temp) FROM weather WHERE host = 'web1' AND (temp < 25 OR temp > 55) AND time >= %s AND time < %s GROUP BY time(20m) %s`, rfc(start), rfc(end), tc.fill))
		require.Equal(t, [][]any{{start.Format(time.RFC3339), float64(24)}, {start.Add(20 * time.Minute).Format(time.RFC3339), tc.want},
			{start.Add(40 * time.Minute).Format(time.RFC3339), float64(69)}}, s[0].Values, tc.fill)
	}

	// What does not merge exactly says what to do instead.
	for q, msg := range map[string]string{
		`SELECT holt_winters(mean(temp), 2, 1) FROM weather WHERE region = 'eu'`:   "holt_winters() is not supported",
		`SELECT percentile(temp, 101) FROM weather WHERE host = 'web1'`:            "a number above 0 and at most 100",
		`SELECT mean(temp) FROM weather WHERE time > now() - 1h GROUP BY time(7m)`: "use an interval of at least 1s that divides a day",
		`SELECT derivative(temp) FROM weather`:                                     "derivative of raw values is not supported",
	} {
		out := influxQL(t, f, q)
		require.Contains(t, out.Results[0].Error, msg, q)
	}

	// Transforms over the buckets.
	s = series(fmt.Sprintf(`SELECT derivative(mean(temp), 1m), difference(max(temp)), moving_average(max(temp), 2) FROM weather WHERE host = 'web1' AND time >= %s AND time < %s GROUP BY time(20m)`, rfc(start), rfc(end)))
	require.Equal(t, [][]any{{start.Add(20 * time.Minute).Format(time.RFC3339), float64(1), float64(20), float64(39)},
		{start.Add(40 * time.Minute).Format(time.RFC3339), float64(1), float64(20), float64(59)}}, s[0].Values)
}

// GROUP BY time() with an offset, stddev, median and percentile of any
// rank, against answers worked out by hand: web1's temp is 10 + i at
// minute i.
func TestInfluxQLOffsetStddevPercentile(t *testing.T) {
	f := newFixture(t, server.Options{})
	start := now.Add(-2 * time.Hour)
	writeWeather(t, f, start)
	at := func(d time.Duration) string { return start.Add(d).Format(time.RFC3339) }
	// Buckets of 30m from 06:40: 10..19, 20..49, 50..69. The sample
	// standard deviation of k consecutive integers is sqrt(k(k+1)/12);
	// the 95th percentile is the value at rank ⌊0.95·k + 0.5⌋.
	want := [][]any{
		{at(-20 * time.Minute), float64(10), math.Sqrt(10 * 11 / 12.0), float64(19), 14.5},
		{at(10 * time.Minute), float64(30), math.Sqrt(30 * 31 / 12.0), float64(48), 34.5},
		{at(40 * time.Minute), float64(20), math.Sqrt(20 * 21 / 12.0), float64(68), 59.5},
	}
	f.clock.Set(now.Add(10 * time.Minute)) // now() is 09:10: an offset of 10m from the half hour
	for _, group := range []string{"time(30m, 10m)", "time(30m, -20m)", "time(30m, now())"} {
		q := fmt.Sprintf(`SELECT count(temp), stddev(temp), percentile(temp, 95), median(temp) FROM weather WHERE host = 'web1' AND time >= %s AND time < %s GROUP BY %s`,
			rfc(start), rfc(start.Add(time.Hour)), group)
		out := influxQL(t, f, q)
		require.Empty(t, out.Results[0].Error, q)
		got := out.Results[0].Series[0].Values
		require.Len(t, got, len(want), group)
		for i := range want {
			require.Equal(t, want[i][:2], got[i][:2], group)
			require.InDelta(t, want[i][2], got[i][2], 1e-12, group)
			require.Equal(t, want[i][3:], got[i][3:], group)
		}
	}
	// The whole measurement in one read, percentiles of any rank: from
	// 06:59 the minutes 0..58 of the three series (web1 10..68, web2
	// 20..78, web3 30..88), from 07:59 69, 79, 89.
	out := influxQL(t, f, fmt.Sprintf(`SELECT percentile(temp, 99.5), percentile(temp, 0.1), stddev(temp) FROM weather WHERE time >= %s AND time < %s GROUP BY time(1h, 59m)`,
		rfc(start), rfc(start.Add(time.Hour))))
	require.Empty(t, out.Results[0].Error)
	var sum, squares float64
	for base := 10; base <= 30; base += 10 {
		for v := base; v <= base+58; v++ {
			sum, squares = sum+float64(v), squares+float64(v*v)
		}
	}
	got := out.Results[0].Series[0].Values
	require.Len(t, got, 2)
	// InfluxQL's rank ⌊n·N/100 + 0.5⌋: 176 of 177 (87) and 0, no value.
	require.Equal(t, []any{at(-time.Minute), float64(87), nil}, got[0][:3])
	require.InDelta(t, math.Sqrt((177*squares-sum*sum)/(177*176)), got[0][3], 1e-12)
	require.Equal(t, []any{at(59 * time.Minute), float64(89), nil, float64(10)}, got[1])
	// One value has no standard deviation.
	out = influxQL(t, f, fmt.Sprintf(`SELECT stddev(temp) FROM weather WHERE host = 'web1' AND time >= %s GROUP BY time(1m) fill(none)`, rfc(start.Add(59*time.Minute))))
	require.Equal(t, [][]any{{at(59 * time.Minute), nil}}, out.Results[0].Series[0].Values)
}

// /query takes the key as InfluxDB 1.x clients send it, several
// statements each with its own result or error, POST forms, chunks.
func TestInfluxQLProtocol(t *testing.T) {
	f := newFixture(t, server.Options{})
	writeWeather(t, f, now.Add(-2*time.Hour))
	q := url.Values{"q": {"SHOW DATABASES; DROP DATABASE plant; SELECT holt_winters(mean(temp), 2, 1) FROM weather; SELECT count(temp) FROM weather WHERE host = 'web1'"}, "db": {"plant"}}
	check := func(r response) {
		t.Helper()
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		var out api.InfluxQLResponse
		require.NoError(t, json.Unmarshal(r.body, &out), "%s", r.body)
		require.Len(t, out.Results, 4)
		require.Equal(t, [][]any{{"acme"}}, out.Results[0].Series[0].Values)
		require.Equal(t, 1, out.Results[1].StatementID)
		require.Contains(t, out.Results[1].Error, "DROP DATABASE is not supported")
		require.Contains(t, out.Results[2].Error, "holt_winters() is not supported")
		require.Equal(t, float64(60), out.Results[3].Series[0].Values[0][1])
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("anyone:"+f.acme))
	check(f.do("GET", "/query?"+q.Encode(), f.acme, nil))                                    // Bearer
	check(f.do("GET", "/query?"+q.Encode(), "", nil, "Authorization", "Token "+f.acme))      // Token
	check(f.do("GET", "/query?"+q.Encode(), "", nil, "Authorization", basic))                // Basic
	check(f.do("GET", "/query?"+q.Encode()+"&u=anyone&p="+url.QueryEscape(f.acme), "", nil)) // u and p
	check(f.do("POST", "/query?u=x&p="+url.QueryEscape(f.acme), "", []byte(q.Encode()), "Content-Type", "application/x-www-form-urlencoded"))
	// A read-only key reads.
	_, reader, err := f.tenants.AddKey(t.Context(), "acme", tenant.ScopeRead, now)
	require.NoError(t, err)
	check(f.do("GET", "/query?"+q.Encode(), reader, nil))

	require.Equal(t, http.StatusUnauthorized, f.do("GET", "/query?"+q.Encode(), "", nil).status)
	require.Equal(t, http.StatusUnauthorized, f.do("GET", "/query?"+q.Encode()+"&p=nope", "", nil).status)
	bad := f.do("GET", "/query?q=SELEKT+1", f.acme, nil)
	require.Equal(t, http.StatusBadRequest, bad.status)
	require.Contains(t, string(bad.body), "error parsing query")
	require.Equal(t, http.StatusBadRequest, f.do("GET", "/query", f.acme, nil).status)
	require.Equal(t, http.StatusBadRequest, f.do("GET", "/query?q=SHOW+DATABASES&epoch=d", f.acme, nil).status)

	// Chunks: a JSON document a line, every chunk_size rows of a series.
	r := f.do("GET", "/query?"+url.Values{"q": {"SELECT temp FROM weather WHERE host = 'web1'; SHOW DATABASES"}, "db": {"acme"}, "chunked": {"true"}, "chunk_size": {"25"}}.Encode(), f.acme, nil)
	require.Equal(t, http.StatusOK, r.status)
	lines := strings.Split(strings.TrimSpace(string(r.body)), "\n")
	require.Len(t, lines, 4)
	rows := 0
	for i, line := range lines {
		var out api.InfluxQLResponse
		require.NoError(t, json.Unmarshal([]byte(line), &out))
		res := out.Results[0]
		require.Equal(t, i < 2, res.Partial, line)
		if i < 3 {
			rows += len(res.Series[0].Values)
		}
	}
	require.Equal(t, 60, rows)
	// pretty indents.
	r = f.do("GET", "/query?q=SHOW+DATABASES&pretty=true", f.acme, nil)
	require.Contains(t, string(r.body), "\n    \"results\": [")
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// The queries Grafana sends answer as testdata/influxql/grafana.golden
// says (go test -run TestInfluxQLGrafana -update rewrites it), each
// without an error.
func TestInfluxQLGrafana(t *testing.T) {
	f := newFixture(t, server.Options{})
	writeWeather(t, f, now.Add(-2*time.Hour))
	src, err := os.ReadFile("testdata/influxql/grafana.txt")
	require.NoError(t, err)
	var got strings.Builder
	for _, para := range strings.Split(string(src), "\n\n") {
		var who, q string
		for _, line := range strings.Split(strings.TrimSpace(para), "\n") {
			if c, ok := strings.CutPrefix(line, "# "); ok {
				who = c
			} else {
				q = line
			}
		}
		if q == "" {
			continue
		}
		for _, method := range []string{"GET", "POST"} {
			r := f.do(method, "/query?db=plant&epoch=ms", f.acme, []byte(url.Values{"q": {q}}.Encode()), "Content-Type", "application/x-www-form-urlencoded")
			if method == "GET" {
				r = f.do(method, "/query?"+url.Values{"q": {q}, "db": {"plant"}, "epoch": {"ms"}}.Encode(), f.acme, nil)
			}
			require.Equal(t, http.StatusOK, r.status, "%s: %s", who, r.body)
			var out api.InfluxQLResponse
			require.NoError(t, json.Unmarshal(r.body, &out))
			require.Empty(t, out.Results[0].Error, "%s: %s", who, q)
			require.NotEmpty(t, out.Results[0].Series, "%s: %s", who, q)
			if method == "GET" {
				fmt.Fprintf(&got, "# %s\n%s\n%s\n", who, q, bytes.TrimSpace(r.body))
			}
		}
	}
	golden := "testdata/influxql/grafana.golden"
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(got.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), got.String())
}

// A series written through the JSON API, whose name is not a tag set, is
// known by the tag "series".
func TestInfluxQLPlainSeries(t *testing.T) {
	f := newFixture(t, server.Options{})
	at := now.Add(-time.Hour)
	body := fmt.Sprintf(`[{"time":%q,"series":"car-17","fields":{"speed":88}},{"time":%q,"series":"car-18","fields":{"speed":90}}]`, at.Format(time.RFC3339), at.Format(time.RFC3339))
	require.Equal(t, http.StatusOK, f.postJSON(f.acme, "cars", body).status)
	out := influxQL(t, f, `SHOW TAG VALUES FROM cars WITH KEY = "series"; SELECT speed FROM cars WHERE "series" = 'car-18'; SHOW SERIES; SELECT * FROM cars; SELECT "series", speed FROM cars WHERE speed < 89`)
	require.Equal(t, [][]any{{"series", "car-17"}, {"series", "car-18"}}, out.Results[0].Series[0].Values)
	require.Equal(t, [][]any{{at.Format(time.RFC3339), float64(90)}}, out.Results[1].Series[0].Values)
	require.Equal(t, [][]any{{"cars,series=car-17"}, {"cars,series=car-18"}}, out.Results[2].Series[0].Values)
	// The tag is a column of * and can be selected, as InfluxDB's tags.
	require.Equal(t, []string{"time", "series", "speed"}, out.Results[3].Series[0].Columns)
	require.ElementsMatch(t, [][]any{{at.Format(time.RFC3339), "car-17", float64(88)}, {at.Format(time.RFC3339), "car-18", float64(90)}}, out.Results[3].Series[0].Values)
	require.Equal(t, [][]any{{at.Format(time.RFC3339), "car-17", float64(88)}}, out.Results[4].Series[0].Values)
}
