package chunk

import (
	"math"
	"strings"
	"time"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/storage"
)

// Span is the times of the first and last events an item of events
// holds, in Unix nanoseconds: every event of the item lies in [First,
// Last]. A read of a window decodes its items lazily by their spans
// (engine's read_window.go): an item whose span misses the read's range
// is never decoded, and an event is returned once no item left to decode
// could hold one before it.
type Span struct {
	First, Last int64
}

// SpanReader reads the spans of items (Span), keeping what it may use
// again: the memory it decompresses blocks into, and the time of the
// last short key's time prefix, which a window's chunks share. Its zero
// value is ready.
type SpanReader struct {
	block  []byte
	prefix string
	start  int64
}

// Span returns the span of an item of a partition, as a query returns
// it, and false for an item that holds no events. A row's span is its
// time; a map item's its millisecond (it may hold any instant of it); a
// chunk's is its first event's time, from its sort key, to its last one's,
// from its block's times column, which it decompresses and reads
// without building events or reading the block's other columns. A
// version 1 block is read whole. A chunk that cannot be read is an error
// wrapping ErrCorrupt.
func (r *SpanReader) Span(it storage.Item) (Span, bool, error) {
	switch {
	case IsSortKey(it.SK):
		data, ok := Data(it)
		if !ok {
			return Span{}, false, corrupt("no %s", AttrData)
		}
		return r.ChunkSpan(it.SK, data)
	case itemenc.IsMapSortKey(it.SK):
		ms, ok := itemenc.ParseTimeKey(it.SK[:itemenc.TimeKeyLen])
		if !ok {
			return Span{}, false, nil
		}
		return Span{First: ms.UnixNano(), Last: ms.UnixNano() + int64(time.Millisecond) - 1}, true, nil
	}
	t, _, err := itemenc.ParseSortKey(it.SK)
	if err != nil {
		return Span{}, false, nil // not an event item
	}
	return Span{First: t.UnixNano(), Last: t.UnixNano()}, true, nil
}

// ChunkSpan returns the span of a chunk whose sort key (IsSortKey) is sk
// and stored form (its item's AttrData) data, which it does not keep: a
// reader may pass a view of its store's memory. It reports false for a
// chunk of no events.
func (r *SpanReader) ChunkSpan(sk string, data []byte) (Span, bool, error) {
	first, ok := r.firstTime(sk)
	if !ok {
		return Span{}, false, corrupt("sort key %q", sk)
	}
	block, err := decompressTo(r.block, data)
	if err != nil {
		return Span{}, false, err
	}
	if len(data) > 0 && data[0] != storedRaw {
		r.block = block
	}
	if len(block) == 0 {
		return Span{}, false, corrupt("empty block")
	}
	switch block[0] {
	case blockVersion:
		last, err := lastTime(block[1:], first)
		return Span{First: first, Last: last}, err == nil, err
	case 1:
		evs, err := readBlockV1(nil, block[1:], "")
		if err != nil {
			return Span{}, false, err
		}
		if len(evs) == 0 {
			return Span{}, false, nil
		}
		s := Span{First: evs[0].Time.UnixNano(), Last: evs[0].Time.UnixNano()}
		for _, ev := range evs[1:] {
			s.First, s.Last = min(s.First, ev.Time.UnixNano()), max(s.Last, ev.Time.UnixNano())
		}
		return s, true, nil
	}
	return Span{}, false, corrupt("block version %d", block[0])
}

// firstTime returns the time of a chunk's first event, from its sort
// key sk (IsSortKey), as FirstTime does, parsing a short key's time
// prefix only when it is not the last one's.
func (r *SpanReader) firstTime(sk string) (int64, bool) {
	i := strings.IndexByte(sk, SortKeySep)
	if i == itemenc.TimeKeyLen {
		return firstTime(sk) // a long key
	}
	if sk[:i] != r.prefix || r.prefix == "" {
		start, ok := itemenc.ParseTimePrefix(sk[:i])
		if !ok {
			return 0, false
		}
		r.prefix, r.start = strings.Clone(sk[:i]), start.UnixNano() // sk may be a view of a store's memory
	}
	off, ok := parseOffset(sk[i+1 : len(sk)-sumChars])
	if !ok || off > uint64(math.MaxInt64-r.start) {
		return 0, false
	}
	return r.start + int64(off), true
}

// lastTime returns the time of the last event of a version 2 block (its
// version byte read) whose first event is at first: the block's times
// are in block order, so the last is the latest. It reads n and the times
// column and nothing after them.
func lastTime(b []byte, first int64) (int64, error) {
	r := reader{b: b}
	n := int(r.uvarint())
	if r.err == nil && (n == 0 || n > maxChunkEvents) {
		return 0, corrupt("a block of %d events", n)
	}
	if r.err != nil || n == 1 {
		return first, r.err
	}
	unit := int(r.byte())
	if r.err == nil && unit > maxTimeUnit {
		return 0, corrupt("time unit 10^%d ns", unit)
	}
	last := r.lastInt(n - 1)
	if r.err != nil {
		return 0, r.err
	}
	return first + last*pow10[unit], nil
}

// lastInt reads an int column of n values (n > 0), as intsTo does, and
// returns its last value without keeping the others.
func (r *reader) lastInt(n int) int64 {
	h, ok := r.intHeader(n)
	if !ok {
		return 0
	}
	if !h.diffs {
		h.bits.pos = (n - 1) * h.width
		return int64(h.bits.read(h.width) + uint64(h.least))
	}
	v := h.first
	for range h.packed {
		v = int64(uint64(v) + h.bits.read(h.width) + uint64(h.least))
	}
	return v
}
