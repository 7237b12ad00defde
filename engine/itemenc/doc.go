// Package itemenc is the format of a data table's items: how timetable's
// keys are built and parsed, how an event is one item of the row layout,
// and how a map-layout item holds the events of a millisecond. It is
// pure: no I/O, no tables, no registry. The engine writes and reads
// through it, and the archive (Parquet export) and the CLI's planner
// decode and size items with it without the engine, as Prometheus'
// tsdb/chunkenc is the chunk format beside the tsdb that uses it.
//
// This comment is the one description of the item format; the engine's
// package doc, docs/design.md and docs/layouts.md point here.
//
// # Items of a data table
//
// Every physical table has the key schema pk (string, hash) and sk
// (string, range). A data table holds five kinds of item, told apart by
// their keys (keys.go builds and parses all of them, and its test checks
// the orders below):
//
//	kind                      partition key                       sort key
//	event (row layout)        {tenant}#{table}#{series}#{shard}   {time, 9 fractional digits}#{event id}
//	millisecond (map layout)  {tenant}#{table}#{series}#{shard}   {time of the millisecond}!{sequence}
//	series index entry        {tenant}#{table}                    s:{series}
//	rollup version marker     {tenant}#{table}#~v                 {hour or day}#{bucket start}#{series}
//	rollup                    {tenant}#{table}#{series}#~r{unit}  {bucket start}
//
// Tenant and table names cannot hold "#", so a key parses back even when
// a series does. Times are RFC 3339 in UTC with exactly nine fractional
// digits; fixed-width times sort bytewise in time order, so a time range
// is one key condition, readable in the AWS console and usable by hand
// with the AWS CLI. Event times before 1970 are refused (package event),
// so every time has the same width. The shard is a hash of the event id
// modulo the table's shard count, recorded in the table's registry entry.
// A time prefix (AppendTimePrefix: a time key without its trailing
// zeros, "2026-12-06T1" for 10:00) sorts after the keys of every earlier
// instant and before those of its own: the chunk layout's sort keys
// (package chunk) start with their window's, and a read of a chunk
// table's window starts its key range at it.
//
// # Row layout
//
// Each event is one item, its fields the item's other attributes, as
// native DynamoDB types:
//
//	pk = acme#a_table#car-17#0
//	sk = 2017-04-10T12:00:00.123456000Z#3q2-7wEe2yK
//
// # Map layout
//
// One item per partition (the partition key of rows) and millisecond,
// sort key the millisecond's fixed-width time, "!" and a sequence number
// (0, then 1, 2, … for continuation items), holding
//
//	tt_ids   the event ids, in the order they were appended (a list)
//	tt_ns    id → nanoseconds past the millisecond, for events not on it
//	tt_sz    an upper bound of the item's size in bytes
//	<field>  one map per field, event id → value
//
//	pk = acme#a_table#car-17#0
//	sk = 2017-04-10T12:00:00.123000000Z!0
//	tt_ids = ["3q2-7w…", "Xc9a…"], speed = {"3q2-7w…": 88.5, "Xc9a…": 90}
//
// "!" sorts before the "#" of row keys, so a time range selects map items
// with the same key conditions, and one partition may hold both layouts.
// An item holds at most its table's events_per_item events and stays
// under DynamoDB's 400 KB; an item whose tt_sz is past the limit is
// closed. How writers append to these items without losing or repeating
// an event is the engine's (its package doc, "Map layout").
//
// # Floor plan
//
//	keys.go      every key of a data table: partition keys of series
//	             shards, row and map sort keys (fixed-width times),
//	             the series index, version markers and rollups; table names
//	rowitem.go   the row layout: an event as one item, and back
//	mapitem.go   the map layout: the attributes of an item of one
//	             millisecond and the events it decodes to
//	mapwrite.go  the map layout as written: a new item, and the sizes an
//	             appender adds up to know what still fits
//	events.go    ItemEvents: the events any item of a physical table holds,
//	             as queries decode them, for archives
//
// The meta table's keys are package metatable's. Rollup items' values are
// the aggregate arithmetic's (engine/internal/agg); only their keys are
// here.
package itemenc
