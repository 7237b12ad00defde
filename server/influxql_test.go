package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/server"
)

// writeWeather writes a measurement of three series over an hour: a
// reading a minute each, temp rising by one a minute from a base of the
// series.
func writeWeather(t *testing.T, f *fixture, start time.Time) {
	t.Helper()
	var b strings.Builder
	for i := range 60 {
		at := start.Add(time.Duration(i) * time.Minute).UnixNano()
		fmt.Fprintf(&b, "weather,host=web1,region=eu temp=%d,ok=true %d\n", 10+i, at)
		fmt.Fprintf(&b, "weather,host=web2,region=eu temp=%d %d\n", 20+i, at)
		fmt.Fprintf(&b, "weather,host=web3,region=us temp=%d,note=\"n%d\" %d\n", 30+i, i, at)
	}
	r := f.do("POST", "/write?db=plant", "", []byte(b.String()), "Authorization", "Token "+f.acme)
	require.Equal(t, http.StatusNoContent, r.status, "%s", r.body)
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

func TestInfluxQLExplore(t *testing.T) {
	f := newFixture(t, server.Options{})
	start := now.Add(-2 * time.Hour).Truncate(time.Hour)
	writeWeather(t, f, start)
	for _, q := range []string{
		"SHOW DATABASES",
		"SHOW MEASUREMENTS",
		"SHOW TAG KEYS FROM weather",
		`SHOW TAG VALUES FROM weather WITH KEY = "host" WHERE region = 'eu'`,
		"SHOW FIELD KEYS",
		"SHOW SERIES FROM weather WHERE host =~ /web[12]/",
		"SHOW RETENTION POLICIES",
		fmt.Sprintf("SELECT temp, host FROM weather WHERE host = 'web1' AND time >= %d LIMIT 3", start.UnixNano()),
		"SELECT * FROM weather WHERE temp > 88 ORDER BY time DESC LIMIT 2",
		fmt.Sprintf("SELECT mean(temp), count(temp), max(temp), spread(temp) FROM weather WHERE time >= '%s' AND time < '%s' GROUP BY time(20m), host fill(null)", start.Format(time.RFC3339), start.Add(time.Hour).Format(time.RFC3339)),
		fmt.Sprintf("SELECT mean(temp) FROM weather WHERE region = 'eu' AND time >= '%s' AND time < '%s' GROUP BY time(20m)", start.Format(time.RFC3339), start.Add(time.Hour).Format(time.RFC3339)),
		fmt.Sprintf("SELECT derivative(mean(temp), 1m), last(temp) FROM weather WHERE host = 'web1' AND time >= '%s' AND time < '%s' GROUP BY time(20m)", start.Format(time.RFC3339), start.Add(time.Hour).Format(time.RFC3339)),
		"SELECT last(temp) FROM weather WHERE host='web3'",
		"SELECT median(temp) FROM weather",
		"SELECT stddev(temp) FROM weather",
		"DROP DATABASE plant",
	} {
		out := influxQL(t, f, q)
		b, _ := json.Marshal(out)
		t.Logf("%s\n  → %s", q, b)
	}
}
