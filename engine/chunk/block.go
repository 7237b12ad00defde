package chunk

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
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
func (p *packer) appendBlock(dst []byte, evs []event.Event, fields [][]event.Field) ([]byte, error) {
	dst = append(dst, blockVersion)
	dst = binary.AppendUvarint(dst, uint64(len(evs)))
	dst = p.appendTimes(dst, evs)
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
	p.gatherFields(evs, fields)
	dst = binary.AppendUvarint(dst, uint64(len(p.names)))
	p.bitmap = slices.Grow(p.bitmap[:0], (len(evs)+7)/8)[:(len(evs)+7)/8]
	for f, name := range p.names {
		dst = appendString(dst, name)
		cells := p.sorted[p.starts[f]:p.starts[f+1]]
		vals := p.vals[:0]
		clear(p.bitmap)
		for _, c := range cells {
			vals = append(vals, c.v)
			p.bitmap[c.ev/8] |= 1 << (c.ev % 8)
		}
		var kind byte
		var err error
		p.col, kind, err = p.appendColumn(p.col[:0], vals)
		clear(vals) // the values are the events', not the packer's to keep
		p.vals = vals[:0]
		if err != nil {
			clear(p.names)
			clear(p.cells)
			clear(p.sorted)
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		if len(vals) == len(evs) {
			dst = append(dst, kind)
		} else {
			dst = append(dst, kind|kindPartial)
			dst = append(dst, p.bitmap...)
		}
		dst = binary.AppendUvarint(dst, uint64(len(p.col)))
		dst = append(dst, p.col...)
	}
	clear(p.names)
	clear(p.cells)
	clear(p.sorted)
	return dst, nil
}

// pow10 holds the powers of ten an int64 holds, 10^0 to 10^18.
var pow10 = func() (p [maxTimeUnit + 1]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// appendTimes appends the times of evs, when there are two or more: the
// largest power of ten (at most 10^maxTimeUnit) of nanoseconds that
// divides every time's offset from the first, then the offsets of the
// second and later times in that unit as an int column. The first time is
// the sort key's.
func (p *packer) appendTimes(dst []byte, evs []event.Event) []byte {
	if len(evs) < 2 {
		return dst
	}
	first := evs[0].Time.UnixNano()
	offsets := slices.Grow(p.ints[:0], len(evs)-1)[:len(evs)-1]
	unit := maxTimeUnit
	for i, ev := range evs[1:] {
		o := ev.Time.UnixNano() - first
		offsets[i] = o
		for o%pow10[unit] != 0 {
			unit--
		}
	}
	if pow := pow10[unit]; pow > 1 {
		for i := range offsets {
			offsets[i] /= pow
		}
	}
	p.ints = offsets
	return appendInts(append(dst, byte(unit)), offsets)
}

// cell is a field's value in event ev of a block, of the field
// p.names[name] as gatherFields found it.
type cell struct {
	name, ev int32
	v        any
}

// gatherFields reads the fields of evs, each event's once: p.names
// becomes their names in bytewise order, and p.sorted their values,
// field by field (field f's from p.starts[f] to p.starts[f+1]), each
// field's in the order of the events. A block's events mostly have the
// same few fields: a name is looked for among those found so far, in a
// map only once there are many. With fields, the events' fields are
// there rather than in their maps (PackFields).
func (p *packer) gatherFields(evs []event.Event, fields [][]event.Field) {
	names, cells, counts := p.names[:0], p.cells[:0], p.counts[:0]
	var seen map[string]int32
	add := func(i int, name string, v any) {
		j := int32(-1)
		if seen != nil {
			if k, ok := seen[name]; ok {
				j = k
			}
		} else if k := slices.Index(names, name); k >= 0 {
			j = int32(k)
		}
		if j < 0 {
			j = int32(len(names))
			names = append(names, name)
			counts = append(counts, 0)
			if seen != nil {
				seen[name] = j
			} else if len(names) > 16 {
				seen = make(map[string]int32, 2*len(names))
				for k, n := range names {
					seen[n] = int32(k)
				}
			}
		}
		counts[j]++
		cells = append(cells, cell{name: j, ev: int32(i), v: v})
	}
	if fields != nil {
		for i, fs := range fields {
			for _, f := range fs {
				add(i, f.Name, f.Value)
			}
		}
	} else {
		for i, ev := range evs {
			for name, v := range ev.Fields {
				add(i, name, v)
			}
		}
	}
	// rank[j] is the place of names[j] in bytewise order: sort the names'
	// indexes, then the names.
	rank := slices.Grow(p.rank[:0], len(names))[:len(names)]
	byName := slices.Grow(p.idx[:0], len(names))[:len(names)]
	for j := range byName {
		byName[j] = j
	}
	slices.SortFunc(byName, func(a, b int) int { return strings.Compare(names[a], names[b]) })
	starts := slices.Grow(p.starts[:0], len(names)+1)[:len(names)+1]
	starts[0] = 0
	for f, j := range byName {
		rank[j] = int32(f)
		starts[f+1] = starts[f] + counts[j]
	}
	next := slices.Grow(counts[:0], len(names))[:len(names)]
	copy(next, starts[:len(names)])
	sorted := slices.Grow(p.sorted[:0], len(cells))[:len(cells)]
	for _, c := range cells {
		f := rank[c.name]
		sorted[next[f]] = c
		next[f]++
	}
	slices.Sort(names)
	p.names, p.cells, p.sorted, p.rank, p.idx, p.counts, p.starts = names, cells, sorted, rank, byName, next, starts
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
