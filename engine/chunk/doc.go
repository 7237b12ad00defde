// Package chunk is the format of the chunk layout's items: a series'
// events of one time window stored together in one item, by column, and
// compressed. It is pure, as package itemenc is: Pack turns events into
// items and Unpack items into events, with no I/O, no tables and no
// registry. The engine writes and reads chunks in the tables of a
// family of the chunk layout (package engine's doc, "Chunk layout";
// docs/layouts.md says what was chosen and why).
//
// # Items
//
// A chunk item sits in the partition of its series shard, beside rows
// and map items (itemenc's keys), under the sort key
//
//	{time of its first event}"{content sum}
//	pk = acme#cars#car-17#2
//	sk = 2026-12-06T10:00:00.000000000Z"Qm9vLXNoYXI
//
// The time is the row layout's fixed-width one; '"' sorts after the map
// layout's '!' and before the row layout's '#' and itemenc.HighKey's
// '$', so a key range of times selects chunks beside rows and map
// items. The content sum is the first 8 bytes of the SHA-256 of the
// chunk's uncompressed block, in unpadded base64url (8 bytes, as an event
// id has, since it tells apart only the chunks of one series shard whose
// first events are at one instant), and the shard is
// that SHA-256's first 8 bytes (big-endian) modulo the table's shard
// count. Its attributes are
//
//	tt_c   the chunk: one byte, 0 when the block is stored as it is and
//	       1 when it is a Zstandard frame (without a checksum), then the
//	       block
//	tt_n   the number of events
//	tt_expires
//	       in a table of a family with ttl (family.TTLAttribute), the
//	       item's expiry for DynamoDB's TTL, in Unix seconds: its newest
//	       event's time plus the ttl (Expiry)
//
// A chunk expires whole, so it takes the expiry of its newest event: no
// event expires before its time plus the ttl, as its row would, and an
// event may outlive that by up to a chunk window (an event at a window's
// start, in a chunk whose newest event is at its end). Compaction gives
// the chunks it packs the latest expiry of the items they replace, and
// none when one of them had none. The expiry is not in the key: a retry
// writes the same item.
//
// # Idempotency
//
// A chunk holds no stored id per event. Pack sorts a window's events into
// block order (time, then client id, events without one first, then
// content: the fields in the generic value encoding below, map keys in
// bytewise order), drops an event that is there twice (the same time and
// client id, or no client id and the same time and fields), and splits
// the events of one window only when their item would pass
// storage.MaxItemSize, as storage.ItemSize counts it: into parts of
// equal counts, one more than the times the limit goes into the item's
// size, each cut again the same way until its item fits. So the
// same events, in any order, give the same blocks and so the same keys
// and items, and a retried request overwrites the items it wrote. Events
// that two different requests put in chunks of one window (a retry that
// joined other events) are stored twice; a read drops the repeat.
// WindowEvents reads the items of a partition's window (chunks, rows and
// map items together): it gives an event without a client id its id
// (event.Event.AssignID) under its table's id scheme, as the row layout
// does when writing, so that an event stored twice has the same time and
// id both times, kept once, and events of chunks and rows merge by
// (time, id) as rows do. A read of events from a time on starts its key
// range at LowKey, the start of that time's window, since a chunk's sort
// key is the time of its first event.
//
// An event too large to be a chunk on its own (its block, compressed,
// takes its item past 400 KB where its row would not) is left for the
// row layout: Pack returns it apart.
//
// # Blocks
//
// A block is, in order (uvarint and varint are Go's encoding/binary
// variable-length integers, varints zigzag-encoded):
//
//	version  one byte, 1
//	n        uvarint: the number of events
//	times    varint: the first time, Unix nanoseconds; if n > 1, uvarint:
//	         the second time less the first; then one varint per further
//	         event: its delta less the one before (delta of delta)
//	ids      uvarint: how many events have a client id; if any, one
//	         uvarint per event: 0 for none, else the id's length + 1,
//	         followed by the id's bytes
//	fields   uvarint: the number of distinct field names; then per
//	         name, in bytewise order:
//	           name      uvarint length and bytes
//	           presence  one byte: 0 when every event has the field; 1
//	                     followed by a bitmap of n bits (event i is bit
//	                     i%8 of byte i/8) of the events that have it
//	           kind      one byte: the column's kind
//	           column    uvarint length and bytes: the values of the
//	                     events that have the field, in block order
//
// # Columns
//
// The writer takes the first kind, in this order, that holds every value
// of the column exactly:
//
//	1 int     numbers an int64 holds (strconv.ParseInt of the canonical
//	          text, which FormatInt gives back): the first value, then
//	          each value less the one before (wrapping), as varints
//	2 float   numbers whose canonical text strconv.FormatFloat(f, 'f',
//	          -1, 64) gives back from their float64: Gorilla's XOR
//	          encoding (Pelkonen et al., VLDB 2015, as Prometheus'
//	          tsdb/chunkenc writes it): the first value's 64 bits, then
//	          per value a 0 bit when it equals the one before, else 1
//	          and either 0 and the XOR's bits inside the last window of
//	          leading and trailing zeros, or 1, five bits of leading
//	          zeros (at most 31), six of the meaningful bits' count (64
//	          written as 0), and those bits; the last byte padded with 0
//	3 bool    a bitmap of the values
//	4 string  per value a uvarint length and the bytes
//	5 any     per value the generic encoding
//
// # Values
//
// The generic encoding is a tag byte and what follows it: 0 null, 1
// false, 2 true; 3 string (uvarint length, bytes); 4 number (uvarint
// length of its canonical text, then the text two characters a byte,
// high nibble first: digits as 0-9, "." as 10, "-" as 11); 5 binary
// (uvarint length, bytes); 6 list (uvarint count, values); 7 map
// (uvarint count, then per entry in bytewise order of keys the key as a
// uvarint length and bytes, and the value).
//
// Numbers are kept as their canonical text (package event's, which every
// store keeps), so every kind reads back the very json.Number the row
// layout reads back. Values read back as package storage's types: nil,
// bool, string, json.Number, []byte, []any and map[string]any (an empty
// list or map as an empty one, not nil); an event without fields reads
// back with empty Fields, not nil, as its row does.
//
// # Why these encodings
//
// Times as deltas of deltas take a byte an event when readings come at a
// steady pace. Columns put like values together, so that Zstandard,
// after them, finds the repeats that a row's attribute names and a
// status string make; Gorilla's XOR takes the float readings that drift
// slowly below their 8 bytes, and deltas the integers that count. The
// block is compressed whole with Zstandard (github.com/klauspost/
// compress/zstd, at its default level), which DynamoDB stores as a
// binary attribute; Pebble compresses its blocks again. BenchmarkPack
// reports the bytes per event of the guide's 180-byte event shape.
//
// # Floor plan
//
//	item.go    Pack and Unpack: chunk items, their keys, compression,
//	           and the block order that makes a retry write the same item
//	block.go   the block: times, ids, and each field's column
//	value.go   the generic value encoding, and the reader of a chunk's bytes
//	bits.go    the bit stream and Gorilla's XOR encoding of floats
//	window.go  reads: the window a read starts at, a window's events of
//	           chunks, rows and map items, each once, and the events of
//	           one item of any kind (ItemEvents), for archives
//
// # Corrupt chunks
//
// Unpack refuses, with an error wrapping ErrCorrupt, a chunk that is
// truncated, of an unknown version, kind or tag, with bytes left over,
// or nested deeper than storage.MaxDepth; it never panics, and it
// allocates only what the chunk's bytes can hold (a count past the end
// is refused before anything is made), its Zstandard frames decoded to
// at most 256 MiB.
package chunk
