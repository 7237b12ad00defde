// Package pebblestore is timetable's embedded storage backend: a
// storage.Store on one Pebble DB (github.com/cockroachdb/pebble/v2) in a
// local directory. It is the default store of the timetable binary, and it
// passes the same conformance suite (storage/storagetest) as the DynamoDB
// backend, so the engine and the lifecycle manager behave alike on both.
//
// # Basics
//
//	s, err := pebblestore.Open("./timetable-data", pebblestore.Options{})
//	...
//	defer s.Close()
//
// All tables live in one DB. The key space is split by a first byte: store
// metadata (format version, next table id), a catalog of tables, and the
// items. An item's key is the data prefix, the table's numeric id (8
// bytes, big-endian), uvarint(len(pk)), pk and sk: the items of one
// partition are contiguous and sorted bytewise by sort key, which is what
// Query reads with one bounded Pebble iterator in either direction.
//
// # Decisions
//
//   - Table ids are assigned at creation and never reused, so a table
//     deleted and created again under the same name starts empty even if
//     a range deletion has not been compacted yet.
//   - The catalog (spec, status, creation time, id, as JSON) is written
//     with Sync under one mutex that serialises table changes, so
//     concurrent creates of one name yield exactly one table and
//     storage.ErrTableExists for the others. Readers and writers find
//     tables through an immutable in-memory snapshot of the catalog
//     loaded atomically: the item hot path takes no store-wide lock.
//   - Capacity and billing mode are recorded and reported, not enforced;
//     a table is ACTIVE as soon as CreateTable returns. UpdateTable never
//     returns storage.ErrRefused.
//   - The TTL attribute is recorded but items are not expired: DynamoDB
//     too keeps expired items readable until it gets round to deleting
//     them, typically within two days, so timetable's reads never count
//     on expiry (they do not filter on it), and timetable drops whole
//     tables by period.
//   - BatchWrite encodes every item into one Pebble batch committed with
//     pebble.Sync: it is all or nothing, durable when it returns, and
//     concurrent batches are group-committed by Pebble. The items go into
//     the batch in key order, which makes Pebble's memtable inserts
//     cheap (each starts from where the one before went). A per-table
//     read-write lock, taken shared by writes and exclusively by
//     DeleteTable, keeps a write from landing in a table being deleted.
//   - Update reads the item, evaluates the conditions, applies the
//     actions and commits the result with pebble.Sync while holding one
//     of 256 striped mutexes, picked by a hash of the item's key (table
//     id, partition key, sort key): Updates of one item are serialised,
//     Updates of different items almost never wait for each other, and
//     the lock table never grows. BatchWrite takes no item lock, so a
//     BatchWrite racing an Update of the same item is not serialised with
//     it: whichever commits last wins, and the other's change is lost (the
//     storage contract asks callers to keep the two apart). A failed
//     condition, an oversized result or an invalid value writes nothing.
//   - Items and updates are checked against DynamoDB's rules with
//     storage.Item.Validate and storage.Update.Validate, as the DynamoDB
//     store checks them, and numbers are stored in DynamoDB's canonical
//     form (storage.CanonicalNumber), so that data that works here works
//     there and reads back the same. An item storage.Item.Checked
//     returned is not validated again, and its numbers are stored as they
//     are when Checked found them all canonical
//     (storage.Item.NumbersCanonical), as a decoded event's are: each
//     number of an ingested event is read once by the decoder and once by
//     the engine's check, not a third time here.
//   - Attribute values use a compact tag-length encoding written for this
//     package (see codec.go): it is the hot path, and it keeps every
//     contract type, json.Number and []byte included, exactly.
//   - sstables are compressed with MinLZ on the upper levels and
//     Zstandard on the two bottom ones, in 32 KiB blocks (options.go says
//     why and what it buys). Compact flushes and compacts the whole DB
//     into the bottom level, for `timetable compact`.
//   - A store whose writes have stopped for Options.IdleFlush (5 seconds
//     by default) flushes its memtable and then compacts what its flushes
//     left in L0 into the levels below, as InfluxDB snapshots its cache
//     and compacts a shard when writes go cold, so that an idle store's
//     data is sstables compressed as compacted data are and its
//     write-ahead logs are deleted (idleflush.go). The compaction is
//     skipped when the data below L0's key span is more than ten times
//     L0 (idlecompact.go), which bounds its cost. The flusher is a
//     goroutine that Close stops, cancelling a compaction in progress,
//     before it closes the DB.
//   - Obsolete write-ahead logs are deleted, none kept for Pebble to
//     reuse (cleaner.go).
//   - DeleteTable deletes the catalog record and the table's key span in
//     one batch, then compacts the span, so the disk space is freed as it
//     returns rather than at some later compaction.
//   - DescribeTable reports ItemCount -1 (there is no count to read
//     cheaply) and SizeBytes from Pebble's EstimateDiskUsage over the
//     table's span, which leaves out data still in memtables.
//   - Query and Scan iterators read lazily from a Pebble iterator, which
//     sees one consistent snapshot of the DB taken when the iterator is
//     created. A Query's iterator is a storage.Requerier: Requery points
//     it at another partition or range of its table by setting the Pebble
//     iterator's bounds anew, still in that snapshot, where a new Query
//     would make a Pebble iterator (the DB's state, a merge of its
//     memtables and levels).
//
// # Caveats
//
// Close waits for every open iterator to be closed, as Prometheus' TSDB
// waits for its readers: an iterator that is never closed makes Close
// block. Every operation begun after Close returns storage.ErrClosed.
package pebblestore
