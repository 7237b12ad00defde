package chunk

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
)

// An int column (doc.go, "Int columns") holds a run of int64s as
// frame-of-reference bit packing, of the values themselves or of their
// differences, whichever is shorter:
//
//	header  one byte: the width w in bits (0 to 64) of each packed
//	        value, plus 0x80 when they are differences
//	values  without 0x80: varint the least value, then per value its
//	        excess over it in w bits
//	diffs   with 0x80: varint the first value, varint the least
//	        difference, then per value after the first its difference
//	        from the one before (wrapping) less the least, in w bits
//
// the bits most significant first, the last byte padded with 0. A run of
// equal values takes the header and one varint; values at a steady step
// (times, counters) as few; gauges that drift, the bits of their spread.
const intDiffs = 0x80

// appendInts appends the int column of vs, which has at least one value.
func appendInts(dst []byte, vs []int64) []byte {
	lo, hi := vs[0], vs[0]
	for _, v := range vs[1:] {
		lo, hi = min(lo, v), max(hi, v)
	}
	width := bits.Len64(uint64(hi) - uint64(lo))
	if len(vs) > 1 {
		dlo, dhi := vs[1]-vs[0], vs[1]-vs[0]
		for i := 2; i < len(vs); i++ {
			d := vs[i] - vs[i-1]
			dlo, dhi = min(dlo, d), max(dhi, d)
		}
		dwidth := bits.Len64(uint64(dhi) - uint64(dlo))
		if packedLen(dwidth, len(vs)-1)+varintLen(dlo) < packedLen(width, len(vs)) {
			dst = append(dst, byte(dwidth)|intDiffs)
			dst = binary.AppendVarint(dst, vs[0])
			dst = binary.AppendVarint(dst, dlo)
			w := bitWriter{b: dst}
			for i := 1; i < len(vs); i++ {
				w.write(uint64(vs[i]-vs[i-1])-uint64(dlo), dwidth)
			}
			return w.b
		}
	}
	dst = append(dst, byte(width))
	dst = binary.AppendVarint(dst, lo)
	w := bitWriter{b: dst}
	for _, v := range vs {
		w.write(uint64(v)-uint64(lo), width)
	}
	return w.b
}

func packedLen(width, n int) int { return (width*n + 7) / 8 }

func varintLen(v int64) int {
	var buf [binary.MaxVarintLen64]byte
	return binary.PutVarint(buf[:], v)
}

// readInts reads an int column of n values (n > 0) that takes all of b.
func readInts(b []byte, n int) ([]int64, error) { return readIntsTo(nil, b, n) }

// readIntsTo is readInts appending the values to dst, whose memory it
// reuses.
func readIntsTo(dst []int64, b []byte, n int) ([]int64, error) {
	r := reader{b: b}
	vs := r.intsTo(dst, n)
	if r.err == nil && len(r.b) != 0 {
		r.fail(fmt.Sprintf("%d bytes after an int column", len(r.b)))
	}
	return vs, r.err
}

// ints reads an int column of n values (n > 0): it knows its own end.
func (r *reader) ints(n int) []int64 { return r.intsTo(nil, n) }

// intHeader is an int column's header, read: how its values are packed,
// and the bit reader of its packed values.
type intHeader struct {
	width  int
	diffs  bool  // the values are packed as differences from first
	first  int64 // the first value, when diffs
	least  int64 // what every packed value is in excess of
	packed int   // how many values are packed: n, less the first when diffs
	bits   bitReader
}

// intHeader reads the header of an int column of n values (n > 0) and
// takes its packed bits; ok is false on an error (r.err).
func (r *reader) intHeader(n int) (h intHeader, ok bool) {
	b := r.byte()
	h.width, h.diffs, h.packed = int(b&^intDiffs), b&intDiffs != 0, n
	if r.err == nil && h.width > 64 {
		r.fail("int width")
	}
	if h.diffs {
		h.first = r.varint()
		h.packed--
	}
	h.least = r.varint()
	bits := r.bytes(packedLen(h.width, h.packed))
	if r.err != nil {
		return h, false
	}
	h.bits = bitReader{b: bits}
	return h, true
}

// intsTo is ints appending the values to dst; on an error it returns nil.
func (r *reader) intsTo(dst []int64, n int) []int64 {
	h, ok := r.intHeader(n)
	if !ok {
		return nil
	}
	br, width, least := &h.bits, h.width, h.least
	base := len(dst)
	dst = slices.Grow(dst, n)[:base+n]
	vs := dst[base:]
	if !h.diffs {
		for i := range vs {
			vs[i] = int64(br.read(width) + uint64(least))
		}
		return dst
	}
	vs[0] = h.first
	for i := 1; i < n; i++ {
		vs[i] = int64(uint64(vs[i-1]) + br.read(width) + uint64(least))
	}
	return dst
}
