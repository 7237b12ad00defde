package chunk

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/timetabledb/timetable/event"
)

// blockVersion is the first byte of a block: the format of format.md.
const blockVersion = 1

// Kinds of a column (format.md, "Columns").
const (
	kindInt    = 1
	kindFloat  = 2
	kindBool   = 3
	kindString = 4
	kindAny    = 5
)

// Presence of a field (format.md, "Fields").
const (
	presentAll    = 0
	presentBitmap = 1
)

// appendBlock appends the block of events, which are in block order
// (sorted: see order) and of one series.
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
	for _, name := range names {
		dst = appendString(dst, name)
		vals = vals[:0]
		bitmap := make([]byte, (len(evs)+7)/8)
		for i, ev := range evs {
			if v, ok := ev.Fields[name]; ok {
				vals = append(vals, v)
				bitmap[i/8] |= 1 << (i % 8)
			}
		}
		if len(vals) == len(evs) {
			dst = append(dst, presentAll)
		} else {
			dst = append(dst, presentBitmap)
			dst = append(dst, bitmap...)
		}
		kind := columnKind(vals)
		var err error
		if col, err = appendColumn(col[:0], kind, vals); err != nil {
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		dst = append(dst, kind)
		dst = binary.AppendUvarint(dst, uint64(len(col)))
		dst = append(dst, col...)
	}
	return dst, nil
}

