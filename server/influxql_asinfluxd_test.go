package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/internal/clients"
	"github.com/timetabledb/timetable/server"
)

// asInfluxdCase is one statement of TestAnswersAsInfluxd: the line
// protocol written first, in writes of their own where separated by a
// line "--", and the statement asked of both servers.
type asInfluxdCase struct {
	name  string
	lines string
	query string
	// precision is the writes' precision parameter; noDB asks the
	// statement without a db parameter.
	precision string
	noDB      bool
}

// The data of several cases. Times written @-30s are that long before
// the time the test runs at (both servers read now() from the clock).
const (
	// cpuSeconds is a value a second, from 2010-07-01T18:47:00Z.
	cpuSeconds = `cpu value=10 1278010020000000000
cpu value=15 1278010021000000000
cpu value=20 1278010022000000000
cpu value=25 1278010023000000000
`
	// cpuGaps has two seconds of values, a gap, two more.
	cpuGaps = `cpu value=10 1278010020000000000
cpu value=15 1278010021000000000
cpu value=20 1278010026000000000
cpu value=25 1278010027000000000
`
	// edges has values at the starts of 5 s buckets, the last at the
	// statements' inclusive end.
	edges = `cpu value=1 946684800000000000
cpu value=2 946684805000000000
cpu value=3 946684810000000000
cpu,host=b value=3 946684810000000000
cpu,host=c value=3 946684810000000000
`
	// tagless is one series without the tag the other has.
	tagless = `cpu value=1 946684800000000000
cpu,host=server01 value=2 946684801000000000
`
	// shared are series with a point at one instant.
	shared = `cpu,host=a value=1 946684800000000000
cpu,host=b value=2 946684800000000000
cpu,host=c value=3 946684800000000000
`
	// two are measurements with fields of their own.
	two = `m1,host=a f1=1 946684800000000000
m2,region=eu f2=2 946684801000000000
m2,region=eu f2=3,f3="x" 946684802000000000
`
	// regions are measurements with and without a region.
	regions = `cpu,region=us-west value=1 946684800000000000
gpu,region=ca-east value=1 946684800000000000
mem,host=a value=1 946684800000000000
`
	// sites are series of two sites, two of one, with points at one
	// instant and gaps.
	sites = `w,site=a,host=1 temp=1 946684800000000000
w,site=a,host=2 temp=5 946684801000000000
w,site=a,host=1 temp=3 946684803000000000
w,site=a,host=2 temp=2 946684803000000000
w,site=b,host=3 temp=7 946684802000000000
w,site=a,host=1 temp=4 946684811000000000
w,site=b,host=3 temp=9 946684814000000000
`
	// ab are two fields, not always both.
	ab = `ab a=1,b=2 946684800000000000
ab a=3 946684801000000000
ab,host=x b=5 946684802000000000
ab a=4,b=1 946684803000000000
`
	// modes are values repeated in two series, and strings.
	modes = `md v=3 946684800000000000
md v=1 946684801000000000
md v=3 946684802000000000
md v=1 946684803000000000
md v=2 946684804000000000
md,h=x v=5 946684804000000000
md,h=x v=5 946684805000000000
md s="b" 946684806000000000
md s="a" 946684807000000000
`
	// tagSets are series of every tag set of host and region, some
	// without one or both.
	tagSets = `cpu value=1 946684800000000000
cpu,host=a value=2 946684801000000000
cpu,host=b value=3 946684802000000000
cpu,region=eu value=4 946684803000000000
cpu,host=a,region=eu value=5 946684804000000000
cpu,host=b,region=us value=6 946684805000000000
`
	// recent are points written seconds apart, just now.
	recent = `live,host=a value=1 @-30s
--
live,host=a value=2 @-20s
--
live,host=a value=3 @-10s
`
)

