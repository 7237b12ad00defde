// Package itemenc is the format of a data table's items: how timetable's
// keys are built and parsed, how an event is one item of the row layout,
// and how a map-layout item holds the events of a millisecond. It is
// pure: no I/O, no tables, no registry. The engine writes and reads
// through it, and the archive (Parquet export) and the CLI's planner
// decode and size items with it without the engine, as Prometheus'
// tsdb/chunkenc is the chunk format beside the tsdb that uses it.
//
// # Floor plan
//
//	keys.go     every key of a data table: partition keys of series
//	            shards, row and map sort keys (fixed-width times),
//	            the series index, version markers and rollups; table names
//	rowitem.go  the row layout: an event as one item, and back
//	mapitem.go  the map layout: the attributes of an item of one
//	            millisecond and the events it decodes to
//	mapwrite.go the map layout as written: a new item, and the sizes an
//	            appender adds up to know what still fits
//	events.go   ItemEvents: the events any item of a physical table holds,
//	            as queries decode them, for archives
//
// The meta table's keys are package metatable's. Rollup items' values are
// the aggregate arithmetic's (engine/internal/agg); only their keys are
// here.
package itemenc