// appendTimes appends the times column: the first time in Unix
// nanoseconds (a varint), the first delta (a uvarint), then the deltas of
// deltas (varints).
func appendTimes(dst []byte, evs []event.Event) []byte {
	var prev, delta int64
	for i, ev := range evs {
		t := ev.Time.UnixNano()
		switch i {
		case 0:
			dst = binary.AppendVarint(dst, t)
		case 1:
			delta = t - prev
			dst = binary.AppendUvarint(dst, uint64(delta))
		default:
			d := t - prev
			dst = binary.AppendVarint(dst, d-delta)
			delta = d
		}
		prev = t
	}
	return dst
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

// columnKind returns the most compact kind that holds every value of
// vals exactly.
func columnKind(vals []any) byte {
	ints, floats, bools, strs := true, true, true, true
	for _, v := range vals {
		switch v := v.(type) {
		case json.Number:
			bools, strs = false, false
			if ints {
				if _, ok := exactInt(string(v)); !ok {
					ints = false
				}
			}
			if floats {
				if _, ok := exactFloat(string(v)); !ok {
					floats = false
				}
			}
		case bool:
			ints, floats, strs = false, false, false
		case string:
			ints, floats, bools = false, false, false
		default:
			return kindAny
		}
	}
	switch {
	case ints:
		return kindInt
	case floats:
		return kindFloat
	case bools:
		return kindBool
	case strs:
		return kindString
	}
	return kindAny
}

// exactInt returns the integer a canonical number is, when it is one
// that an int64 holds.
func exactInt(s string) (int64, bool) {
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// exactFloat returns the float64 a canonical number is, when formatting
// that float in plain notation, at the fewest digits that read back to
// it, gives the number's text again.
func exactFloat(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	var buf [32]byte
	return f, string(strconv.AppendFloat(buf[:0], f, 'f', -1, 64)) == s
}

func formatFloat(f float64) json.Number { return json.Number(strconv.FormatFloat(f, 'f', -1, 64)) }

func appendColumn(dst []byte, kind byte, vals []any) ([]byte, error) {
	switch kind {
	case kindInt:
		var prev int64
		for _, v := range vals {
			n, _ := exactInt(string(v.(json.Number)))
			dst = binary.AppendVarint(dst, int64(uint64(n)-uint64(prev)))
			prev = n
		}
	case kindFloat:
		bits := make([]uint64, len(vals))
		for i, v := range vals {
			f, _ := exactFloat(string(v.(json.Number)))
			bits[i] = math.Float64bits(f)
		}
		dst = appendXOR(dst, bits)
	case kindBool:
		b := make([]byte, (len(vals)+7)/8)
		for i, v := range vals {
			if v.(bool) {
				b[i/8] |= 1 << (i % 8)
			}
		}
		dst = append(dst, b...)
	case kindString:
		for _, v := range vals {
			dst = appendString(dst, v.(string))
		}
	default:
		var err error
		for _, v := range vals {
			if dst, err = appendValue(dst, v); err != nil {
				return nil, err
			}
		}
	}
	return dst, nil
}

// readBlock decodes a block into events of series, appended to dst.
func readBlock(dst []event.Event, b []byte, series string) ([]event.Event, error) {
	r := reader{b: b}
	if v := r.byte(); r.err == nil && v != blockVersion {
		return dst, fmt.Errorf("%w: block version %d", ErrCorrupt, v)
	}
	n := r.count(1)
	if r.err != nil {
		return dst, r.err
	}
	base := len(dst)
	r.times(n, func(i int, t int64) {
		dst = append(dst, event.Event{Time: time.Unix(0, t).UTC(), Series: series})
	})
	evs := dst[base:]
	r.ids(n, func(i int, id []byte) { evs[i].ID = string(id) })
	nf := r.count(4)
	for f := 0; f < nf && r.err == nil; f++ {
		fd := r.field(n)
		if r.err != nil {
			break
		}
		name := string(fd.name)
		vals, err := readColumn(fd.kind, fd.col, fd.m)
		if err != nil {
			return dst[:base], fmt.Errorf("field %q: %w", name, err)
		}
		j := 0
		for i := range evs {
			if !fd.has(i) {
				continue
			}
			if evs[i].Fields == nil {
				evs[i].Fields = make(map[string]any, nf-f)
			}
			evs[i].Fields[name] = vals[j]
			j++
		}
	}
	if r.err != nil {
		return dst[:base], r.err
	}
	if len(r.b) != 0 {
		return dst[:base], fmt.Errorf("%w: %d bytes after the last field", ErrCorrupt, len(r.b))
	}
	for i := range evs {
		if evs[i].Fields == nil {
			evs[i].Fields = map[string]any{} // as a row without fields reads back
		}
	}
	return dst, nil
}

// times reads the times column of a block of n events, calling fn with
// each event's time in Unix nanoseconds, in block order.
func (r *reader) times(n int, fn func(i int, t int64)) {
	var prev, delta int64
	for i := 0; i < n; i++ {
		var t int64
		switch i {
		case 0:
			t = r.varint()
		case 1:
			delta = int64(r.uvarint())
			t = prev + delta
		default:
			delta += r.varint()
			t = prev + delta
		}
		prev = t
		fn(i, t)
	}
}

// ids reads the client ids of a block of n events, calling fn with each
// event's that has one (a view of the block).
func (r *reader) ids(n int, fn func(i int, id []byte)) {
	if ids := r.uvarint(); ids == 0 || r.err != nil {
		return
	}
	for i := 0; i < n && r.err == nil; i++ {
		if l := r.uvarint(); l > 0 {
			fn(i, r.bytes(int(min(l-1, uint64(len(r.b)+1)))))
		}
	}
}

// blockField is a field's entry in a block, its column still encoded.
type blockField struct {
	name   []byte // a view of the block
	bitmap []byte // the events that have it; nil when every event has
	m      int    // the values in the column
	kind   byte
	col    []byte
}

// has reports whether event i has the field.
func (f *blockField) has(i int) bool { return f.bitmap == nil || f.bitmap[i/8]&(1<<(i%8)) != 0 }

// field reads the next field's entry of a block of n events.
func (r *reader) field(n int) blockField {
	f := blockField{name: r.bytes(r.count(1)), m: n}
	switch r.byte() {
	case presentAll:
	case presentBitmap:
		f.bitmap = r.bytes((n + 7) / 8)
		f.m = 0
		for _, c := range f.bitmap {
			for ; c != 0; c &= c - 1 {
				f.m++
			}
		}
	default:
		r.fail("presence")
	}
	f.kind = r.byte()
	f.col = r.bytes(int(min(r.uvarint(), uint64(len(r.b)+1))))
	return f
}

// readColumn decodes the m values of a column of kind kind.
func readColumn(kind byte, b []byte, m int) ([]any, error) {
	r := reader{b: b}
	vals := make([]any, 0, min(m, len(b)*8+1))
	switch kind {
	case kindInt:
		r.ints(m, func(v int64) { vals = append(vals, json.Number(strconv.FormatInt(v, 10))) })
	case kindFloat:
		bits, ok := readXOR(b, m)
		if !ok {
			return nil, fmt.Errorf("%w: float column", ErrCorrupt)
		}
		for _, v := range bits {
			vals = append(vals, formatFloat(math.Float64frombits(v)))
		}
		return vals, nil
	case kindBool:
		bm := r.bytes((m + 7) / 8)
		for i := 0; i < m && r.err == nil; i++ {
			vals = append(vals, bm[i/8]&(1<<(i%8)) != 0)
		}
	case kindString:
		for i := 0; i < m && r.err == nil; i++ {
			vals = append(vals, r.string())
		}
	case kindAny:
		for i := 0; i < m && r.err == nil; i++ {
			vals = append(vals, r.value(1))
		}
	default:
		return nil, fmt.Errorf("%w: column kind %d", ErrCorrupt, kind)
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(vals) != m {
		return nil, fmt.Errorf("%w: column of %d values, %d expected", ErrCorrupt, len(vals), m)
	}
	return vals, nil
}

// ints reads the m values of an int column, calling fn with each.
func (r *reader) ints(m int, fn func(v int64)) {
	var prev int64
	for i := 0; i < m && r.err == nil; i++ {
		prev = int64(uint64(prev) + uint64(r.varint()))
		fn(prev)
	}
}
