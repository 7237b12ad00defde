// Package archive exports physical tables to a folder or an S3 bucket
// before the lifecycle manager deletes them, checks the exports by reading
// them back, and restores them into tables the engine queries again.
//
// # Basics
//
// Open an Archiver on a store and a target, then archive a table, list the
// archives and restore one:
//
//	a, err := archive.Open(ctx, "s3://bucket/timetable", store, archive.Options{})
//	err = a.Archive(ctx, "tt_events_1491696000000_1492300799000_4_2017")
//	ok, err := a.Verified(ctx, "tt_events_1491696000000_1492300799000_4_2017")
//	ms, err := a.List(ctx)
//	err = a.Restore(ctx, "tt_events_1491696000000_1492300799000_4_2017", "")
//
// A target is file:///abs/dir, file://relative/dir, or s3://bucket/prefix
// through the standard AWS configuration chain (AWS_REGION, AWS_PROFILE,
// the credential sources, and AWS_ENDPOINT_URL_S3 for an S3-compatible
// server; set S3Options.UsePathStyle for servers that want path-style
// addresses).
//
// # Layout
//
// The archive of table T is two objects:
//
//	{prefix}/T/data.ndjson.gz   the items, gzip-compressed NDJSON
//	{prefix}/T/manifest.json    what the data holds, and its checksums
//
// An archive belongs to a generation of the table (package registry), not
// to its name: a table made again under the name of one archived and
// deleted (late data after the retention was lengthened) is generation 2,
// archived beside the first as data-2.ndjson.gz and manifest-2.json. The
// archiver learns the generation from the registry (Options.Facts);
// Archive, Verified and Manifest concern the current generation, so the
// verified archive of a deleted table never passes for the table made
// again, and Restore writes back every generation's items.
//
// Each line of the data file is one item in DynamoDB JSON, wrapped as
// DynamoDB's own export to S3 writes it in DYNAMODB_JSON format, so that
// DynamoDB's import from S3, the AWS tools and jq read it as it is:
//
//	{"Item":{"pk":{"S":"acme#a_table#car-17#0"},"sk":{"S":"2017-..."},"speed":{"N":"88.5"}}}
//
// Every storage value type keeps its exact DynamoDB type: S, N (the
// decimal literal as stored), B (base64), BOOL, NULL, L and M. The
// manifest (type Manifest) records the source table, its family, period,
// write month and tier and all its tags, the item count, the size and
// SHA-256 of the compressed file, an order-independent hash of the items
// (ContentHash), when it was made, when it was verified, and a format
// version.
//
// # Parquet
//
// An archiver opened with Options.Format family.ArchiveParquet (a family
// with archive: {target: ..., format: parquet}) writes, beside the NDJSON,
// the table's events as one Parquet file, laid out in hive partitions so
// that query engines read only the periods a query names:
//
//	{prefix}/{family}/period={period start}/write_month={YYYY-MM}/{table}-g{generation}-s{first}-{last}.parquet
//
// write_month is "none" for a table without write-time grouping; s0-3
// is the table's shard range (all of its shards: one file per table).
// The file holds events, not items: the items are decoded as queries
// decode them (itemenc.ItemEvents), so a map-layout item gives each of its
// events a row, and series index entries, rollups and their markers give
// none. Its columns are tenant, table, time (TIMESTAMP, nanoseconds, UTC),
// series, id, one typed column per field and fields_json for the rest
// (package parquetfile says which field gets which type). The schema is
// learnt from a first pass over the spooled NDJSON and the file written in
// a second, so the table is scanned once and memory holds one row group.
//
// The NDJSON stays what restore reads: it keeps every item with its exact
// DynamoDB type, which events in typed columns do not (a number's
// spelling, items that are not events). So Parquet is written in addition,
// for analytics; an archive in Parquet costs the NDJSON and a file about
// as large again. DuckDB reads a target's files with
//
//	SELECT * FROM read_parquet('/var/lib/timetable/archive/events/**/*.parquet', hive_partitioning = true)
//
// The manifest lists the Parquet file (Manifest.Parquet) with its row
// count, size and SHA-256, written after it and before the manifest; the
// verification reads it back, checks size and SHA-256, and counts its
// rows with the Parquet library against the manifest and against the
// events of the NDJSON (itself checked against the table). An unverified
// export in NDJSON alone of a family now archived in Parquet is made
// again, Parquet and all; a verified one is kept as it is.
//
// # Crash safety
//
// Archive first removes the table's old manifest, writes the data file,
// then the manifest: a manifest is only ever present for a complete data
// file. It then reads the data back from the target, checks size,
// SHA-256, item count and content hash against the manifest and against a
// fresh scan of the table, and only then rewrites the manifest with
// VerifiedAt set. Verified is true only for such a manifest, and the
// lifecycle manager deletes a table only when Verified says so. So a crash
// during an export leaves no manifest (or an unverified one) and the next
// Archive starts over, overwriting; a crash between a verified archive
// and the delete leaves a verified manifest and the next cycle deletes.
// Objects are replaced whole: files are written to a temporary name,
// synced and renamed; S3 objects are replaced by PutObject.
//
// The content hash is the SHA-256 of the sorted SHA-256 digests of the
// items' canonical lines (attribute names sorted). Scans return items in
// no particular order, so a hash of the file alone could not be compared
// with the table; the content hash can, at the cost of 32 bytes of memory
// per item while hashing.
//
// # Resuming
//
// An export whose scan stops (throttled past the SDK's retries, or its
// context ended, as a Lambda's does) saves what it has: the items so far
// as a partial data file and a checkpoint with the key of the last item
// (T/export.checkpoint.json, T/export.partial.ndjson.gz; export-N.* for
// generation N). The next Archive of the table reads them back, checks
// them, and resumes the scan after that key (storage.Store.ScanAfter),
// appending a gzip member of its own, so a table on a cold tier of 1 RCU
// is archived in a few cycles instead of never. A complete export whose
// verification stopped is verified again, not exported again. The
// checkpoint names the table's creation time and generation: one of
// another table under the name is ignored.
//
// # Caveats
//
// An export is spooled to a temporary file (Options.TempDir) and uploaded
// with one PutObject, which S3 limits to 5 GiB of compressed data per
// table. A table written to while it is archived fails verification (its
// scan no longer matches), which is the safe outcome: the lifecycle
// manager archives tables only once they are past retention. A restored
// table keeps the name and tags of the archived one, so the lifecycle
// manager will see a table past retention with a verified archive and
// delete it again at its next cycle; raise the family's retention first,
// or restore into another name for a look with the AWS tools.
package archive
