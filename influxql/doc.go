// Package influxql answers InfluxDB 1.x's query language over timetable's
// engine, so that Grafana's InfluxDB data source, the influx CLI and
// InfluxDB's client libraries read timetable as they read InfluxDB. The
// statements are parsed by github.com/influxdata/influxql, InfluxData's
// own parser; this package decides what each means for timetable and
// asks the engine.
//
// # Mapping
//
// A database is the tenant's data: any name reads the tenant of the
// API key, and SHOW DATABASES lists one, the tenant's name; a statement
// names it as InfluxDB's do, or is refused as InfluxDB refuses it
// (database.go). A
// measurement is a logical table. A series written as line protocol is
// known by its tags, read back from its name (lineproto.SeriesTags); a
// series whose name is not a tag set has the one tag "series", its name.
// Fields are the events' fields; the tags, which line protocol writes
// keep as fields too, are left out of SHOW FIELD KEYS.
//
// Which series a statement reads is decided from the series index alone,
// before any event is read: a condition on tags (=, !=, =~, !~, AND, OR)
// picks the series, and only those are read. A SeriesCache keeps the
// series of measurements between queries, while the engine's
// SeriesVersion of the table stays and for a few seconds at most.
//
// # Aggregates
//
// Aggregates are the engine's (engine.AggregateQuery): count, sum, mean
// (avg), min, max, first, last, median, stddev, percentile(f, N) (pN at
// InfluxQL's rank, engine.RankInfluxQL;
// median and percentiles exact to engine.QuantileExact values, estimates
// within engine.QuantileAccuracy beyond), count(distinct(f)) and spread
// (max - min). Buckets of GROUP BY time(d, offset) are cut as InfluxDB
// cuts them (windows): d at least a second dividing a day, aligned to
// UTC midnight plus the offset or, with tz(), to the zone's midnight,
// 23 or 25 hours long across a DST switch. Each run of buckets the
// engine cuts alike is one engine aggregate (AggregateQuery.Offset the
// zone's phase), and a bucket of another length one of its own, so
// every function stays exact. Results of several series (a tag filter that picks some
// of a table's series, or a GROUP BY that puts several in one group) and
// of several buckets (no GROUP BY time) are merged where merging is
// exact (count, sum, mean from sum and count, min, max, spread; first
// and last across buckets); first, last, median, percentile, stddev and
// count(distinct()) of several series are computed from the group's
// points instead (selector.go); otherwise the statement answers an
// error that says what to add. mode, and every aggregate of a statement
// whose WHERE reads a tag and a field together or whose FROM is a
// subquery, are computed from the group's points (points.go). derivative, non_negative_derivative, difference
// and moving_average run over the buckets; fill(null|none|previous|
// linear|number) fills them.
//
// # Rules, each written once
//
// Where InfluxDB's answers follow a rule the code must keep, the rule is
// written at the top of the file that keeps it: which database a
// statement reads (database.go), how its range is bounded (bounds.go),
// when a series of an answer exists (exists.go), what a missing tag is
// and how the series without tags is read (tagless.go), which groups
// SLIMIT keeps and what GROUP BY * groups by (tagsets.go), how buckets are
// cut and filled before a transform (transform.go), which point a
// selector picks of points of one time (selector.go), how a condition
// on a tag and a field together is evaluated (rowcond.go), what math in
// SELECT answers (math.go), what fields beside a selector answer
// (auxiliary.go), what distinct(f) answers (distinct.go), what top and
// bottom answer (top.go), what elapsed answers (elapsed.go), what the
// CARDINALITY statements count (cardinality.go), which aggregates are
// computed from points (points.go), how mode breaks ties (mode.go), what
// integral answers (integral.go), and what a subquery reads and answers
// (subquery.go).
//
// # Bounds
//
// Stream answers statement by statement and series by series: a
// group's series is given to the Answer once built, before the next
// group is read, so memory holds one group's rows, not the answer (the
// server writes them to the client as they come). With a Budget (the
// engine's query budget, *engine.QueryHold), the answers of a query's
// statements are counted together before any is built: an aggregate's
// as series × buckets (the filled ones too, within LIMIT and OFFSET) ×
// columns, at rowBytes and valueBytes each; a raw SELECT's as the rows
// one group holds at once, the events read and the answer's rows
// (OFFSET's rows, then LIMIT's or one more than Options.MaxRows; a page
// more of a read of every series, for the events of one time, and twice
// as many while a group's series are merged), at rawRowBytes and
// rawValueBytes a column. A query whose statements together are over
// what the budget may ever hold is refused whole before anything is
// read, and each statement holds its own count while it is built. A group of one series skips OFFSET's rows as it reads them,
// holding none; one of several series (a read of every series, or merged)
// holds and counts them, and an OFFSET past the budget is refused. DefaultMaxRows is 10,000, so that
// the default tenant share (16,384 partitions of 2 KiB) holds a raw
// SELECT of some fifteen columns read in one read of every series, some
// eight of series merged; a group's rows past MaxRows are cut and the
// series marked partial, not read in pages, since the columns of
// SELECT * are those of every row.
//
// Parse checks a query's text before the parser reads it (limits.go):
// each statement nests parentheses at most MaxDepth deep and has at most
// MaxOperators operators, its LIMIT, OFFSET, SLIMIT and SOFFSET are
// within int64, and the query holds a statement; past any, it returns an
// error wrapping ErrQueryLimit and nothing is parsed. Execute stops
// between its steps once its context ends, and an aggregate of a
// statement's series takes slots of Options.CPU, so that a query is held
// to what a read of the engine is held to.
//
// docs/influxql.md lists exactly which statements and clauses are
// supported; anything else answers an error naming it.
package influxql
