package chunk

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/timetabledb/timetable/event"
)

// Version 1 blocks, which the chunk layout wrote first, are read as they
// were written; only version 2 is written now. A version 1 block differs
// from version 2 (doc.go) in:
//
//	times    varint: the first time, Unix nanoseconds; if n > 1, uvarint:
//	         the second time less the first; then one varint per further
//	         event: its delta less the one before (delta of delta)
//	fields   per name: the name, a presence byte (0 every event has
//	         it; 1 and a bitmap follows), the kind byte, the column
//	kinds    1 int: the first value, then each value less the one before
//	         (wrapping), as varints; 4 string: per value a uvarint
//	         length and the bytes; 2 float, 3 bool and 5 any as version 2
//	         writes them; no kind 6

// Presence of a field in a version 1 block.
const (
	presentAll    = 0
	presentBitmap = 1
)

// readBlockV1 decodes a version 1 block (its version byte read) into
// events of series, appended to dst.
func readBlockV1(dst []event.Event, b []byte, series string) ([]event.Event, error) {
	r := reader{b: b}
	n := r.count(1)
	if r.err != nil {
		return dst, r.err
	}
	base := len(dst)
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
		dst = append(dst, event.Event{Time: time.Unix(0, t).UTC(), Series: series})
	}
	evs := dst[base:]
	if ids := r.uvarint(); ids > 0 && r.err == nil {
		for i := range evs {
			l := r.uvarint()
			if l > 0 {
				evs[i].ID = string(r.bytes(int(min(l-1, uint64(len(r.b)+1)))))
			}
		}
	}
	nf := r.count(4)
	for f := 0; f < nf && r.err == nil; f++ {
		name := r.string()
		var bitmap []byte
		m := n
		switch r.byte() {
		case presentAll:
		case presentBitmap:
			bitmap = r.bytes((n + 7) / 8)
			m = 0
			for _, c := range bitmap {
				for ; c != 0; c &= c - 1 {
					m++
				}
			}
		default:
			r.fail("presence")
		}
		kind := r.byte()
		col := r.bytes(int(min(r.uvarint(), uint64(len(r.b)+1))))
		if r.err != nil {
			break
		}
		vals, err := readColumnV1(kind, col, m)
		if err != nil {
			return dst[:base], fmt.Errorf("field %q: %w", name, err)
		}
		j := 0
		for i := range evs {
			if bitmap != nil && bitmap[i/8]&(1<<(i%8)) == 0 {
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

// readColumnV1 decodes the m values of a version 1 column of kind kind.
func readColumnV1(kind byte, b []byte, m int) ([]any, error) {
	r := reader{b: b}
	vals := make([]any, 0, min(m, len(b)*8+1))
	switch kind {
	case kindInt:
		var prev int64
		for i := 0; i < m && r.err == nil; i++ {
			prev = int64(uint64(prev) + uint64(r.varint()))
			vals = append(vals, json.Number(strconv.FormatInt(prev, 10)))
		}
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
