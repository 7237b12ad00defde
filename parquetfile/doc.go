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
//	                otherwise DECIMAL(38, 9), exact, when every value has
//	                at most 9 fractional digits and 29 integer ones;
//	                otherwise double, which keeps 15 to 17 significant
//	                digits of DynamoDB's 38
//
// The rule is one for every file, archives and exports alike, and a
// DECIMAL column is always DECIMAL(38, 9) whatever digits the values of
// one file have: a field typed DECIMAL in one period's archive is the
// same DECIMAL in the next and in an export, so readers that union files
// (DuckDB's read_parquet of many) see one type. (A field that holds only
// integers in one file and a fraction in another is BIGINT in the first,
// DECIMAL in the second; DuckDB unions them as DECIMAL.)
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
// A Learner sees the events' fields and returns the Schema, which the
// Writer then writes under: the schema must be learnt from every event
// the file will hold, so that every field has its column however late it
// first comes, and every column's type holds every value of it (a field
// of integers with one fraction among them is a DECIMAL, and all its
// values are in the column). Package archive reads its table twice
// (learning from a spool of the export, writing in a second pass); a
// stream of events, as the CLI's query --format parquet, goes through a
// Spool, which keeps the events in a temporary file as they come and
// writes the Parquet file from it at the end. Should a value come that
// its column cannot hold (a schema learnt from fewer events than are
// written), it goes to fields_json for that row and its column is null
// there: a value is never dropped.
//
// # Writing
//
// A Writer writes rows as they come and a row group every
// DefaultRowGroupRows rows, compressed with zstd: memory holds one row
// group, never the file. CountRows reads a file's footer back.
package parquetfile
