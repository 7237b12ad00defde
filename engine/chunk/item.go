package chunk

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
)

// Ways the block of an item is stored (the first byte of AttrData).
const (
	storedRaw  = 0
	storedZstd = 1 // a Zstandard frame, as version 1 items store it
	// storedZstdBare is a Zstandard frame without its 4-byte magic
	// number, which says nothing in an item whose first byte says how it
	// is stored.
	storedZstdBare = 2
	// storedS2 is an S2 block (github.com/klauspost/compress/s2, in the
	// Snappy-compatible form), whose framing is a few bytes shorter than
	// Zstandard's: most chunks of a few events take it.
	storedS2 = 3
)

// zstdMagic starts every Zstandard frame (RFC 8878, 3.1.1).
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// Series names the partition a series' chunks go to: the tenant, the
// logical table, the series, and the shard count of the physical table;
// and the expiry its chunks carry, if any.
type Series struct {
	Tenant, Table, Series string
	Shards                int
	// Expiry is the expiry of the chunks; the zero Expiry gives none.
	Expiry Expiry

	window int64 // Pack's window, in nanoseconds, for the sort keys
}

// Expiry is when a chunk item expires, for DynamoDB's TTL: the later of
// its newest event's time plus TTL and At, written in the attribute
// family.TTLAttribute in Unix seconds (rounded down, as a row's is) and
// counted in the item's size. A chunk expires whole, so it takes its
// newest event's expiry: no event expires before its time plus TTL, and
// an event may outlive it by up to a chunk window. The zero Expiry
// gives no attribute.
type Expiry struct {
	// TTL is the family's ttl: an item expires its newest event's time
	// plus TTL (engine writes).
	TTL time.Duration
	// At is an expiry an item keeps at the least: the latest of the
	// items it replaces (compaction).
	At time.Time
}

// of returns the expiry of an item whose newest event is at newest, and
// false for none.
func (x Expiry) of(newest time.Time) (int64, bool) {
	if x.TTL <= 0 && x.At.IsZero() {
		return 0, false
	}
	at := x.At.Unix()
	if x.TTL > 0 {
		at = max(at, newest.Add(x.TTL).Unix())
	}
	return at, true
}

// Pack returns the chunk items that hold evs, events of one series
// (s.Series; their Series fields are not read), a chunk for the events
// of each window of length window (aligned to the Unix epoch, so to UTC
// midnight for a window dividing a day), and as many for one window as
// keep each under storage.MaxItemSize, as storage.ItemSize counts it. The
// items are checked (storage.Item.Checked).
//
// Events are put in block order (time, client id, content) and an event
// that is in evs twice (the same time and client id, or no client id and
// the same time and fields) is packed once, so the same events give the
// same items, keys included, in whatever order they come: a retried
// request writes the items it wrote before. The partition is a shard
// picked by the chunk's content. Each item carries s.Expiry's expiry
// (Expiry), which its key does not depend on.
//
// An event too large to be a chunk on its own is returned in alone, for
// the caller to write as a row. evs is not changed. Pack fails only on a
// value that is not one of storage's types, or a number that is not
// canonical: events that passed package event's validation have neither.
func Pack(s Series, window time.Duration, evs []event.Event) (items []storage.Item, alone []event.Event, err error) {
	return pack(s, window, evs, nil, nil)
}

// PackWindows is Pack that also appends to starts the start of each
// item's window, in Unix nanoseconds, and returns it (the k-th appended
// is items[k]'s), for a caller that tells which of its events each item
// holds without reading the items' keys.
func PackWindows(s Series, window time.Duration, evs []event.Event, starts []int64) (items []storage.Item, _ []int64, alone []event.Event, err error) {
	items, alone, err = pack(s, window, evs, nil, &starts)
	return items, starts, alone, err
}

// PackFields is PackWindows for events whose fields are in fields
// rather than in their Fields maps, which are not read: fields[k] holds
// those of evs[k], each name once, as event.Batch.AppendFields gives
// them without building a map an event. The events Pack returns alone
// have their Fields. The items are those Pack makes of the events with
// their fields in maps.
func PackFields(s Series, window time.Duration, evs []event.Event, fields [][]event.Field, starts []int64) (items []storage.Item, _ []int64, alone []event.Event, err error) {
	if len(fields) != len(evs) {
		return nil, starts, nil, fmt.Errorf("chunk: %d lists of fields for %d events", len(fields), len(evs))
	}
	items, alone, err = pack(s, window, evs, fields, &starts)
	return items, starts, alone, err
}