// asInfluxdCases are answers InfluxDB gives that timetable once gave wrong, one case
// each at least: statements InfluxDB 1.x answers that timetable answered
// otherwise.
var asInfluxdCases = []asInfluxdCase{
	// 1. Transforms over GROUP BY time() read one interval before the
	// range (after it under ORDER BY time DESC) and fill before the
	// transform; each column's rows are InfluxDB's iterator's.
	{name: "difference of count", lines: cpuSeconds,
		query: `SELECT difference(count(value)) FROM cpu WHERE time >= '2010-07-01T18:47:00Z' AND time <= '2010-07-01T18:47:03Z' GROUP BY time(2s)`},
	{name: "difference of mean", lines: cpuSeconds,
		query: `SELECT difference(mean(value)) FROM cpu WHERE time >= '2010-07-01T18:47:00Z' AND time <= '2010-07-01T18:47:03Z' GROUP BY time(2s)`},
	{name: "moving_average fill(0)", lines: cpuGaps,
		query: `SELECT moving_average(mean(value), 2) FROM cpu WHERE time >= '2010-07-01T18:47:00Z' AND time <= '2010-07-01T18:47:09Z' GROUP BY time(2s) fill(0)`},
	{name: "moving_average 3 fill(null)", lines: cpuGaps,
		query: `SELECT moving_average(mean(value), 3) FROM cpu WHERE time >= '2010-07-01T18:47:02Z' AND time <= '2010-07-01T18:47:09Z' GROUP BY time(2s)`},
	{name: "derivative fill(0)", lines: cpuGaps,
		query: `SELECT derivative(mean(value)) FROM cpu WHERE time >= '2010-07-01T18:47:00Z' AND time <= '2010-07-01T18:47:09Z' GROUP BY time(2s) fill(0)`},
	{name: "derivative fill(previous)", lines: cpuGaps,
		query: `SELECT derivative(mean(value)) FROM cpu WHERE time >= '2010-07-01T18:47:00Z' AND time <= '2010-07-01T18:47:09Z' GROUP BY time(2s) fill(previous)`},
	{name: "derivative fill(none) unaligned", lines: cpuGaps,
		query: `SELECT derivative(mean(value)) FROM cpu WHERE time >= '2010-07-01T18:47:01Z' AND time <= '2010-07-01T18:47:09Z' GROUP BY time(2s) fill(none)`},
	{name: "non_negative_derivative fill(linear)", lines: cpuGaps,
		query: `SELECT non_negative_derivative(max(value), 1s) FROM cpu WHERE time >= '2010-07-01T18:47:00Z' AND time <= '2010-07-01T18:47:09Z' GROUP BY time(2s) fill(linear)`},
	{name: "difference fill(null) desc", lines: cpuGaps,
		query: `SELECT difference(sum(value)) FROM cpu WHERE time >= '2010-07-01T18:47:00Z' AND time <= '2010-07-01T18:47:09Z' GROUP BY time(2s) ORDER BY time DESC`},
	// moving_average(f, n) reads one interval before the range too, not
	// n - 1; under ORDER BY time DESC, one after it.
	{name: "moving_average 3 from the range's second bucket", lines: cpuSeconds,
		query: `SELECT moving_average(mean(value), 3) FROM cpu WHERE time >= '2010-07-01T18:47:02Z' AND time <= '2010-07-01T18:47:03Z' GROUP BY time(1s)`},
	{name: "moving_average desc reads the interval after", lines: cpuSeconds,
		query: `SELECT moving_average(mean(value), 3) FROM cpu WHERE time >= '2010-07-01T18:47:00Z' AND time <= '2010-07-01T18:47:01Z' GROUP BY time(1s) ORDER BY time DESC`},
	// An aggregate beside a transform reads the range alone, its first
	// bucket too; cumulative_sum reads nothing before it.
	{name: "mean beside difference in the first bucket", lines: cpuSeconds,
		query: `SELECT mean(value), difference(mean(value)) FROM cpu WHERE time >= '2010-07-01T18:47:01Z' AND time <= '2010-07-01T18:47:03Z' GROUP BY time(2s)`},
	{name: "count beside cumulative_sum", lines: cpuSeconds,
		query: `SELECT cumulative_sum(mean(value)), count(value) FROM cpu WHERE time >= '2010-07-01T18:47:01Z' AND time <= '2010-07-01T18:47:09Z' GROUP BY time(2s)`},
	// LIMIT cuts each column's rows on its own; a column without a row at
	// a time is null, fill(number)'s number, or the row before's value
	// under fill(previous).
	{name: "limit of a transform's rows", lines: cpuGaps,
		query: `SELECT count(value), derivative(mean(value)) FROM cpu WHERE time >= '2010-07-01T18:47:00Z' AND time <= '2010-07-01T18:47:09Z' GROUP BY time(1s) LIMIT 2`},
	{name: "limit of a transform's rows fill(previous)", lines: cpuGaps,
		query: `SELECT count(value), derivative(mean(value)) FROM cpu WHERE time >= '2010-07-01T18:47:00Z' AND time <= '2010-07-01T18:47:09Z' GROUP BY time(1s) fill(previous) LIMIT 2`},
	// stddev() of one value is NaN to a transform: its rows are null,
	// not filled, and count for LIMIT.
	{name: "difference of stddev of one value", lines: cpuGaps,
		query: `SELECT count(value), non_negative_difference(stddev(value)) FROM cpu WHERE time >= '2010-07-01T18:47:00Z' AND time <= '2010-07-01T18:47:09Z' GROUP BY time(1s) fill(0) LIMIT 3`},
	{name: "moving_average beside count fill(0)", lines: cpuGaps,
		query: `SELECT moving_average(mean(value), 3), count(value) FROM cpu WHERE time >= '2010-07-01T18:47:02Z' AND time <= '2010-07-01T18:47:09Z' GROUP BY time(1s) fill(0)`},

	// 2. An inclusive end holds the events at it.
	{name: "sum to an inclusive end", lines: edges,
		query: `SELECT sum(value) FROM cpu WHERE time >= '2000-01-01T00:00:00Z' AND time <= '2000-01-01T00:00:10Z' GROUP BY time(5s)`},
	{name: "count to an inclusive end", lines: edges,
		query: `SELECT count(value) FROM cpu WHERE time >= '2000-01-01T00:00:00Z' AND time <= '2000-01-01T00:00:10Z' GROUP BY time(5s)`},
	{name: "count to an exclusive end", lines: edges,
		query: `SELECT count(value) FROM cpu WHERE time >= '2000-01-01T00:00:00Z' AND time < '2000-01-01T00:00:10Z' GROUP BY time(5s)`},

	// 3. No rows where nothing matches.
	{name: "mean of nothing fill(1)", lines: edges,
		query: `SELECT mean(value) FROM cpu WHERE time >= '2000-01-01T00:00:00Z' AND time <= '2000-01-01T00:00:15Z' AND value > 50 GROUP BY time(5s) fill(1)`},
	{name: "count of nothing", lines: edges,
		query: `SELECT count(value) FROM cpu WHERE value = 100`},
	{name: "measurement empty in the range", lines: two,
		query: `SELECT count(f1) FROM m1, m2 WHERE time >= '2000-01-01T00:00:00Z' AND time < '2000-01-01T00:00:05Z' GROUP BY time(5s)`},

	// 4. A series without a tag has it empty.
	{name: "group by a tag some lack", lines: tagless, query: `SELECT value FROM cpu GROUP BY host`},
	{name: "group by * some lack", lines: tagless, query: `SELECT value FROM cpu GROUP BY *`},
	{name: "tag equal to empty", lines: tagless, query: `SELECT value FROM cpu WHERE host = ''`},
	{name: "tag not equal", lines: tagless, query: `SELECT value FROM cpu WHERE host != 'server01'`},
	{name: "count by a tag some lack", lines: tagless, query: `SELECT count(value) FROM cpu GROUP BY host`},

	// 5. A raw query without an upper bound reads every point written.
	{name: "raw without bounds", lines: recent, query: `SELECT * FROM live`},
	{name: "raw from an hour ago", lines: recent, query: `SELECT * FROM live WHERE time > now() - 1h`},

	// 6. Selectors over series sharing one timestamp answer it.
	{name: "first over shared", lines: shared, query: `SELECT first(value) FROM cpu`},
	{name: "last over shared", lines: shared, query: `SELECT last(value) FROM cpu`},
	{name: "max over shared", lines: shared, query: `SELECT max(value) FROM cpu`},

	// 7. Several measurements: each has the union of the columns.
	{name: "two measurements raw", lines: two, query: `SELECT * FROM m1, m2`},
	{name: "measurements by regex", lines: two, query: `SELECT f1, f2 FROM /^m/`},

	// 8. SHOW MEASUREMENTS WHERE.
	{name: "show measurements not regex", lines: regions, query: `SHOW MEASUREMENTS WHERE region !~ /ca.*/`},
	{name: "show measurements where time", lines: regions, query: `SHOW MEASUREMENTS WHERE time > 0`},

	// 9. Names that do not exist.
	{name: "database not found", lines: cpuSeconds, query: `SELECT * FROM nodb.autogen.cpu`},
	{name: "database name required", lines: cpuSeconds, query: `SELECT * FROM cpu`, noDB: true},
	{name: "show without database", lines: cpuSeconds, query: `SHOW MEASUREMENTS`, noDB: true},

	// 10. Answered where timetable refused.
	{name: "after the newest point", lines: recent, query: `SELECT count(value) FROM live WHERE time > now()`},
	{name: "raw after the newest point", lines: recent, query: `SELECT value FROM live WHERE time > now()`},
	{name: "before the oldest point", lines: recent, query: `SELECT mean(value) FROM live WHERE time < now() - 1d`},
	{name: "closed range before the data", lines: edges,
		query: `SELECT mean(value) FROM cpu WHERE time >= '1999-12-31T22:00:00Z' AND time < '1999-12-31T23:00:00Z' GROUP BY time(10m)`},
	{name: "precision m", lines: "cpu value=1 25000000\ncpu value=2 25000001\n", precision: "m", query: `SELECT * FROM cpu`},
	{name: "precision h", lines: "cpu value=1 400000\ncpu value=2 400001\n", precision: "h", query: `SELECT * FROM cpu`},
	{name: "count distinct", lines: edges, query: `SELECT COUNT(DISTINCT value) FROM cpu`},
	{name: "field and wildcard", lines: tagless, query: `SELECT value, * FROM cpu`},
	{name: "tag compared with a field", lines: "cpu,host=2 value=2 946684800000000000\ncpu,host=3 value=2 946684801000000000\n",
		query: `SELECT value FROM cpu WHERE host = value`},
	{name: "tag compared with a tag", lines: "cpu,a=x,b=x value=1 946684800000000000\ncpu,a=x,b=y value=2 946684801000000000\n",
		query: `SELECT value FROM cpu WHERE a = b`},
	// Point 3: selectors over many series at once.
	{name: "last by site", lines: sites,
		query: `SELECT last(temp) FROM w WHERE time >= '2000-01-01T00:00:00Z' AND time <= '2000-01-01T00:00:15Z' GROUP BY time(5s), site`},
	{name: "first and mean by site", lines: sites,
		query: `SELECT first(temp), mean(temp) FROM w WHERE time >= '2000-01-01T00:00:00Z' AND time <= '2000-01-01T00:00:15Z' GROUP BY time(5s), site fill(none)`},
	{name: "last of series picked", lines: sites, query: `SELECT last(temp) FROM w WHERE host =~ /[12]/`},
	{name: "first of series picked", lines: sites, query: `SELECT first(temp) FROM w WHERE site = 'a' AND time >= '2000-01-01T00:00:01Z'`},
	{name: "cumulative_sum", lines: cpuGaps,
		query: `SELECT cumulative_sum(mean(value)) FROM cpu WHERE time >= '2010-07-01T18:47:00Z' AND time <= '2010-07-01T18:47:09Z' GROUP BY time(2s)`},
	{name: "cumulative_sum fill(0)", lines: cpuGaps,
		query: `SELECT cumulative_sum(mean(value)) FROM cpu WHERE time >= '2010-07-01T18:47:00Z' AND time <= '2010-07-01T18:47:09Z' GROUP BY time(2s) fill(0)`},
	{name: "measurement cardinality", lines: regions, query: `SHOW MEASUREMENT CARDINALITY`},
	{name: "measurement exact cardinality where", lines: regions, query: `SHOW MEASUREMENT EXACT CARDINALITY WHERE region = 'us-west'`},
	{name: "series cardinality", lines: tagless + "mem,host=a value=1 946684800000000000\n", query: `SHOW SERIES CARDINALITY`},
	{name: "series exact cardinality", lines: tagless + "mem,host=a value=1 946684800000000000\n", query: `SHOW SERIES EXACT CARDINALITY`},
	{name: "series exact cardinality from", lines: regions, query: `SHOW SERIES EXACT CARDINALITY FROM cpu WHERE region = 'us-west'`},
	{name: "field key cardinality", lines: two, query: `SHOW FIELD KEY CARDINALITY`},
	{name: "tag key exact cardinality", lines: two, query: `SHOW TAG KEY EXACT CARDINALITY`},
	{name: "tag values exact cardinality", lines: regions, query: `SHOW TAG VALUES EXACT CARDINALITY WITH KEY = region`},
	{name: "sum of fields", lines: ab, query: `SELECT a + b FROM ab`},
	{name: "field times a number", lines: ab, query: `SELECT a * 2, b FROM ab`},
	{name: "math aliased", lines: ab, query: `SELECT (a + 1) * b AS s, a FROM ab`},
	{name: "mean times a number", lines: ab, query: `SELECT mean(a) * 2 FROM ab`},
	{name: "math of aggregates by time", lines: ab,
		query: `SELECT mean(a) * 2, max(b) - min(b) FROM ab WHERE time >= '2000-01-01T00:00:00Z' AND time < '2000-01-01T00:00:04Z' GROUP BY time(2s)`},
	{name: "sum of means", lines: ab, query: `SELECT mean(a) + mean(b) FROM ab`},
	{name: "field beside max", lines: ab, query: `SELECT max(a), b FROM ab`},
	{name: "fields beside max by time", lines: ab,
		query: `SELECT max(b), a, host FROM ab WHERE time >= '2000-01-01T00:00:00Z' AND time < '2000-01-01T00:00:04Z' GROUP BY time(2s)`},
	{name: "field beside min filled", lines: ab,
		query: `SELECT min(b), a FROM ab WHERE time >= '2000-01-01T00:00:00Z' AND time < '2000-01-01T00:00:06Z' GROUP BY time(2s)`},
	{name: "field beside last", lines: ab, query: `SELECT last(a), b FROM ab`},
	{name: "field beside max by host", lines: ab, query: `SELECT max(a), b FROM ab GROUP BY host`},
	{name: "percentile by site", lines: sites,
		query: `SELECT percentile(temp, 90), median(temp) FROM w WHERE time >= '2000-01-01T00:00:00Z' AND time <= '2000-01-01T00:00:15Z' GROUP BY time(5s), site`},
	{name: "stddev and distinct of series picked", lines: sites, query: `SELECT stddev(temp), count(distinct(temp)), median(temp) FROM w WHERE site = 'a'`},
	{name: "distinct", lines: modes, query: `SELECT distinct(v) FROM md`},
	{name: "distinct by time", lines: modes,
		query: `SELECT distinct(v) FROM md WHERE time >= '2000-01-01T00:00:00Z' AND time < '2000-01-01T00:00:08Z' GROUP BY time(2s)`},
	{name: "distinct strings", lines: modes, query: `SELECT distinct(s) FROM md`},
	{name: "top", lines: modes, query: `SELECT top(v, 3) FROM md`},
	{name: "bottom", lines: modes, query: `SELECT bottom(v, 2) FROM md`},
	{name: "top by time", lines: modes,
		query: `SELECT top(v, 2) FROM md WHERE time >= '2000-01-01T00:00:00Z' AND time < '2000-01-01T00:00:08Z' GROUP BY time(2s)`},
	{name: "elapsed", lines: modes, query: `SELECT elapsed(v) FROM md`},
	{name: "elapsed in ms", lines: modes, query: `SELECT elapsed(v, 1ms) FROM md WHERE h = 'x'`},
	{name: "elapsed by tag", lines: modes, query: `SELECT elapsed(v, 1s) FROM md GROUP BY h`},
	{name: "elapsed by time", lines: modes,
		query: `SELECT elapsed(v, 1s) FROM md WHERE time >= '2000-01-01T00:00:00Z' AND time < '2000-01-01T00:00:08Z' GROUP BY time(2s)`},
	{name: "tag or field", lines: tagless, query: `SELECT value FROM cpu WHERE host = 'server01' OR value = 1`},
	{name: "tag or field none", lines: tagless, query: `SELECT value FROM cpu WHERE host = 'nope' OR value = 5`},

	// 11. SLIMIT and SOFFSET pick groups in the order of InfluxDB's tag
	// set keys; a name neither a tag nor a field is a tag no series
	// has; GROUP BY * and field names span the measurements of FROM; a
	// count of a field a measurement lacks is null; a percentile of too
	// few values is no point; SHOW MEASUREMENTS WHERE != is none of the
	// series.
	{name: "slimit of groups some lack", lines: tagSets, query: `SELECT count(value) FROM cpu GROUP BY host, region SLIMIT 3`},
	{name: "soffset of groups some lack", lines: tagSets, query: `SELECT count(value) FROM cpu GROUP BY host, region SLIMIT 2 SOFFSET 3`},
	{name: "slimit of group by * desc", lines: tagSets, query: `SELECT value FROM cpu GROUP BY * ORDER BY time DESC SLIMIT 2 SOFFSET 1`},
	{name: "tag no series has not equal", lines: two, query: `SELECT f2 FROM m2 WHERE host != 'a'`},
	{name: "tag no series has regex", lines: two, query: `SELECT f2 FROM m2 WHERE host =~ /./`},
	{name: "measurement of no tag", lines: "net rx=1 946684800000000000\nnet rx=2 946684801000000000\n",
		query: `SELECT count(rx) FROM net WHERE host != 'b'`},
	{name: "string field of another measurement", lines: two, query: `SELECT * FROM m1, m2 WHERE f3 != 'y'`},
	{name: "group by * of two measurements", lines: two, query: `SELECT * FROM m1, m2 GROUP BY *`},
	{name: "count by * of two measurements", lines: two, query: `SELECT count(f2) FROM m1, m2 GROUP BY *`},
	{name: "count of a field one lacks", lines: two,
		query: `SELECT count(f1), count(f2) FROM m1, m2 WHERE time >= '2000-01-01T00:00:00Z' AND time < '2000-01-01T00:00:04Z' GROUP BY time(2s)`},
	{name: "count of a field one lacks fill(0)", lines: two,
		query: `SELECT count(f1), count(f2) FROM m1, m2 WHERE time >= '2000-01-01T00:00:00Z' AND time < '2000-01-01T00:00:04Z' GROUP BY time(2s) fill(0)`},
	{name: "percentile of too few", lines: edges, query: `SELECT percentile(value, 5) FROM cpu`},
	{name: "percentile of too few beside count", lines: edges, query: `SELECT percentile(value, 5), count(value) FROM cpu`},
	{name: "percentile of series picked", lines: sites, query: `SELECT percentile(temp, 90) FROM w WHERE site = 'a'`},
	{name: "show measurements not equal", lines: tagSets, query: `SHOW MEASUREMENTS WHERE host != 'a'`},
	{name: "show measurements none not regex", lines: regions, query: `SHOW MEASUREMENTS WHERE host !~ /a/`},
	{name: "show measurements or", lines: regions, query: `SHOW MEASUREMENTS WHERE region = 'us-west' OR host = 'a'`},
}

