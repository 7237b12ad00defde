package server_test

// More of TestAnswersAsInfluxd's cases: subqueries, integral, mode,
// top and bottom with tags and fields beside them, distinct beside
// other columns, and a condition on a tag and a field together in a
// SELECT of aggregates.

const (
	// hosts are series of three hosts, one without region, values
	// tens of seconds apart over four minutes.
	hosts = `cpu,host=a,region=eu v=1 946684800000000000
cpu,host=a,region=eu v=5 946684830000000000
cpu,host=a,region=eu v=3 946684870000000000
cpu,host=b,region=eu v=2 946684810000000000
cpu,host=b,region=eu v=8 946684900000000000
cpu,host=c v=4 946684920000000000
cpu,host=c v=6 946685000000000000
cpu,host=d v=1 946684800000000000
cpu,host=d v=2 946684805000000000
`
	// gap is one series with a gap of buckets between its points.
	gap = `gap v=1 946684800000000000
gap v=3 946685010000000000
gap v=5 946685040000000000
`
	// ties are values of equal counts, in one series and across two.
	ties = `tie v=2 946684800000000000
tie v=1 946684801000000000
tie v=2 946684802000000000
tie v=1 946684803000000000
tie,h=x v=3 946684801000000000
tie,h=x v=3 946684802000000000
tie,h=x v=7 946684803000000000
tie,h=y v=7 946684803000000000
`
	// fiveMinutes is the range of the hosts' points.
	fiveMinutes = `time >= '2000-01-01T00:00:00Z' AND time < '2000-01-01T00:05:00Z'`
)

