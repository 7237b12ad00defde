// Package parquetfile writes events to Parquet files with a typed schema,
// for query engines (DuckDB, Athena, Spark, pandas) to read: the archives
// of package archive and the CLI's query export.
//
// # Columns
//
// In this order:
//
//	tenant       string        the tenant (Options.Origin only)
//	table        string        the logical table (Options.Origin only)
//	time         timestamp     TIMESTAMP(NANOS, adjusted to UTC): every digit of the event time
//	series       string        "" when the event has none
//	id           string        the event id
//	<field>...   typed         one column per field of a stable type, by name
//	fields_json  JSON          the other fields, as a JSON object; null when none
//
// A field gets a column of its own when every value of it the schema was
// learnt from has one type, null aside (a null is a null in any column):
//
//	DynamoDB S      string (BYTE_ARRAY, UTF8)
//	DynamoDB BOOL   boolean
//	DynamoDB B      binary (BYTE_ARRAY)
//	DynamoDB N      int64 when every value is an integer that fits;
//	                otherwise DECIMAL(p, s), exact, when every value fits
//	                in 38 digits with one scale s (the most fractional
//	                digits seen); otherwise double, which keeps 15 to 17
//	                significant digits of DynamoDB's 38
//
// A field whose values have several types, a list or map (DynamoDB L, M),
// or whose name is taken (by a column above, case-insensitively, by
// another field that differs only in case, or by the partition columns of
// an archive's path, "period" and "write_month") goes to fields_json,
// where numbers are JSON numbers with every digit, binary is base64 and
// null is null. So every value of every event is in the file, and a query
// engine sees the columns it can type.
//
// # Learning the schema
//
// A Learner sees the events' fields and returns the Schema. An archive
// reads its table twice (package archive learns from a first pass over
// the export and writes in a second), so every column fits every value.
// A streaming export learns from its first events only (Options.Open): a
// value that does not fit its column later (a fraction in an int64
// column, a string in a number column, a field first seen later) is
// written to fields_json for that row instead, and its column is null
// there. With Open, a decimal column keeps at least OpenScale fractional
// digits, so that later values with more digits than the first still fit.
//
// # Writing
//
// A Writer writes rows as they come and a row group every
// DefaultRowGroupRows rows, compressed with zstd: memory holds one row
// group, never the file. CountRows reads a file's footer back.
package parquetfile