// pack is Pack, appending to *starts, when not nil, each item's window
// start; with fields (PackFields), the events' fields are there.
func pack(s Series, window time.Duration, evs []event.Event, fields [][]event.Field, starts *[]int64) (items []storage.Item, alone []event.Event, err error) {
	if window <= 0 {
		return nil, nil, fmt.Errorf("chunk: window %v is not positive", window)
	}
	if fields != nil && !inOrder(evs) {
		// To be put in order, the events' content is compared: in
		// maps, as Pack's callers give them.
		evs = withFieldMaps(evs, fields)
		fields = nil
	}
	ordered, err := order(evs)
	if err != nil {
		return nil, nil, err
	}
	p := packers.Get().(*packer)
	defer packers.Put(p)
	p.series, p.shards, p.pk, p.pkShard = s, max(s.Shards, 1), "", -1
	w := int64(window)
	p.series.window = w
	if len(ordered) > 0 && items == nil {
		// Room for an item a window the events span, as they mostly
		// take.
		span := (ordered[len(ordered)-1].Time.UnixNano()-windowStart(ordered[0].Time, w))/w + 1
		items = make([]storage.Item, 0, min(span, int64(len(ordered))))
	}
	for len(ordered) > 0 {
		start := windowStart(ordered[0].Time, w)
		end := start + w
		n := len(ordered)
		if ordered[n-1].Time.UnixNano() >= end {
			n, _ = slices.BinarySearchFunc(ordered, end, func(ev event.Event, end int64) int { return cmp.Compare(ev.Time.UnixNano(), end) })
		}
		had := len(items)
		var fs [][]event.Field
		if fields != nil {
			fs, fields = fields[:n], fields[n:]
		}
		if items, alone, err = p.pack(items, alone, ordered[:n], fs); err != nil {
			return nil, nil, err
		}
		if starts != nil {
			for range len(items) - had {
				*starts = append(*starts, start)
			}
		}
		ordered = ordered[n:]
	}
	return items, alone, nil
}

func windowStart(t time.Time, w int64) int64 {
	ns := t.UnixNano()
	return ns - ns%w
}

// packer is what one Pack call works with: the series, and the memory
// its blocks and columns are built in, reused from chunk to chunk and,
// through packers, from call to call, so that packing a request's many
// small chunks allocates little more than the items.
type packer struct {
	series Series
	shards int
	// pk is the partition key of shard pkShard, the last one made.
	pk      string
	pkShard int

	block  []byte   // the block being built
	col    []byte   // a field's column being built
	alt    []byte   // a column in another kind, to compare with col
	vals   []any    // a field's values
	bitmap []byte   // the events that have a field
	ints   []int64  // times, ints or mantissas of a column
	floats []uint64 // a column's floats
	names  []string // the fields of a block
	strs   []string // a string column's distinct values
	idx    []int    // a string column's value indexes; names' order
	key    []byte   // a sort key being built
	// prefixes are the time prefixes (itemenc.AppendTimePrefix) of the
	// last window starts sort keys were made for, most recent first: a
	// request's series mostly share a few windows.
	prefixes [4]windowPrefix
	// gatherFields' memory: the block's values, and by field
	cells, sorted  []cell
	rank           []int32
	starts, counts []int32
}

var packers = sync.Pool{New: func() any { return new(packer) }}

// windowPrefix is the time prefix of a window start, in Unix
// nanoseconds.
type windowPrefix struct {
	start  int64
	prefix []byte
}

// timePrefix returns the time prefix of the window start start, from
// p.prefixes or made and put first there.
func (p *packer) timePrefix(start int64) []byte {
	for k := range p.prefixes {
		if wp := p.prefixes[k]; wp.prefix != nil && wp.start == start {
			copy(p.prefixes[1:k+1], p.prefixes[:k])
			p.prefixes[0] = wp
			return wp.prefix
		}
	}
	last := p.prefixes[len(p.prefixes)-1].prefix // its memory, reused
	copy(p.prefixes[1:], p.prefixes[:len(p.prefixes)-1])
	p.prefixes[0] = windowPrefix{start: start, prefix: itemenc.AppendTimePrefix(last[:0], time.Unix(0, start).UTC())}
	return p.prefixes[0].prefix
}

