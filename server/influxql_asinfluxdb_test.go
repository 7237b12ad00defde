package server_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/server"
)

// The differences TestInfluxQLDifferential found and influxql fixed, each
// answered as InfluxDB 1.6 answers it (the answers are InfluxDB's,
// recorded), so that they stay fixed where influxd is not installed.
func TestInfluxQLAnswersAsInfluxDBDoes(t *testing.T) {
	f := newFixture(t, server.Options{})
	lines := `cpu,host=a f=1,g=5 1497510000000000000
cpu,host=b g=6 1497510010000000000
cpu,host=b f=3 1497510020000000000
mem,dc=x,host=b f=2 1497510000000000000
mem,dc=y,host=a f=4 1497510000000000000
disk v=1 1497510000000000000
disk,host=x v=1 1497510030000000000
disk,host=y v=1 1497510030000000000
down,host=a v=1 1497510000000000000
down,host=b v=1 1497510000000000000
down,host=c v=1 1497510000000000000
down,host=a v=1 1497510030000000000
flags b=true,s="y" 1497510000000000000
`
	w := f.do("POST", "/write?db=d", "", []byte(lines), "Authorization", "Token "+f.acme)
	require.Equal(t, http.StatusNoContent, w.status, "%s", w.body)
	for _, c := range []struct{ why, q, want string }{
		{"!= is false for an event without the field",
			"SELECT f FROM cpu WHERE f != 1",
			`{"results":[{"statement_id":0,"series":[{"name":"cpu","columns":["time","f"],"values":[["2017-06-15T07:00:20Z",3]]}]}]}`},
		{"!= is false for an event without the field, whatever is selected",
			"SELECT g FROM cpu WHERE f != 1",
			`{"results":[{"statement_id":0}]}`},
		{"DESC reverses the series",
			"SELECT f FROM cpu GROUP BY host ORDER BY time DESC",
			`{"results":[{"statement_id":0,"series":[{"name":"cpu","tags":{"host":"b"},"columns":["time","f"],"values":[["2017-06-15T07:00:20Z",3]]},{"name":"cpu","tags":{"host":"a"},"columns":["time","f"],"values":[["2017-06-15T07:00:00Z",1]]}]}]}`},
		{"series by their tags in the order of the keys' names, not of the GROUP BY",
			"SELECT f FROM mem GROUP BY host, dc",
			`{"results":[{"statement_id":0,"series":[{"name":"mem","tags":{"dc":"x","host":"b"},"columns":["time","f"],"values":[["2017-06-15T07:00:00Z",2]]},{"name":"mem","tags":{"dc":"y","host":"a"},"columns":["time","f"],"values":[["2017-06-15T07:00:00Z",4]]}]}]}`},
		{"measurements by name",
			"SELECT f FROM mem, cpu",
			`{"results":[{"statement_id":0,"series":[{"name":"cpu","columns":["time","f"],"values":[["2017-06-15T07:00:00Z",1],["2017-06-15T07:00:20Z",3]]},{"name":"mem","columns":["time","f"],"values":[["2017-06-15T07:00:00Z",2],["2017-06-15T07:00:00Z",4]]}]}]}`},
		{"DESC reverses the measurements",
			"SELECT f FROM mem, cpu WHERE host = 'a' ORDER BY time DESC",
			`{"results":[{"statement_id":0,"series":[{"name":"mem","columns":["time","f"],"values":[["2017-06-15T07:00:00Z",4]]},{"name":"cpu","columns":["time","f"],"values":[["2017-06-15T07:00:00Z",1]]}]}]}`},
		{"a count is filled with an integer",
			"SELECT count(f) FROM cpu WHERE time >= '2017-06-15T07:00:00Z' AND time < '2017-06-15T07:01:00Z' GROUP BY time(10s) fill(-1.5)",
			`{"results":[{"statement_id":0,"series":[{"name":"cpu","columns":["time","count"],"values":[["2017-06-15T07:00:00Z",1],["2017-06-15T07:00:10Z",-1],["2017-06-15T07:00:20Z",1],["2017-06-15T07:00:30Z",-1],["2017-06-15T07:00:40Z",-1],["2017-06-15T07:00:50Z",-1]]}]}]}`},
		{"a count's line is of integers",
			"SELECT count(v) FROM disk WHERE time >= '2017-06-15T07:00:00Z' AND time < '2017-06-15T07:00:40Z' GROUP BY time(10s) fill(linear)",
			`{"results":[{"statement_id":0,"series":[{"name":"disk","columns":["time","count"],"values":[["2017-06-15T07:00:00Z",1],["2017-06-15T07:00:10Z",1],["2017-06-15T07:00:20Z",1],["2017-06-15T07:00:30Z",2]]}]}]}`},
		{"a count's line is of integers, each value cut",
			"SELECT count(v) FROM down WHERE time >= '2017-06-15T07:00:00Z' AND time < '2017-06-15T07:00:40Z' GROUP BY time(10s) fill(linear)",
			`{"results":[{"statement_id":0,"series":[{"name":"down","columns":["time","count"],"values":[["2017-06-15T07:00:00Z",3],["2017-06-15T07:00:10Z",2],["2017-06-15T07:00:20Z",1],["2017-06-15T07:00:30Z",1]]}]}]}`},
		{"a number fills booleans with false, strings with nothing",
			"SELECT first(b), last(s), count(b) FROM flags WHERE time >= '2017-06-15T07:00:00Z' AND time < '2017-06-15T07:00:20Z' GROUP BY time(10s) fill(-1.5)",
			`{"results":[{"statement_id":0,"series":[{"name":"flags","columns":["time","first","last","count"],"values":[["2017-06-15T07:00:00Z",true,"y",1],["2017-06-15T07:00:10Z",false,"",-1]]}]}]}`},
		{"a count of nothing without GROUP BY time() is null",
			"SELECT count(f), max(g) FROM cpu WHERE host = 'b' AND time < '2017-06-15T07:00:15Z'",
			`{"results":[{"statement_id":0,"series":[{"name":"cpu","columns":["time","count","max"],"values":[["1970-01-01T00:00:00Z",null,6]]}]}]}`},
		{"a tag beside a field does not make a row",
			"SELECT f, host FROM cpu",
			`{"results":[{"statement_id":0,"series":[{"name":"cpu","columns":["time","f","host"],"values":[["2017-06-15T07:00:00Z",1,"a"],["2017-06-15T07:00:20Z",3,"b"]]}]}]}`},
		{"one selector twice answers the time of its value",
			"SELECT max(f), max(f) FROM cpu",
			`{"results":[{"statement_id":0,"series":[{"name":"cpu","columns":["time","max","max_1"],"values":[["2017-06-15T07:00:20Z",3,3]]}]}]}`},
	} {
		r := f.do("GET", "/query?"+url.Values{"q": {c.q}, "db": {"d"}}.Encode(), f.acme, nil)
		require.Equal(t, http.StatusOK, r.status, "%s: %s", c.q, r.body)
		require.True(t, sameAnswers(t, []byte(c.want), r.body), "%s: %s\n InfluxDB: %s\ntimetable: %s", c.why, c.q, c.want, r.body)
	}
}
