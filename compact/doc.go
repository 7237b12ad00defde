// Package compact packs the events of a physical table that were written
// one at a time (rows, map items, small chunks) into chunk items, as the
// chunk layout writes a request's events of one series and window
// (package engine/chunk, docs/layouts.md "Packed later").
//
// # Steps
//
// Table compacts one physical table:
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
// delete would be deleted. The lifecycle fences the table first (registry
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
// # DynamoDB
//
// On DynamoDB the table is compacted in place, as on Pebble: each row
// deleted costs a write unit, besides the chunks written. The rewrite the
// issue asks for (into the table's next generation, verified as archives
// are, switched in the registry, the old table deleted for free) is not
// built.
package compact
