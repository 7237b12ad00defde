// Package compact packs the events of a physical table that were written
// one at a time (rows, map items, small chunks) into chunk items, as the
// chunk layout writes a request's events of one series and window
// (package engine/chunk, docs/layouts.md "Packed later").
//
// # Steps
//
// Table compacts one physical table in place (Method InPlace, Pebble's;
// see "Next generation" for DynamoDB's):
//
//  1. It scans the table from its checkpoint (the scan key after which
//     every window is packed; the start for a table never compacted).
//     A scan returns the items of a partition together and in sort-key
//     order (DynamoDB's Scan keeps a partition key's items together;
//     Pebble scans in key order), so the event items of one partition
//     and one chunk window come one after another: a group.
//  2. A group's events are decoded together (chunk.WindowEvents), each
//     kept once, and packed (chunk.Pack) into chunk items, keyed by their
//     content. An event whose id is the one its row would be given
//     (event.Event.AssignID under the table's id scheme) is packed
//     without it, as a written chunk holds it.
//  3. The chunk items the group does not hold already are written
//     (storage BatchWrite); then the group's items that are not among
//     them are deleted (BatchDelete).
//  4. After a number of groups, and when it stops, the scan key of the
//     last item of the last group done is handed to the checkpoint
//     function (the registry entry's compact cursor, when the lifecycle
//     or `timetable compact` runs it).
//
// A group of one chunk item is left as it is. Items that hold no events
// (markers, series index entries) are never touched.
//
// # Why a kill at any point is safe
//
// Reads of a chunk-layout table decode a window's items together and drop
// an event two items hold (same series, time and content, or same client
// id), so between step 3's write and its delete the window's events are
// read once. A chunk's key is its content's: a rerun that packs the same
// events writes the very items it wrote, and a rerun after the delete
// finds the window's one chunk and leaves it. A checkpoint only saves
// work: a rerun from an older one packs again what is packed, which
// writes nothing and deletes nothing. So a kill between any two calls
// loses no event and duplicates none.
//
// # What the caller must see to
//
// The table must take no writes while it is compacted: a write that
// replaced a row (same client id, other fields) between the read and the
// delete would be deleted, and a write during a rewrite's copy would not
// be copied. The lifecycle fences the table first (registry
// Entry.FencedAt) and waits for the fence to settle, as it does before an
// archive; `timetable compact` needs the store to itself. The table's
// registry entry must say the table holds chunks (layout chunk and its
// window) before the first chunk is written, so that every reader decodes
// them: AsChunks makes a row or map table's entry so, and Entry refuses
// an entry that is not.
//
// # Expiry
//
// In a table of a family with `ttl`, the chunks packed from a group's
// items expire at the latest of those items' expiries (the attribute
// family.TTLAttribute; chunk.Expiry), so no event expires earlier than
// its item would have; an event may outlive its own expiry by up to a
// chunk window. When one of the items has no expiry (written before the
// family set a ttl) the chunks have none, as that item would never have
// expired.
//
// # Next generation (DynamoDB)
//
// On DynamoDB every item deleted costs a write unit and a table deleted
// nothing, so Rewrite (Method NextGeneration) packs a table into a new
// physical table instead, in steps recorded on its registry entry
// (registry.Rewrite):
//
//  1. The entry records the new table's name before it is made: the
//     entry's name and ".r1" (".r2"... for a table rewritten again,
//     registry Entry.NextTableName). A '.' is in no name a family
//     formats, so the name never parses as a family's table; the
//     registry explains it (registry.Compare). It is made through
//     registry.CreateRewriteTable, the CreateTable every table is made
//     with: the tier's capacity and class, the tags with the meta
//     table's (family.TagMeta, the IAM template's ABAC condition).
//  2. Copy: the table is scanned (eventually consistent when
//     Options.Eventual: the fence has settled) in parallel segments (see
//     "Parallel scan"), each group by group as Table does; a group's
//     events are packed (packGroup) and written to the new table; other
//     items (markers, the series index, rollups) are copied as they are.
//     The events are counted and hashed as they are read
//     (archive.ContentHash, order-independent, over each event's tenant,
//     table, series, sort key and fields: the items differ, the events
//     must not), the other items over the item whole.
//  3. Verify: the new table is scanned back, strongly consistent (the
//     chunks were just written), in as many segments, and hashed the same
//     way; the segments' hashes add up (ContentHash.Merge). A difference
//     fails with ErrVerify: the entry keeps the old table, the new one is
//     deleted at once, so that it costs nothing while the table waits
//     (with Options.Unfence the fence is lifted too, so that late events
//     land until the next attempt fences it again), and the failure is
//     recorded on the entry (registry Entry.RewriteFailed; see "Failed
//     verifications").
//  4. Switch: one conditional save of the entry names the new table
//     (registry Entry.Physical, read through Entry.TableName), records
//     ChunkedAt and, with Options.Unfence, lifts the fence. The entry
//     keeps its name and key: a reader of the registry sees the old table
//     or the new, never both or neither, and writers route late events
//     to the new table.
//  5. Drop: Options.DropAfter after the switch (the lifecycle's fence
//     settle time, for the queries that listed the old table before the
//     switch to end) the old table is deleted, its deletion protection
//     lifted first.
//
// Every CheckpointEvery groups or items of a segment, and at each step,
// the step's scan keys and counts and hashes so far, segment by segment,
// are saved on the entry (registry Rewrite.Segments), so a run stopped
// anywhere (its deadline, a kill) resumes each segment there: items
// written after a segment's last checkpoint are written again, the same
// (a chunk's key is its content's; other items are copied as they were).
// A segment's checkpoint is taken after its items are written, and
// records its own key and sums only: the other segments' stay as of
// their own last checkpoints, so the sums saved are always those of what
// was written. The old table is deleted only after the switch, which
// comes only after the verification.
//
// # Parallel scan
//
// A 52-million-event day written one at a time (the AWS guide's example,
// about 600 events a second) is some 7 GiB of rows, too much for one
// Scan in the time a lifecycle has. The scans of a rewrite are therefore
// DynamoDB parallel scans (storage.Segment: Segment and TotalSegments,
// the ScanSegment the archive's export and its table check use): the
// number of segments is decided when the copy starts, Options.Segments
// or SegmentsFor the table's size (DescribeTable's estimate): one per
// SegmentBytes (2 GiB, the DynamoDB Developer Guide's rule of thumb for
// TotalSegments), at least 1 and at most MaxSegments (64, so that the
// checkpoints fit on the registry entry); it is kept for the verify step
// and by a resumed rewrite. Options.Concurrency segments (4 by default)
// are scanned at once, each by a goroutine that scan owns and waits for;
// a segment that fails stops the others, and at the deadline each stops
// by itself after one group at least, and no segment starts after one
// stopped. A rewrite saved before scans were parallel resumes as one
// segment.
//
// DynamoDB keeps a partition key's items in one segment, so a group is
// never split between segments; Pebble splits its key range, where a
// partition may be cut in two: each half is packed on its own, which
// reads the same (a window's items are decoded together), and an event
// two of the old table's items held counted twice on one side and once
// on the other fails the verification, so nothing is lost. Pebble
// compacts in place in any case.
//
// Memory is bounded by the concurrency, not the table: a segment holds
// one group (a series' window: at 600 events a second spread over the
// series, a few thousand events), its batch (at most batchSize items
// waiting to be written) and the store's page of the scan (1 MB on
// DynamoDB), a few megabytes for 4 segments, whatever the table's size.
//
// # Failed verifications
//
// A copy that does not verify is a fault (of the store, or of this
// code), which a rerun on the next lifecycle cycle would most likely
// meet again, paying a full read and write of the table each time. So
// the failure is recorded on the entry (registry RewriteFailure: how
// many in a row, when, the new table's name and why) with the time the
// next rewrite may start: RetryDelay, an hour after the first, doubled
// for each failure after, at most a week. Until then Rewrite refuses to
// start one (ErrRetryLater; Options.Retry overrides it) and the
// lifecycle plans no compaction of the table (RetryDue); it logs each
// failure as an error and counts it in
// timetable_lifecycle_rewrite_verify_failures_total. A rewrite that
// verifies clears the record, and so does the next generation of the
// table's name.
package compact