// pack appends the items of evs, which are in block order, cutting them
// into as many parts of equal counts as the item's size calls for until
// each part's item fits.
func (p *packer) pack(items []storage.Item, alone []event.Event, evs []event.Event, fields [][]event.Field) ([]storage.Item, []event.Event, error) {
	it, err := p.item(evs, fields)
	if err != nil {
		return nil, nil, err
	}
	if len(evs) <= maxChunkEvents {
		// Checked refuses an item over the limit too: its size is
		// counted again only then.
		checked, _, err := it.Checked()
		if err == nil {
			return append(items, checked), alone, nil
		}
		if storage.ItemSize(it) <= storage.MaxItemSize {
			return nil, nil, err
		}
	}
	size := storage.ItemSize(it)
	if len(evs) == 1 {
		if fields != nil {
			return items, append(alone, withFieldMaps(evs, fields)...), nil
		}
		return items, append(alone, evs[0]), nil
	}
	parts := min(len(evs), max(size/storage.MaxItemSize, len(evs)/maxChunkEvents)+1)
	for i := range parts {
		from, to := i*len(evs)/parts, (i+1)*len(evs)/parts
		var fs [][]event.Field
		if fields != nil {
			fs = fields[from:to]
		}
		if items, alone, err = p.pack(items, alone, evs[from:to], fs); err != nil {
			return nil, nil, err
		}
	}
	return items, alone, nil
}

// withFieldMaps returns evs, in new memory, with each one's fields of
// fields in its Fields map.
func withFieldMaps(evs []event.Event, fields [][]event.Field) []event.Event {
	out := slices.Clone(evs)
	for k, fs := range fields {
		if len(fs) == 0 {
			out[k].Fields = nil
			continue
		}
		m := make(map[string]any, len(fs))
		for _, f := range fs {
			m[f.Name] = f.Value
		}
		out[k].Fields = m
	}
	return out
}

// item builds the item of evs, in block order, unchecked; their fields
// are in fields when it is not nil (PackFields).
func (p *packer) item(evs []event.Event, fields [][]event.Field) (storage.Item, error) {
	var err error
	if p.block, err = p.appendBlock(p.block[:0], evs, fields); err != nil {
		return storage.Item{}, err
	}
	sum := sha256.Sum256(p.block)
	shard := int(binary.BigEndian.Uint64(sum[:8]) % uint64(p.shards))
	if shard != p.pkShard {
		p.pk, p.pkShard = itemenc.PartitionKey(p.series.Tenant, p.series.Table, p.series.Series, shard), shard
	}
	s := p.series
	start := windowStart(evs[0].Time, s.window)
	p.key = appendSortKeyRest(append(p.key[:0], p.timePrefix(start)...), time.Unix(0, start).UTC(), evs[0].Time, sum[:])
	it := storage.Item{
		PK:    p.pk,
		SK:    string(p.key),
		Attrs: make(map[string]any, 2),
	}
	it.Attrs[AttrData] = compress(p.block)
	// evs are in block order: the last is the newest.
	if at, ok := s.Expiry.of(evs[len(evs)-1].Time); ok {
		it.Attrs[family.TTLAttribute] = json.Number(strconv.FormatInt(at, 10))
	}
	return it, nil
}

var (
	// encoder compresses blocks of any number of packings at once: its
	// EncodeAll takes one of as many encoders as the process has
	// threads, each made once and reused.
	encoder = sync.OnceValue(func() *zstd.Encoder {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithLowerEncoderMem(true), zstd.WithEncoderCRC(false))
		if err != nil {
			panic(err) // only for options it refuses, which these are not
		}
		return e
	})
	decoder = sync.OnceValue(func() *zstd.Decoder {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxBlock))
		if err != nil {
			panic(err)
		}
		return d
	})
)

// maxBlock bounds the block a chunk decompresses to, against a corrupt
// or crafted item: far above what 400 KB of compressed events make.
const maxBlock = 256 << 20

// zstdFrom is the size of the smallest block compress gives to
// Zstandard rather than S2. Below it, S2's framing is shorter than
// Zstandard's and they find the same repeats (a long string in every
// event): S2 gives blocks of 100 to 250 bytes within a few bytes of
// Zstandard, mostly shorter, and costs a fraction of its time. Above it,
// Zstandard's entropy coding of the columns' bits gains more, a third
// more on blocks of a few KB.
const zstdFrom = 256

// compress returns the stored form of block, in new memory: the block
// compressed, by S2 below zstdFrom bytes and Zstandard (its frame
// without the magic number) from there, or as it is when that is not
// shorter. Either codec alone, picked by size, costs a fraction of
// trying both on every chunk of a write, for a few bytes at most.
func compress(block []byte) []byte {
	if len(block) < zstdFrom {
		out := make([]byte, 1+s2.MaxEncodedLen(len(block)))
		if s := s2.EncodeSnappy(out[1:], block); len(s) < len(block) {
			out[0] = storedS2
			return out[: 1+len(s) : 1+len(s)]
		}
		out[0] = storedRaw
		return out[: 1+copy(out[1:], block) : 1+len(block)]
	}
	z := encoder().EncodeAll(block, make([]byte, 1, 1+len(block)))
	if frame := z[1:]; bytes.HasPrefix(frame, zstdMagic) && len(frame)-len(zstdMagic) < len(block) {
		z[0] = storedZstdBare
		return append(z[:1], frame[len(zstdMagic):]...)
	}
	return append([]byte{storedRaw}, block...)
}

