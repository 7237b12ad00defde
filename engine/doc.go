// Package engine is timetable's embeddable time-series engine: the write
// path that routes events to period tables and the read path that fans a
// query out over tables, series and shards and merges the answers in time
// order. It runs on any storage.Store.
//
// # Basics
//
// Open an engine on a store, then Write and Query:
//
//	db, err := engine.Open(ctx, store, engine.Options{})
//	err = db.Write(ctx, "acme", "a_table", events)
//	page, err := db.Query(ctx, "acme", engine.Query{Table: "a_table", From: from, To: to})
//
// # Row layout
//
// Each event is one item. Its partition key is
// "{tenant}#{table}#{series}#{shard}" and its sort key is the event time
// in RFC 3339 with exactly nine fractional digits, "#", and the event id:
//
//	pk = acme#a_table#car-17#0
//	sk = 2017-04-10T12:00:00.123456000Z#3q2-7wEe2yKz0qUe1sXQxw
//
// Tenant and table names cannot hold "#", so the key parses back even when
// a series does. Fixed-width times sort bytewise in time order, so a time
// range is one key condition, readable in the AWS console and usable by
// hand with the AWS CLI. Fields are the item's other attributes, as native
// DynamoDB types. Event times before 1970 are refused (package event), so
// every time has the same width.
//
// The shard is a hash of the event id modulo the table's shard count, so a
// retried event lands on the very item it wrote before; the count is
// recorded in each table's tags, so changing a family's shard count only
// affects new tables.
//
// # Series index
//
// A query may leave out the series and read every series of a logical
// table. To find them without a scan, the engine writes, in the same batch
// as the first event of a series in a physical table, an index item with
// partition key "{tenant}#{table}" and the series as sort key. It lives and
// dies with its table.
//
// # Logical tables
//
// The first write to a logical table records it in the meta table (by
// default "timetable_meta"), with the tenants; a query of a logical table
// never written fails with ErrUnknownTable.
//
// # Reads
//
// A query finds the physical tables whose periods overlap [From, To] (with
// write-time grouping, several per period), starts one storage query per
// table, series and shard, fetches their first pages in parallel under
// Options.QueryParallelism, and merges them by (time, id, series). The same
// event found in two tables (a retry across a month boundary) is returned
// once. Later pages are read only as the merge needs them, so memory is
// bounded by pages, not by the number of events in the range.
//
// The cursor names exactly the last event returned and is signed with a key
// kept in the meta table, so a tampered or foreign cursor is refused
// (ErrBadCursor) rather than silently misread. Resuming never skips or
// repeats an event.
//
// # Caveats
//
// The catalog of physical tables is cached. Tables this engine creates are
// seen at once; tables created by another process (another server on the
// same DynamoDB account) are seen after Options.CatalogRefresh. A table
// deleted behind the engine's back reads as empty, and a write makes it
// again.
//
// The engine remembers which series each table's series index holds, so
// that it writes an index entry once per series and table. It forgets a
// table when it finds it deleted (a failed read or write, or a listing
// without it). Should another process delete a table and make it again
// between two of this engine's listings, an engine that keeps writing a
// series it had indexed in the old table would not index it in the new
// one, and queries without a series would miss those events (queries
// naming the series still find them). That takes a table deleted by
// retention while several servers still write to it.
package engine
