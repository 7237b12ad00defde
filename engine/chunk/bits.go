package chunk

import (
	"math/bits"
	"slices"
)

// bitWriter appends bits, most significant first, to a byte slice; the
// last byte is padded with zeros.
type bitWriter struct {
	b    []byte
	free uint8 // bits still free in the last byte
}

// write appends the n low bits of v, n at most 64.
func (w *bitWriter) write(v uint64, n int) {
	for n > 0 {
		if w.free == 0 {
			w.b = append(w.b, 0)
			w.free = 8
		}
		k := min(n, int(w.free))
		part := byte(v>>(n-k)) & byte(1<<k-1)
		w.b[len(w.b)-1] |= part << (int(w.free) - k)
		w.free -= uint8(k)
		n -= k
	}
}

func (w *bitWriter) bit(b bool) {
	if b {
		w.write(1, 1)
	} else {
		w.write(0, 1)
	}
}

// bitReader reads what a bitWriter wrote; reading past the end sets
// short rather than panicking, for the bytes of a corrupt chunk.
type bitReader struct {
	b     []byte
	pos   int // bits read
	short bool
}

// read returns the next n bits, n at most 64.
func (r *bitReader) read(n int) uint64 {
	if r.pos+n > 8*len(r.b) {
		r.short = true
		r.pos = 8 * len(r.b)
		return 0
	}
	var v uint64
	for n > 0 {
		byteAt, used := r.pos/8, r.pos%8
		k := min(n, 8-used)
		part := (r.b[byteAt] >> (8 - used - k)) & byte(1<<k-1)
		v = v<<k | uint64(part)
		r.pos += k
		n -= k
	}
	return v
}

func (r *bitReader) bit() bool { return r.read(1) == 1 }

// appendXOR appends the Gorilla encoding (Pelkonen et al., VLDB 2015, as
// Prometheus' tsdb/chunkenc writes it) of floats: the first value's 64
// bits, then for each next value its XOR with the one before: a 0 bit
// when equal; else 1, and either 0 and the XOR's meaningful bits within
// the window of leading and trailing zeros the last one set, or 1, five
// bits of leading zeros, six of the meaningful bits' count (64 as 0) and
// those bits.
func appendXOR(dst []byte, vs []uint64) []byte {
	w := bitWriter{b: dst}
	var prev uint64
	lead, trail := uint8(0xff), uint8(0)
	for i, v := range vs {
		if i == 0 {
			w.write(v, 64)
			prev = v
			continue
		}
		x := v ^ prev
		prev = v
		if x == 0 {
			w.bit(false)
			continue
		}
		w.bit(true)
		l, t := uint8(min(bits.LeadingZeros64(x), 31)), uint8(bits.TrailingZeros64(x))
		if lead != 0xff && l >= lead && t >= trail {
			w.bit(false)
			w.write(x>>trail, 64-int(lead)-int(trail))
			continue
		}
		lead, trail = l, t
		sig := 64 - int(l) - int(t)
		w.bit(true)
		w.write(uint64(l), 5)
		w.write(uint64(sig&63), 6)
		w.write(x>>t, sig)
	}
	return w.b
}

// readXOR decodes n floats' bits from b, as appendXOR wrote them.
func readXOR(b []byte, n int) ([]uint64, bool) {
	if n == 0 {
		return nil, true
	}
	return readXORTo(nil, b, n)
}

// readXORTo is readXOR appending the bits to dst, whose memory it reuses;
// when b is corrupt it returns nil.
func readXORTo(dst []uint64, b []byte, n int) ([]uint64, bool) {
	if n == 0 {
		return dst, true
	}
	r := bitReader{b: b}
	base := len(dst)
	dst = slices.Grow(dst, n)[:base+n]
	out := dst[base:]
	prev := r.read(64)
	out[0] = prev
	var lead, trail int
	window := false
	for i := 1; i < n && !r.short; i++ {
		if !r.bit() {
			out[i] = prev
			continue
		}
		if r.bit() {
			lead = int(r.read(5))
			sig := int(r.read(6))
			if sig == 0 {
				sig = 64
			}
			if lead+sig > 64 {
				return nil, false
			}
			trail = 64 - lead - sig
			window = true
		} else if !window {
			return nil, false // no window to reuse yet
		}
		sig := 64 - lead - trail
		prev ^= r.read(sig) << trail
		out[i] = prev
	}
	if r.short {
		return nil, false
	}
	return dst, true
}
