package influxql

// # When a series of an answer exists
//
// A series of an answer (a group of GROUP BY, or the whole measurement)
// exists when the statement's range holds at least one of its points
// that the WHERE condition on fields keeps: InfluxDB answers no series,
// not a series of empty or filled buckets, for one without, whatever
// fill() says (count(f) WHERE f = 100 is no row, not a row of 0). A
// measurement of FROM without such a point adds no series, and a
// statement none of whose measurements has one answers no series at
// all. A series that exists has every bucket of the range, filled as
// fill() says.
//
// A bucket holds points when one of its columns answers a point:
// InfluxDB's percentile of too few values (rank 0) answers none, its
// stddev of one value a null one; a count of none is no point. A count
// of a series without a value of its field in any bucket (of a
// measurement of FROM that lacks the field) is null under fill(null),
// not 0: InfluxDB fills only the series its count answers.
