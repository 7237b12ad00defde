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
// version (FormatVersion).
//
// # Parquet
//
// An archiver writes Parquet by default (Options.Format empty or
// family.ArchiveParquet; a family with archive: {target: ..., format:
// ndjson} writes the NDJSON alone) for every table whose family and
// period it knows: beside the NDJSON,
// the table's events as Parquet, laid out in hive partitions so that
// query engines read only the periods a query names:
//
//	{prefix}/{family}/period={period start}/write_month={YYYY-MM}/{table}-g{generation}-s{first}-{last}.parquet
//
// write_month is "none" for a table without write-time grouping; s0-3
// is the table's shard range (all of its shards). A table is one file,
// and a table of more than Options.ParquetPartRows events (2^18 by
// default) is written as several parts, the second and later named
// ...-s0-3-p1.parquet, -p2 and so on. The file holds events, not items:
// the items are decoded as queries decode them (chunk.ItemEvents), so a
// map-layout item or a chunk gives each of its events a row (a chunk's
// events the ids their rows would have, under the id scheme of the
// table's tags), and series index
// entries, rollups and their markers give none. Its columns are tenant,
// table, time (TIMESTAMP, nanoseconds, UTC), series, id, one typed column
// per field and fields_json for the rest (package parquetfile says which
// field gets which type).
//
// A column's type must be known before the file's first row and fit
// every value it will hold, so the schema of a part is learnt from all
// of its events: the items of a part are gathered in a spool
// in Options.TempDir as the scan produces them, and when the part is full
// the spool is read twice, to learn the schema and to write the file,
// which is streamed to the target. The file is sorted by tenant, table,
// series and time, in row groups of ParquetRowGroupRows (4,096) rows, so
// that a reader of one series and a time range skips, by the row groups'
// statistics, all but a few of them: the part keeps a sort key of 32
// bytes for each of its events and reads each item again from the spool
// in that order. So the table is scanned once, disk holds one part's
// spool (uncompressed, to be read again by offset: about 64 MB at 2^18
// events of 180 bytes) and memory its sort keys (8 MiB)
// and one row group, whatever the table's size. Learning the schema on the fly and
// widening columns as values come was the other way; it would rewrite
// row groups already written when a column widens, and parts keep each
// file's types exact.
//
// The NDJSON stays what restore reads: it keeps every item with its exact
// DynamoDB type, which events in typed columns do not (a number's
// spelling, items that are not events). So Parquet is written in addition,
// for analytics; an archive in Parquet costs the NDJSON and a file about
// as large again. DuckDB reads a target's files with
//
//	SELECT * FROM read_parquet('/var/lib/timetable/archive/events/**/*.parquet', hive_partitioning = true)
//
// The manifest lists the Parquet files (Manifest.Parquet) with their row
// counts, sizes and SHA-256, written after them; the verification reads
// each back, checks size and SHA-256, counts its rows with the Parquet
// library against the manifest, and their sum against the events of the
// NDJSON. An unverified
// export in NDJSON alone of a family now archived in Parquet is made
// again, Parquet and all; a verified one is kept as it is.
//
// # Reading archives
//
// Reader reads the Parquet of verified archives for the engine
// (engine.Options.Archives): a query whose range reaches a table the
// lifecycle archived and deleted reads that period from the archive,
// merged with the live tables, and answers as the table did. Values a
// Parquet column does not keep exactly (package parquetfile's File says
// which: a null in a typed column, a double column's numbers, binary
// inside fields_json) read back otherwise, and rollups are not archived:
// an aggregate over an archived period is computed from its events.
// Whatever the table's layout, the reader answers a partition with row
// items, one an event, an event the archive holds twice (two chunks of a
// window held it, and the archive keeps what the table held) once, the
// first in the files' order, as a read of the chunks keeps it; and the
// engine reads an archived table's partitions as the row layout's, in
// pages of as many events as it expects to need. Read a chunk window at
// a time, from pages that start at one item (right for chunks, of which
// one holds the window), an hour of 60 rows took seven queries of the
// archive, each decoding the partition's row groups again. An archive of
// a chunk table and one of the same events in rows are the same Parquet,
// row groups and statistics alike, and are read alike. It
// reads every generation of a table that was archived: the engine passes
// the earlier ones that the registry entry records
// (registry.Entry.PastArchives). A query of a logical table's series
// index lists the series of the archive's files, so that an archived
// period lists its series (the engine's ListSeries, InfluxQL's SHOW TAG
// VALUES, SHOW SERIES and tag filters) as the table did. They are learnt
// from the Parquet, read once per open archive and kept with it, rather
// than from a list the archiver would write into the manifest: the
// archives made before the list existed answer too, without being made
// again, and the files are what every read checks against the manifest,
// where a list beside them would be one more thing to keep in step. The
// Parquet of s3:// targets is fetched
// into a cache of ReaderOptions.CacheBytes (DefaultReaderCacheBytes), which
// evicts the archives least recently read that no query reads.
//
// Every file is checked against the manifest before it is read: its size
// and SHA-256 once per version (a folder's file by its size and
// modification time, looked at by every query, so that a file changed or
// replaced is checked again; an S3 file as it is fetched into the cache,
// whose checked copy queries read from then on), its row count at every
// open. A manifest or file missing or that does not match fails the read
// with a DamagedError naming the table, its period and the file, wrapping
// storage.ErrDamaged, which the server answers 409: no retry cures it,
// and no read answers short. A failure is not kept, so the next query
// after an operator puts the file back reads it.
//
// # Streaming
//
// An export is written to the target as the scan produces it: to S3
// through the SDK's upload manager (feature/s3/manager), fed by an
// io.Pipe, which sends each part of S3Options.PartSize (16 MiB by
// default; S3 wants at least 5 MiB and at most 10,000 parts, so 16 MiB
// parts hold 156 GiB of compressed data, 2.4 billion events at ~64 bytes)
// as it fills, with S3Options.Concurrency (2) parts in flight; to a
// folder under a temporary name, synced and renamed when complete.
// Nothing is spooled and memory holds a few buffers, whatever the size of
// the table: docs/archive.md gives the measured figures.
//
// The table is read by a parallel scan of Options.ScanSegments segments
// (storage.Segment: DynamoDB's Segment and TotalSegments), whose items
// go into one gzip stream. Once the registry says the table takes no more
// writes (its period's and write month's grace are over) the scan reads
// eventually consistent, at half the read capacity: with no writes, it
// returns the same items.
//
// The content hash is the sum modulo 2^256 of the items' SHA-256 digests,
// each over the item's canonical line (attribute names sorted), with the
// item count beside it in the manifest: a multiset hash, which does not
// depend on the order the segments return the items in and takes 32
// bytes whatever their number. Manifests of format version 1 hold the
// SHA-256 of the sorted digests instead, and are verified that way (it
// keeps 32 bytes per item: version 1 archives were small).
//
// # Verification
//
// Archive verifies by reading the object back from the target: it
// decompresses every line, parses it, and recomputes the file's size and
// SHA-256 and the items' count and content hash, which must equal the
// manifest's. The manifest's count and hash are the scan's, computed from
// the items as they were read from the table, so this proves that the
// target holds every item the scan returned, byte for byte in their
// canonical form; a second scan of the table would only prove that the
// table did not change since, which a table past its write month and
// grace cannot (the lifecycle manager archives only those), and it would
// cost a second full read of the table. Verify, the operator's check,
// still scans the table when it exists and compares.
//
// # The check before a delete
//
// Right before the lifecycle manager deletes a table, CheckTable scans
// it once more and compares its item count and content hash with the
// verified manifest's: a write that landed after the export (a writer
// whose clock or cache lagged the fence) shows as a difference, and the
// table is archived again rather than deleted. DynamoDB's own export does
// not replace it: its manifest proves that the archive holds what the
// table held at the export's point in time, not that nothing landed
// after, which is what this check is for.
//
// The scan is parallel, Options.ScanSegments segments at once, and bounded
// by its context's deadline less Options.DeadlineMargin. Once the
// registry says the table was fenced Options.CheckSettle ago
// (DefaultCheckSettle: the lifecycle's fence settle and ten seconds) it
// reads eventually consistent, at half the read units on DynamoDB. That
// is safe: a fenced table accepts no write, every write still in flight
// when the fence was set ends within the fence's settle (package
// registry), and an eventually consistent read returns the latest item
// after a short time, about a second (DynamoDB Developer Guide, "DynamoDB
// read consistency"), so by then every replica holds what a strongly
// consistent scan would read. For the same reason such a scan may be done
// in parts: a check that stops saves, in T/check.checkpoint.json beside
// the archive, each segment's last key, item count and part of the
// content hash (a sum, whose parts add up), with the table's creation
// time, the fence and the archive's count and hash; the next CheckTable
// of the same table, fence and archive resumes each segment after its key
// and adds to its part. A table fenced more recently, or with no registry
// entry, is read strongly consistent and a stopped check of it keeps
// nothing: writes may still change what its segments already read. The
// lifecycle deletes a table only after a check that completed and found
// no difference.
//
// # DynamoDB's own export
//
// On a store with its own export to S3 and import from S3
// (storage.Exporter: DynamoDB, not its local emulators, which answer
// UnknownOperationException) and an s3:// target, Options.Method
// MethodAuto (the default) or MethodNative archives a table through the
// store's export instead of a scan: point-in-time recovery on, an export
// in DYNAMODB_JSON to {prefix}/T/export/ (export-N/ for generation N),
// waited for with the SDK's waiter, neither of which consumes the
// table's capacity. The export is in the layout AWS documents in the
// DynamoDB Developer Guide, "DynamoDB table export output format":
//
//	{prefix}/T/export/AWSDynamoDB/{ExportId}/manifest-summary.json  exportArn, itemCount, outputFormat, manifestFilesS3Key
//	{prefix}/T/export/AWSDynamoDB/{ExportId}/manifest-files.json    a line per data file: itemCount, md5Checksum, etag, dataFileS3Key
//	{prefix}/T/export/AWSDynamoDB/{ExportId}/data/{id}.json.gz      gzip, a {"Item":{...}} line per item
//
// The archiver reads the summary, the file list and every data file once:
// each file's MD5 and item count must equal manifest-files.json's, and
// their sum the summary's itemCount and the export's own ItemCount. That
// same reading computes the content hash of the items and the size and
// SHA-256 of the files' concatenation, which the manifest records with the
// export's ARN and files (Manifest.Export), and writes the Parquet. The
// verification then reads the files back against the manifest, as for a
// scan's data file. So what is verified is that the archive holds the
// items DynamoDB says it exported, file by file against DynamoDB's own
// manifest, and that the target still holds them; the table is not read
// (an export is of a point in time of a table fenced before it), and
// Verify's scan of the table remains the operator's proof that they are
// the table's. A single archive restored into a table that does not
// exist is imported by the store (ImportTable) from the export's data
// folder, or from a scan archive's data file (the same format); the
// import's count of items written must equal the manifest's.
//
// # Crash safety
//
// Archive first removes the table's old manifest, writes the data file,
// then the manifest: a manifest is only ever present for a complete data
// file. It then reads the data back from the target and checks it, and
// only then rewrites the manifest with VerifiedAt set. Verified is true
// only for such a manifest, and the lifecycle manager deletes a table
// only when Verified says so. So a crash during an export leaves no
// manifest (or an unverified one) and the next Archive starts over or
// resumes; a crash between a verified archive and the delete leaves a
// verified manifest and the next cycle deletes. Objects are replaced
// whole: files are written to a temporary name, synced and renamed; S3
// objects are replaced by a PutObject or a completed multipart upload,
// which S3 makes visible only when complete. A process killed while it
// writes an object leaves a temporary file beside it in a folder
// (".{name}.tmp…"), or an incomplete multipart upload in a bucket,
// invisible and billed: the next write of that object (the next Archive
// of the table) removes the temporary files and aborts the uploads of its
// key first, since a key has one writer at a time (the lifecycle's
// lease). For the keys never written again, give the bucket a lifecycle
// rule that aborts incomplete multipart uploads after a day. The local
// scratch files (a Parquet part's spool, a file read back) lose their
// name as soon as they are made, where the system allows it (Unix), so
// a kill leaves none in Options.TempDir.
//
// # Resuming
//
// An export whose scan stops (throttled past the SDK's retries, or
// Options.DeadlineMargin before its context's deadline, as a Lambda's)
// keeps what it has: it writes the Parquet part gathered so far, commits
// the data file as it is (without a manifest it is no archive), and saves
// a checkpoint with the key of the last item of each segment
// (T/export.checkpoint.json; export-N.checkpoint.json for generation N),
// and returns an error wrapping ErrStopped. The next Archive of the table
// copies that data file into its new one, checking its items, size and
// SHA-256 against the checkpoint on the way, resumes each segment after
// its key (storage.Segment.After), and appends a gzip member of its own,
// so a table on a cold tier of 1 RCU, or larger than one Lambda run can
// read, is archived in a few runs instead of never. A complete export
// whose verification stopped is verified again, not exported again. The
// checkpoint names the table's creation time and generation: one of
// another table under the name is ignored, and so is one of version 1
// (which kept its data apart, in export.partial.ndjson.gz).
//
// Restore stops the same way before its deadline, saving how far it got
// (T/restore-{into}.checkpoint.json), and the next Restore into the same
// table goes on from there.
//
// # Restored tables
//
// A restore never merges into a live table: one the registry has
// creating, active or archived, and the store still has, holds items of
// its own, which a restore would mix with the archive's and then mark
// restored. Restore refuses it with ErrLiveTable, naming the table; the
// caller restores under another name instead. A table the registry has
// deleted, missing or restored (a restore run again), or does not know,
// is restored into.
//
// A restored table is created without TTL, and its items lose their TTL
// attribute, whose times are past. The caller registers a table restored
// under its own name as restored (registry.MarkRestored, with the end
// `timetable archive restore --keep` says, 7 days by default): the
// lifecycle manager leaves it alone until then and deletes it again
// after, its archive still being verified.
//
// # Caveats
//
// An S3 archive is at most 10,000 parts of S3Options.PartSize: raise it
// for a table of more than 156 GiB compressed. An item written to a table
// while it is archived may be missed by the scan and the archive still
// verify; the lifecycle manager archives tables only once they are past
// retention, long after their last write, and Verify, which scans the
// table again, finds such a difference. The Pebble backend splits a
// table's key range between its first and last keys for a parallel scan,
// which holds only while the table is not written to.
package archive
