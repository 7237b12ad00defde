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
//	{time prefix of its window's start}"{offset of its first event}{content sum}
//	pk = acme#cars#car-17#2
//	sk = 2026-12-06T1"McaanKxjIf9yxTOE
//	c  = 0x03…   (its chunk)
//
// Every byte of an item's keys and attribute names is stored, and
// billed, in every item (Developer Guide, "DynamoDB item sizes and
// formats": an item's size is the lengths of its attribute names and
// values; each item costs 100 bytes of indexing besides), and a chunk of
// ten readings holds a hundred bytes or so of events: so the key says no
// more than it must.
//
//   - The time prefix (itemenc.AppendTimePrefix) is the start of the
//     chunk's window, aligned to the Unix epoch, as a time key without
//     its trailing zeros: "2026-12-06T1" for 10:00, "2026-12-06" for
//     midnight. It sorts after every item of the windows before and
//     before every item of its own, and '"' after it sorts below every
//     character of a time key: a key range of times from the window's
//     LowKey selects the window's chunks beside its rows and map items.
//   - The offset is the first event's time less the window's start, in
//     nanoseconds: a letter A to U, its number of decimal digits (A for
//     the offset 0), then its digits without the trailing zeros, each
//     a letter, the last one of its own set: digit d is letter 2d of
//     "abcdefghijklmnopqrs" where it is not last and letter 2d-1 where
//     it is ("Mcaan" is 100.7 s: twelve digits, 1, 0, 0 and a last 7).
//     A last digit d sorts between the letters of d-1 and d that are not
//     last, so the offsets sort as their texts do, and a window's chunks
//     sort by their first events' times, as long keys did (an aggregate
//     folds a window's chunks from their columns when, in key order,
//     each one's events come before the next one's). The block's times
//     are offsets from this first time.
//   - The content sum is the first 8 bytes of the SHA-256 of the
//     chunk's uncompressed block, in unpadded base64url (11 characters).
//     Two chunks of one partition have one key only if their first
//     events are at the same nanosecond and their sums agree: for k such
//     chunks the chance is k(k-1)/2 in 2^64, under 3·10^-14 for a
//     thousand of them, as an 8-byte event id tells apart the events of
//     one series at one instant (docs/design.md, "Event ids are 8
//     bytes"). The shard is that SHA-256's first 8 bytes (big-endian)
//     modulo the table's shard count.
//
// The key is a string, as every sort key of a data table is (the key
// schema is the table's, shared with rows, map items and the series
// index), of 22 to 46 bytes for windows of whole seconds (DynamoDB
// allows 1,024: Developer Guide,
// "Constraints in Amazon DynamoDB"). The series is the partition key's
// alone; the block does not hold it. Its attributes are
//
//	c      the chunk: one byte saying how the block is stored, then it:
//	       0 as it is; 1 a Zstandard frame (without a checksum); 2 a
//	       Zstandard frame without its 4-byte magic number; 3 an S2
//	       block in its Snappy-compatible form (github.com/klauspost/
//	       compress/s2)
//	tt_expires
//	       in a table of a family with ttl (family.TTLAttribute), the
//	       item's expiry for DynamoDB's TTL, in Unix seconds: its newest
//	       event's time plus the ttl (Expiry); the table's TTL attribute,
//	       so its name is the table's, and absent without a ttl
//
// A chunk item holds no field, and is told from other items by its sort
// key (IsSortKey: a time prefix and '"', where a row's key has a whole
// time key and '#', a map item's '!'), so its attribute's name need not
// be told from fields' names. Pack stores a block under 256 bytes as 3,
// and a larger one as 2, or either as 0 when the codec does not shorten
// it (see compress: one codec picked by size, not the shorter of both).
//
// Items written before short keys had long ones, still read: the first
// event's whole time key, '"' and the content sum
// (2026-12-06T10:00:00.000000000Z"Qm9vLXNoYXI), and the chunk in the
// attribute tt_c; a '"' at the time key's end tells them from short
// keys, whose '"' comes earlier. The items of version 1 blocks are of
// those, and took 0 or 1, and had an attribute tt_n, the number of
// events, which nothing reads. A table may hold both forms, in one
// window even: a read, an aggregate, compaction and archives read both
// (engine.TestChunkLongKeysStillRead, on every backend).
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
// storage.MaxItemSize, as storage.ItemSize counts it, or they are more
// than 2^20: into parts of equal counts, one more than the times the
// limit goes into the item's size (or 2^20 into the count), each cut
// again the same way until its item fits. So the
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
// range at LowKey, the time prefix of the start of that time's window,
// where the window's chunks' keys start.
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
//	version  one byte, 2
//	n        uvarint: the number of events, 1 to 2^20 (Pack cuts a
//	         window's events into chunks of at most that many)
//	times    if n > 1: one byte e, 0 to 18, and an int column (below)
//	         of the n-1 later times' offsets from the first, in units of
//	         10^e ns: e is the largest that divides them all. The first
//	         time is the sort key's.
//	ids      uvarint: how many events have a client id; if any, one
//	         uvarint per event: 0 for none, else the id's length + 1,
//	         followed by the id's bytes
//	fields   uvarint: the number of distinct field names; then per
//	         name, in bytewise order:
//	           name      uvarint length and bytes
//	           kind      one byte: the column's kind, plus 0x80 when
//	                     some event lacks the field, and then a bitmap
//	                     of n bits (event i is bit i%8 of byte i/8) of
//	                     the events that have it
//	           column    uvarint length and bytes: the values of the
//	                     events that have the field, in block order
//
// # Int columns
//
// An int column is frame-of-reference bit packing of int64s, of the
// values themselves or of their differences, whichever is shorter: a
// header byte, the width w (0 to 64) of each packed value plus 0x80 for
// differences; then without 0x80 a varint, the least value, and each
// value's excess over it in w bits; with 0x80 a varint, the first value,
// a varint, the least difference, and each later value's difference from
// the one before (wrapping) less the least, in w bits. Bits go most
// significant first, the last byte padded with 0. A run of one value
// takes two bytes or three, values at a steady step (times, counters) as
// few, and gauges that drift the bits of their spread.
//
// # Columns
//
// The writer takes the kind, of those that hold every value of the
// column exactly, whose column is shortest:
//
//	1 int      numbers an int64 holds (strconv.ParseInt of the canonical
//	           text, which FormatInt gives back): an int column
//	6 decimal  numbers of at most 18 digits after the point whose
//	           mantissas at the column's scale s (the most digits after
//	           a point of any) fit an int64: one byte s, then an int
//	           column of the mantissas (the number times 10^s); each
//	           reads back as the mantissa with the point put back and
//	           trailing zeros of the fraction dropped, which the writer
//	           checks gives the canonical text again
//	2 float    numbers whose canonical text strconv.FormatFloat(f, 'f',
//	           -1, 64) gives back from their float64: Gorilla's XOR
//	           encoding (Pelkonen et al., VLDB 2015, as Prometheus'
//	           tsdb/chunkenc writes it): the first value's 64 bits, then
//	           per value a 0 bit when it equals the one before, else 1
//	           and either 0 and the XOR's bits inside the last window of
//	           leading and trailing zeros, or 1, five bits of leading
//	           zeros (at most 31), six of the meaningful bits' count (64
//	           written as 0), and those bits; the last byte padded with 0
//	3 bool     a bitmap of the values
//	4 string   uvarint d, the number of distinct values, then each
//	           (uvarint length and bytes) in the order they first come;
//	           when d is less than the number of values, each value's
//	           index among them in the fewest bits that hold d-1 (none
//	           when d is 1), padded to a byte
//	5 any      per value the generic encoding
//
// Integers take kind 1; other numbers kind 6 or 2, whichever is
// shorter (decimal readings like 21.5 take a few bits each as decimals,
// and most of their 64 as XORed floats); a column of every number kind
// holds is generic.
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
// A chunk item's bytes are mostly its keys and a few bytes a field
// when a request brings a series few events (Telegraf sends ten
// readings of a series a request), so version 2 spends nothing it need
// not: the first time is the sort key's, times are counted in the
// largest decimal unit that divides them (readings a whole second apart
// take no bits), numbers that are decimal literals are integers at a
// scale, ints are bit-packed at the width of their spread rather than
// a varint each, a string column keeps each distinct value once (a
// status, a host name), and a field's kind and presence share a byte.
// Compression comes after, only when it shortens the block: Zstandard
// (github.com/klauspost/compress/zstd, its default level) finds the
// repeats of large chunks, and S2's shorter framing the repeats of
// small ones (a long string in every event). One codec is tried, by the
// block's size, since trying both cost more CPU than the rest of
// packing a small chunk, for a few bytes. DynamoDB stores the chunk as a binary attribute; Pebble
// compresses its blocks again. BenchmarkPack reports the bytes per event
// of the guide's 180-byte event shape, and BenchmarkPackRequestShapes
// those of `make bench`'s chunks part; docs/layouts.md has the figures.
// Version 1 blocks, still read (block_v1.go), took 71.3 and 34.6 bytes
// an event in `make bench`'s two request shapes where version 2 took
// about 60 and 28 with long sort keys: see docs/layouts.md for the
// figures of short ones.
//
// # Floor plan
//
//	item.go      Pack and Unpack: chunk items, compression, and the block
//	             order that makes a retry write the same item
//	key.go       a chunk item's keys (short, and the long ones still read)
//	             and the name of its attribute
//	block.go     the block: times, ids, and each field's column
//	column.go    the kinds of columns, each one's writer and reader
//	             (readColumn, for readers of whole events and of columns)
//	ints.go      int columns: frame-of-reference bit packing
//	block_v1.go  the reader of version 1 blocks
//	value.go     the generic value encoding, and the reader of a chunk's bytes
//	bits.go      the bit stream and Gorilla's XOR encoding of floats
//	window.go  reads: the window a read starts at, a window's events of
//	           chunks, rows and map items, each once, and the events of
//	           one item of any kind (ItemEvents), for archives; and
//	           the events of one item of a window (ItemDecoded), for
//	           reads that decode a window lazily
//	span.go    an item's span, its first and last events' times, read
//	           from its key and times column (SpanReader)
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