func init() {
	asInfluxdCases = append(asInfluxdCases, []asInfluxdCase{
		// Subqueries, as dashboards write them.
		{name: "mean of max", lines: hosts,
			query: `SELECT mean(max) FROM (SELECT max(v) FROM cpu WHERE ` + fiveMinutes + ` GROUP BY time(1m))`},
		{name: "mean of max coarser", lines: hosts,
			query: `SELECT mean(max) FROM (SELECT max(v) FROM cpu WHERE ` + fiveMinutes + ` GROUP BY time(1m)) WHERE ` + fiveMinutes + ` GROUP BY time(2m)`},
		{name: "subquery tags passed through", lines: hosts,
			query: `SELECT mean(max) FROM (SELECT max(v) FROM cpu GROUP BY time(1m), host) WHERE ` + fiveMinutes + ` GROUP BY time(2m), host`},
		{name: "subquery grouped by a tag", lines: hosts,
			query: `SELECT mean(max) FROM (SELECT max(v) FROM cpu WHERE ` + fiveMinutes + ` GROUP BY time(1m), host) GROUP BY host`},
		{name: "subquery raw", lines: hosts,
			query: `SELECT max FROM (SELECT max(v) FROM cpu WHERE ` + fiveMinutes + ` GROUP BY time(1m), host)`},
		{name: "subquery raw by tag", lines: hosts,
			query: `SELECT max FROM (SELECT max(v) FROM cpu WHERE ` + fiveMinutes + ` GROUP BY time(1m), host) GROUP BY host`},
		{name: "subquery where on a field", lines: hosts,
			query: `SELECT sum(max) FROM (SELECT max(v) FROM cpu WHERE ` + fiveMinutes + ` GROUP BY time(1m), host) WHERE max > 2`},
		{name: "subquery where on a tag", lines: hosts,
			query: `SELECT sum(max) FROM (SELECT max(v) FROM cpu WHERE ` + fiveMinutes + ` GROUP BY time(1m), host) WHERE host = 'a'`},
		{name: "subquery count filled", lines: hosts,
			query: `SELECT count(max) FROM (SELECT max(v) FROM cpu WHERE ` + fiveMinutes + ` GROUP BY time(1m), host) WHERE ` + fiveMinutes + ` GROUP BY time(1m) fill(0)`},
		{name: "subquery of raw", lines: hosts, query: `SELECT mean(v) FROM (SELECT v FROM cpu WHERE ` + fiveMinutes + `)`},
		{name: "subquery star", lines: hosts, query: `SELECT * FROM (SELECT max(v) FROM cpu WHERE ` + fiveMinutes + ` GROUP BY time(2m))`},
		{name: "subquery of a column it lacks", lines: hosts, query: `SELECT max(v) FROM (SELECT max(v) FROM cpu WHERE ` + fiveMinutes + ` GROUP BY time(2m))`},
		{name: "subquery max of spread by host", lines: hosts,
			query: `SELECT max(spread) FROM (SELECT spread(v) FROM cpu WHERE ` + fiveMinutes + ` GROUP BY host)`},

		// integral.
		{name: "integral", lines: gap, query: `SELECT integral(v) FROM gap`},
		{name: "integral in minutes", lines: gap, query: `SELECT integral(v, 1m) FROM gap`},
		{name: "integral by time", lines: gap,
			query: `SELECT integral(v, 1m) FROM gap WHERE ` + fiveMinutes + ` GROUP BY time(1m)`},
		{name: "integral by time filled", lines: gap,
			query: `SELECT integral(v, 1m) FROM gap WHERE ` + fiveMinutes + ` GROUP BY time(1m) fill(0)`},
		{name: "integral by time desc", lines: gap,
			query: `SELECT integral(v, 1m) FROM gap WHERE ` + fiveMinutes + ` GROUP BY time(1m) ORDER BY time DESC`},
		{name: "integral of series merged", lines: hosts,
			query: `SELECT integral(v, 1m) FROM cpu WHERE ` + fiveMinutes + ` GROUP BY time(1m)`},

		// mode.
		{name: "mode", lines: modes, query: `SELECT mode(v) FROM md`},
		{name: "mode by tag", lines: modes, query: `SELECT mode(v) FROM md GROUP BY h`},
		{name: "mode of strings", lines: modes, query: `SELECT mode(s) FROM md`},
		{name: "mode by time", lines: modes,
			query: `SELECT mode(v) FROM md WHERE time >= '2000-01-01T00:00:00Z' AND time < '2000-01-01T00:00:08Z' GROUP BY time(2s)`},
		{name: "mode and count", lines: modes, query: `SELECT mode(v), count(v) FROM md`},
		{name: "mode ties", lines: ties, query: `SELECT mode(v) FROM tie WHERE h = ''`},
		{name: "mode ties across series", lines: ties, query: `SELECT mode(v) FROM tie`},
		{name: "mode ties by time", lines: ties,
			query: `SELECT mode(v) FROM tie WHERE time >= '2000-01-01T00:00:00Z' AND time < '2000-01-01T00:00:04Z' GROUP BY time(2s)`},
		{name: "mode beside a field", lines: modes, query: `SELECT mode(v), s FROM md`},

		// top and bottom with tags, and fields beside.
		{name: "top by a tag", lines: hosts, query: `SELECT top(v, host, 2) FROM cpu`},
		{name: "top by a tag by time", lines: hosts,
			query: `SELECT top(v, host, 2) FROM cpu WHERE ` + fiveMinutes + ` GROUP BY time(2m)`},
		{name: "top by two tags", lines: hosts, query: `SELECT top(v, host, region, 3) FROM cpu`},
		{name: "top beside tags", lines: hosts, query: `SELECT top(v, 3), region FROM cpu GROUP BY host`},
		{name: "top by a tag beside a field", lines: hosts, query: `SELECT top(v, host, 2), v FROM cpu`},
		{name: "bottom by a tag beside", lines: modes, query: `SELECT bottom(v, h, 2), s FROM md`},
		{name: "top beside a function", lines: modes, query: `SELECT top(v, 2), count(v) FROM md`},

		// distinct beside other columns.
		{name: "distinct beside a field", lines: modes, query: `SELECT distinct(v), s FROM md`},
		{name: "distinct beside a function", lines: modes, query: `SELECT distinct(v), count(v) FROM md`},

		// A tag and a field together in a SELECT of aggregates.
		{name: "count of tag or field", lines: modes, query: `SELECT count(v) FROM md WHERE h = 'x' OR v > 2`},
		{name: "aggregates of tag or field by time", lines: hosts,
			query: `SELECT mean(v), max(v) FROM cpu WHERE (host = 'a' OR v > 3) AND ` + fiveMinutes + ` GROUP BY time(1m)`},
		{name: "last of tag or field by tag", lines: hosts,
			query: `SELECT last(v) FROM cpu WHERE host = 'c' OR v < 3 GROUP BY region`},
	}...)
}