// recentTime reads @-30s as 30 s before at, in nanoseconds.
var recentTime = regexp.MustCompile(`@(-?[0-9]+[smh])`)

// TestAnswersAsInfluxd writes each case's line protocol into InfluxDB
// 1.x (Debian's influxd, on loopback) and into timetable, a database and
// a tenant of its own each, and checks that both answer its statement
// alike (sameAnswers).
func TestAnswersAsInfluxd(t *testing.T) {
	influxd := clients.Command(t, "influxd")
	d, err := clients.StartInfluxd(influxd, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(d.Close)
	store, cfg := backend.Open(t)
	f := newFixtureBudget(t, store, cfg, prometheus.NewRegistry(), server.Options{}, engine.TableBudget{BackfillHorizon: engine.NoBackfillHorizon})
	at := time.Now().UTC().Truncate(time.Second)
	f.clock.Set(at)

	influx := func(path string, v url.Values, body string) []byte {
		t.Helper()
		var r *http.Response
		var err error
		if body != "" {
			r, err = http.Post(d.URL+path+"?"+v.Encode(), "text/plain", strings.NewReader(body))
		} else {
			r, err = http.PostForm(d.URL+path, v)
		}
		require.NoError(t, err)
		defer r.Body.Close()
		b, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		require.Less(t, r.StatusCode, 300, "%s", b)
		return b
	}
	for i, c := range asInfluxdCases {
		t.Run(c.name, func(t *testing.T) {
			db := fmt.Sprintf("db%d", i)
			key, err := f.tenants.Add(context.Background(), db, now)
			require.NoError(t, err)
			lines := recentTime.ReplaceAllStringFunc(c.lines, func(s string) string {
				d, err := time.ParseDuration(s[1:])
				require.NoError(t, err)
				return strconv.FormatInt(at.Add(d).UnixNano(), 10)
			})
			influx("/query", url.Values{"q": {"CREATE DATABASE " + db}}, "")
			for _, w := range strings.Split(lines, "--\n") {
				v := url.Values{"db": {db}}
				if c.precision != "" {
					v.Set("precision", c.precision)
				}
				influx("/write", v, w)
				got := f.do("POST", "/write?"+v.Encode(), key, []byte(w))
				require.Equal(t, http.StatusNoContent, got.status, "%s", got.body)
			}
			v := url.Values{"q": {c.query}}
			if !c.noDB {
				v.Set("db", db)
			}
			want := influx("/query", v, "")
			got := f.do("GET", "/query?"+v.Encode(), key, nil)
			if !sameAnswers(t, want, got.body) {
				t.Errorf("%s:\n InfluxDB: %s\ntimetable: %s (%d)", c.query, bytes.TrimSpace(want), bytes.TrimSpace(got.body), got.status)
			}
		})
	}
}
