// Package lineproto reads InfluxDB line protocol into timetable events,
// for the InfluxDB write endpoints of the server and for MQTT messages.
//
// # Mapping
//
// A line
//
//	weather,site=north,probe=7 temp=21.5,rain=0i,ok=true,note="dry" 1795262400000000000
//
// is one event:
//
//   - the measurement (weather) names the logical table, so one body may
//     write several tables (Table);
//   - the tag set, sorted by key and written as InfluxDB writes its
//     series keys (probe=7,site=north, with ",", "=" and " " escaped by a
//     backslash), is the series, so that a series of InfluxDB is a series
//     of timetable; no tag means no series. The tags are also kept as
//     string fields (probe: "7", site: "north"), so that they can be
//     read, filtered and aggregated like any field;
//   - fields are fields: floats and integers (i) and unsigned integers (u)
//     as numbers, strings as strings, booleans (t, T, true, True, TRUE,
//     and their false) as booleans;
//   - the timestamp is an integer at the precision the request gives
//     (ns by default, or us, ms, s: event.Precision); a line without one
//     takes the time it was received (the now the caller passes in),
//     truncated to that precision.
//
// Options.Table and Options.Series replace the measurement and the tag
// set, for an MQTT subscription configured with its own.
//
// Events then follow every rule of package event (event.Check): a tag set
// longer than a series may be, a timestamp before 1970 or a day ahead, a
// number out of DynamoDB's range, a reserved field name (pk, sk, tt_…)
// are refused. So are a tag and a field of one name, and a key twice in
// a line, which InfluxDB would merge or overwrite: timetable does not
// guess. Each event gets the idempotent id of package event, so a body
// written twice stores nothing twice. Unlike InfluxDB, two lines of one
// series and time with different fields are two events, not one point
// overwriting the other.
//
// # Lines
//
// A line ends at a newline (a carriage return before it is dropped), as
// InfluxDB's documentation says: a newline inside a string field ends
// the line all the same, and the line is refused as unterminated. Blank
// lines and comments (#) are skipped. Decode reads the whole body before
// returning, and when any line is bad returns an *Error naming every bad
// line by its number, 1-based, and why, and no event. A number is kept
// in plain decimal notation (1.5e-7 reads back as 0.00000015, 1e125 as
// 126 digits), as on the JSON path; once a body's numbers so written
// pass event.DecodedTextBound of the body (twice its size and
// event.DecodedSlack more), Decode stops and refuses the whole body with
// an *event.DecodedTooLargeError, which the server answers with 413: it
// does not build what the estimate of its memory, made before decoding,
// does not cover.
//
// # The parser
//
// Lines are read by the decoder of github.com/influxdata/line-protocol/v2,
// InfluxData's own. Its API does not say on which line an entry is, so a
// body is read once by one decoder, and taken as read right only when its
// entries match the body's lines one for one (no error, as many entries
// as lines, no string holding a newline); otherwise it is read again a
// line at a time, a decoder per line, which names every bad line. A fuzz
// test holds the two ways to the same events.
package lineproto