func init() {
	asInfluxdCases = append(asInfluxdCases, []asInfluxdCase{
		// sample of no more points than N answers every point; fewer
		// are picked at random (compared in the differential test by
		// their number).
		{name: "sample of every point", lines: gap, query: `SELECT sample(v, 10) FROM gap`},
		{name: "sample by time", lines: gap,
			query: `SELECT sample(v, 5) FROM gap WHERE ` + fiveMinutes + ` GROUP BY time(1m)`},
		{name: "sample of none", lines: gap, query: `SELECT sample(v, 0) FROM gap`},
	}...)
}

func init() {
	asInfluxdCases = append(asInfluxdCases, []asInfluxdCase{
		// Under ORDER BY time DESC the buckets come newest first, the
		// rows of each in time order.
		{name: "top desc", lines: modes, query: `SELECT top(v, 3) FROM md ORDER BY time DESC`},
		{name: "top by time desc", lines: modes,
			query: `SELECT top(v, 2) FROM md WHERE time >= '2000-01-01T00:00:00Z' AND time < '2000-01-01T00:00:08Z' GROUP BY time(4s) ORDER BY time DESC`},
		{name: "sample desc", lines: gap, query: `SELECT sample(v, 5) FROM gap ORDER BY time DESC`},
	}...)
}

func init() {
	asInfluxdCases = append(asInfluxdCases, []asInfluxdCase{
		// More of subqueries: a selector's time, nesting, a transform,
		// and an outer range that starts within the inner's first bucket.
		{name: "subquery selector time", lines: hosts,
			query: `SELECT max(max) FROM (SELECT max(v) FROM cpu WHERE ` + fiveMinutes + ` GROUP BY time(1m), host)`},
		{name: "subquery of a subquery", lines: hosts,
			query: `SELECT max(mean) FROM (SELECT mean(max) FROM (SELECT max(v) FROM cpu WHERE ` + fiveMinutes + ` GROUP BY time(1m), host) GROUP BY host)`},
		{name: "subquery derivative", lines: hosts,
			query: `SELECT derivative(mean(max)) FROM (SELECT max(v) FROM cpu GROUP BY time(1m), host) WHERE ` + fiveMinutes + ` GROUP BY time(1m)`},
		{name: "subquery outer start within a bucket", lines: hosts,
			query: `SELECT max(min) FROM (SELECT min(v) FROM cpu GROUP BY time(1m)) WHERE time >= '2000-01-01T00:00:30Z' AND time < '2000-01-01T00:05:00Z'`},
		{name: "subquery outer start within a bucket by time", lines: hosts,
			query: `SELECT sum(min) FROM (SELECT min(v) FROM cpu GROUP BY time(1m)) WHERE time >= '2000-01-01T00:00:30Z' AND time < '2000-01-01T00:05:00Z' GROUP BY time(2m)`},
		{name: "subquery raw outer start within a bucket", lines: hosts,
			query: `SELECT min FROM (SELECT min(v) FROM cpu GROUP BY time(1m)) WHERE time >= '2000-01-01T00:00:30Z' AND time < '2000-01-01T00:05:00Z'`},
		{name: "subquery mode and top", lines: hosts,
			query: `SELECT top(max, 2), host FROM (SELECT max(v) FROM cpu WHERE ` + fiveMinutes + ` GROUP BY time(1m), host)`},
	}...)
}
