// Package registry keeps the facts of every physical table timetable
// creates, in the meta table: one item per table, written before the table
// is created. It is the one source of truth for which tables a family has,
// what period and write month each holds, how it is laid out and sharded,
// and what tier and capacity it was last given.
//
// # Why not tags or names
//
// DynamoDB tags are eventually consistent, rate-limited (TagResource about
// 5 a second, ListTagsOfResource about 10 a second per account), cost a
// control-plane call per table, and DynamoDB Local has none. A table name
// says which period it holds only under the family's current naming
// scheme and period. So the engine reads a family's tables for a time range
// with one Query of the registry, and the lifecycle manager plans from the
// registry with no call per table. Tags are still written, best effort, as
// cost-allocation labels for people and billing reports.
//
// # Entries
//
// An Entry records the family's policy as it was when the table was made
// (Entry.Policy: period, naming, write-time grouping, shards, layout,
// tiers, backfill tier, grace, TTL), and the table's event id scheme
// (Entry.IDScheme, event.IDScheme): a table made now gets
// event.LatestIDScheme, unless its name had an earlier generation, whose
// scheme it keeps; an entry recorded before schemes has none, and its
// table has scheme 1 for good, so that the ids already stored keep
// matching a retried write. That policy, never the configuration
// of today, decides how the table is read and aged: changing a family's
// period, naming, shards or tiers changes only the tables made afterwards.
// A family's retention and archive target are the exception: they are read
// from the current configuration, since shortening retention is meant to
// reach the data already stored.
//
// An entry moves through the states creating → active → archived →
// deleted. Missing marks an entry whose table was found gone without
// timetable deleting it. A table made again under a deleted table's name
// (late data for a period already deleted) is a new generation of the
// entry: Generation counts them, so that an archive or a state change of
// an older generation never applies to a newer one.
//
// # Fences
//
// Before the lifecycle archives or deletes a table it fences it
// (Entry.FencedAt), and it archives or deletes it only once the fence
// has settled: FenceSettle (DefaultFenceSettle) after it was set. A
// writer refuses a fenced table (the engine answers 503 with
// Retry-After); it reads a table's entry again at least every RouteTTL
// of its routing cache (DefaultRouteTTL), and a write ends by its
// deadline (DefaultWriteTimeout), so once the fence has settled no
// write can still land in the table. A table made again under the name
// after the delete is the entry's next generation, unfenced.
//
// # Keys
//
// Entries of a family share the partition "registry#{family}", sorted by
// "{period start, RFC 3339 UTC}#{table name}", so a time range is one
// Query: periods are at most a quarter long, so the tables overlapping
// [from, to] are among those starting in [from - MaxPeriod, to].
//
// # Versions
//
// Each family's entries have a version (Version), raised by every write
// of an entry before it returns, in an item of its own: a reader that
// keeps a family's entries reads the version instead of the entries, and
// the entries again only when the version moved (version.go).
//
// # Concurrency
//
// Registering is a conditional write: of several servers racing to make a
// table, one registers it and all use the entry that won. Every write of
// an entry raises its revision (Entry.Revision), and saves are
// conditional on it: a save of an entry read before another write of it
// (an older generation, or the same one fenced, archived, deleted or
// marked missing since) fails with ErrStale instead of overwriting what
// the other wrote, and a next generation is registered only over the
// entry its registrar read.
package registry