func decompress(data []byte) ([]byte, error) { return decompressTo(nil, data) }

// decompressTo returns the block of a chunk's stored form data, in dst's
// memory when it is compressed (the block is a view of data when it is
// not).
func decompressTo(dst, data []byte) ([]byte, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: no data", ErrCorrupt)
	}
	switch data[0] {
	case storedRaw:
		return data[1:], nil
	case storedZstd, storedZstdBare:
		frame := data[1:]
		if data[0] == storedZstdBare {
			frame = append(slices.Clip(zstdMagic), frame...)
		}
		b, err := decoder().DecodeAll(frame, dst[:0])
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		return b, nil
	case storedS2:
		if n, err := s2.DecodedLen(data[1:]); err != nil || n > maxBlock {
			return nil, corrupt("S2 block of %d bytes: %v", n, err)
		}
		b, err := s2.Decode(dst[:cap(dst)], data[1:])
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("%w: stored as %d", ErrCorrupt, data[0])
}

// Unpack appends to dst the events of a chunk item, as a read returns
// it, in block order: time, then client id (events without one first),
// then content. An event without a client id has ID "": the reader gives
// it its id (event.Event.AssignID) under its table's scheme, as the row
// layout gives it when writing. The series is the partition key's.
func Unpack(dst []event.Event, it storage.Item) ([]event.Event, error) {
	_, _, series, _, err := itemenc.ParsePartitionKey(it.PK)
	if err != nil {
		return dst, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	data, ok := Data(it)
	if !ok {
		return dst, fmt.Errorf("%w: no %s", ErrCorrupt, AttrData)
	}
	block, err := decompress(data)
	if err != nil {
		return dst, err
	}
	if len(block) == 0 {
		return dst, corrupt("empty block")
	}
	switch block[0] {
	case 1:
		return readBlockV1(dst, block[1:], series)
	case blockVersion:
		first, ok := firstTime(it.SK)
		if !ok {
			return dst, corrupt("sort key %q", it.SK)
		}
		return readBlock(dst, block[1:], series, first)
	}
	return dst, corrupt("block version %d", block[0])
}

// firstTime returns the time of a chunk's first event, from its sort key,
// in Unix nanoseconds.
func firstTime(sk string) (int64, bool) {
	t, ok := FirstTime(sk)
	return t.UnixNano(), ok
}

// keyed is an event with its content in the generic encoding, by which
// events without client ids are ordered and told apart.
type keyed struct {
	ev      event.Event
	content []byte
}

// order returns evs in block order without repeats (see Pack): evs
// itself when it is in that order already, as a series' events of a
// request mostly are, each later than the one before or of the same time
// and a greater client id.
func order(evs []event.Event) ([]event.Event, error) {
	if inOrder(evs) {
		return evs, nil
	}
	ks, err := keyEvents(evs)
	if err != nil {
		return nil, err
	}
	out := make([]event.Event, len(ks))
	for i, k := range ks {
		out[i] = k.ev
	}
	return out, nil
}

// inOrder reports whether evs are in block order without repeats, as far
// as their times and client ids tell: no two share both.
func inOrder(evs []event.Event) bool {
	for i := 1; i < len(evs); i++ {
		a, b := &evs[i-1], &evs[i]
		if c := a.Time.Compare(b.Time); c > 0 || c == 0 && a.ID >= b.ID {
			return false
		}
	}
	return true
}

func keyEvents(evs []event.Event) ([]keyed, error) {
	ks := make([]keyed, len(evs))
	for i, ev := range evs {
		c, err := appendValue(nil, ev.Fields)
		if err != nil {
			return nil, err
		}
		ks[i] = keyed{ev: ev, content: c}
	}
	slices.SortFunc(ks, compareKeyed)
	return slices.CompactFunc(ks, sameEvent), nil
}

func compareKeyed(a, b keyed) int {
	if c := a.ev.Time.Compare(b.ev.Time); c != 0 {
		return c
	}
	if c := cmp.Compare(a.ev.ID, b.ev.ID); c != 0 {
		return c
	}
	return bytes.Compare(a.content, b.content)
}

// sameEvent reports whether two events are one: the same time, and the
// same client id, or neither has one and their fields are the same.
func sameEvent(a, b keyed) bool {
	if !a.ev.Time.Equal(b.ev.Time) || a.ev.ID != b.ev.ID {
		return false
	}
	return a.ev.ID != "" || bytes.Equal(a.content, b.content)
}
