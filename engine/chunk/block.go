package chunk

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/timetabledb/timetable/event"
)

// blockVersion is the first byte of the blocks Pack writes (doc.go,
// "Blocks"); Unpack reads version 1 too (block_v1.go).
const blockVersion = 2

// kindPartial, in a field's kind byte, says that a bitmap of the events
// that have the field follows: not every event has it.
const kindPartial = 0x80

// maxChunkEvents bounds the events of one chunk, so that what a reader
// allocates for a block is bounded by a count it can refuse: a block of
// events at a steady pace with constant fields takes a few bytes
// whatever their number. Pack cuts a window's events into chunks of at
// most this many.
const maxChunkEvents = 1 << 20

// maxTimeUnit is the largest power of ten (of nanoseconds) a block's
// times are counted in: 10^18 ns is the largest an int64 holds.
const maxTimeUnit = 18

// appendBlock appends the block of events, which are in block order
// (sorted: see order), of one series, and at most maxChunkEvents.
func appendBlock(dst []byte, evs []event.Event) ([]byte, error) {
	dst = append(dst, blockVersion)
	dst = binary.AppendUvarint(dst, uint64(len(evs)))
	dst = appendTimes(dst, evs)
	ids := 0
	for _, ev := range evs {
		if ev.ID != "" {
			ids++
		}
	}
	dst = binary.AppendUvarint(dst, uint64(ids))
	if ids > 0 {
		for _, ev := range evs {
			if ev.ID == "" {
				dst = append(dst, 0)
				continue
			}
			dst = binary.AppendUvarint(dst, uint64(len(ev.ID))+1)
			dst = append(dst, ev.ID...)
		}
	}
	names := fieldNames(evs)
	dst = binary.AppendUvarint(dst, uint64(len(names)))
	var col []byte
	vals := make([]any, 0, len(evs))
	bitmap := make([]byte, (len(evs)+7)/8)
	for _, name := range names {
		dst = appendString(dst, name)
		vals = vals[:0]
		clear(bitmap)
		for i, ev := range evs {
			if v, ok := ev.Fields[name]; ok {
				vals = append(vals, v)
				bitmap[i/8] |= 1 << (i % 8)
			}
		}
		var kind byte
		var err error
		if col, kind, err = appendColumn(col[:0], vals); err != nil {
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		if len(vals) == len(evs) {
			dst = append(dst, kind)
		} else {
			dst = append(dst, kind|kindPartial)
			dst = append(dst, bitmap...)
		}
		dst = binary.AppendUvarint(dst, uint64(len(col)))
		dst = append(dst, col...)
	}
	return dst, nil
}

// appendTimes appends the times of evs, when there are two or more: the
// largest power of ten (at most 10^maxTimeUnit) of nanoseconds that
// divides every time's offset from the first, then the offsets of the
// second and later times in that unit as an int column. The first time is
// the sort key's.
func appendTimes(dst []byte, evs []event.Event) []byte {
	if len(evs) < 2 {
		return dst
	}
	first := evs[0].Time.UnixNano()
	offsets := make([]int64, len(evs)-1)
	unit, pow := 0, int64(1)
	for i, ev := range evs[1:] {
		offsets[i] = ev.Time.UnixNano() - first
	}
	for unit < maxTimeUnit && allMultiples(offsets, pow*10) {
		unit++
		pow *= 10
	}
	for i := range offsets {
		offsets[i] /= pow
	}
	return appendInts(append(dst, byte(unit)), offsets)
}

func allMultiples(vs []int64, d int64) bool {
	for _, v := range vs {
		if v%d != 0 {
			return false
		}
	}
	return true
}

// fieldNames returns the names of every field of evs, in bytewise order.
func fieldNames(evs []event.Event) []string {
	seen := map[string]struct{}{}
	var names []string
	for _, ev := range evs {
		for name := range ev.Fields {
			if _, ok := seen[name]; !ok {
				seen[name] = struct{}{}
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// blockColumns is a version 2 block read as far as its columns: the
// events' times and ids, and each field's column still encoded, for
// readColumn to decode (all of them, for events; one, for a reader of a
// single field).
type blockColumns struct {
	times  []int64  // Unix nanoseconds
	ids    []string // nil when no event has one
	fields []fieldColumn
}

// fieldColumn is a field's column in a block.
type fieldColumn struct {
	name    string // set by parseBlock, not parseBlockTo
	rawName []byte // the name in the block
	kind    byte
	// present is the bitmap of the events that have the field (event i
	// is bit i%8 of byte i/8), nil when every event has it.
	present []byte
	values  int    // how many events have the field
	data    []byte // the column, for readColumn
}

// parseBlock reads a version 2 block, its version byte read, whose first
// event is at first (Unix nanoseconds, from its sort key).
func parseBlock(b []byte, first int64) (blockColumns, error) {
	var bc blockColumns
	if err := parseBlockTo(&bc, b, first, true, nil); err != nil {
		return blockColumns{}, err
	}
	for i := range bc.fields {
		bc.fields[i].name = string(bc.fields[i].rawName)
	}
	return bc, nil
}

// parseBlockTo is parseBlock into bc, reusing the memory of its times
// and fields, for a reader of many blocks (ReadColumns). It reads the
// events' ids only when ids is set, keeps in bc.fields only the fields
// want names (every field when want is nil; the others are checked and
// passed over), and leaves each field's name in rawName, a view of b,
// name unset. bc's columns are views of b.
func parseBlockTo(bc *blockColumns, b []byte, first int64, ids bool, want []string) error {
	r := reader{b: b}
	bc.times, bc.ids, bc.fields = bc.times[:0], nil, bc.fields[:0]
	n := int(r.uvarint())
	if r.err == nil && (n == 0 || n > maxChunkEvents) {
		return corrupt("a block of %d events", n)
	}
	if r.err != nil {
		return r.err
	}
	bc.times = append(bc.times, first)
	if n > 1 {
		unit := int(r.byte())
		if r.err == nil && unit > maxTimeUnit {
			return corrupt("time unit 10^%d ns", unit)
		}
		bc.times = r.intsTo(bc.times, n-1)
		if r.err != nil {
			return fmt.Errorf("times: %w", r.err)
		}
		pow := int64(1)
		for range unit {
			pow *= 10
		}
		offsets := bc.times[1:]
		for i, o := range offsets {
			offsets[i] = first + o*pow
		}
	}
	if nids := r.uvarint(); nids > 0 && r.err == nil {
		if ids {
			bc.ids = make([]string, n)
		}
		for i := range n {
			if l := r.uvarint(); l > 0 {
				id := r.bytes(int(min(l-1, uint64(len(r.b)+1))))
				if ids {
					bc.ids[i] = string(id)
				}
			}
		}
	}
	nf := r.count(3)
	for f := 0; f < nf && r.err == nil; f++ {
		c := fieldColumn{rawName: r.bytes(r.count(1)), kind: r.byte(), values: n}
		if c.kind&kindPartial != 0 {
			c.kind &^= kindPartial
			c.present = r.bytes((n + 7) / 8)
			c.values = 0
			for _, x := range c.present {
				for ; x != 0; x &= x - 1 {
					c.values++
				}
			}
		}
		c.data = r.bytes(int(min(r.uvarint(), uint64(len(r.b)+1))))
		if r.err == nil && c.values == 0 {
			return corrupt("field %q of no events", c.rawName)
		}
		if want == nil || wanted(want, c.rawName) {
			bc.fields = append(bc.fields, c)
		}
	}
	if r.err != nil {
		return r.err
	}
	if len(r.b) != 0 {
		return corrupt("%d bytes after the last field", len(r.b))
	}
	return nil
}

// wanted reports whether name is one of want.
func wanted(want []string, name []byte) bool {
	for _, w := range want {
		if w == string(name) {
			return true
		}
	}
	return false
}

// readBlock decodes a version 2 block, its version byte read, into events
// of series, appended to dst; its first event is at first.
func readBlock(dst []event.Event, b []byte, series string, first int64) ([]event.Event, error) {
	bc, err := parseBlock(b, first)
	if err != nil {
		return dst, err
	}
	base := len(dst)
	for i, t := range bc.times {
		ev := event.Event{Time: time.Unix(0, t).UTC(), Series: series}
		if bc.ids != nil {
			ev.ID = bc.ids[i]
		}
		dst = append(dst, ev)
	}
	evs := dst[base:]
	for f, c := range bc.fields {
		vals, err := readColumn(c.kind, c.data, c.values)
		if err != nil {
			return dst[:base], fmt.Errorf("field %q: %w", c.name, err)
		}
		j := 0
		for i := range evs {
			if c.present != nil && c.present[i/8]&(1<<(i%8)) == 0 {
				continue
			}
			if evs[i].Fields == nil {
				evs[i].Fields = make(map[string]any, len(bc.fields)-f)
			}
			evs[i].Fields[c.name] = vals[j]
			j++
		}
	}
	for i := range evs {
		if evs[i].Fields == nil {
			evs[i].Fields = map[string]any{} // as a row without fields reads back
		}
	}
	return dst, nil
}
