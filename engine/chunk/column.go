package chunk

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/bits"
	"strconv"
)

// Kinds of a column (doc.go, "Columns"). Versions 1 and 2 share the
// numbers; version 1 encodes int and string columns otherwise
// (block_v1.go) and has no decimal ones.
const (
	kindInt     = 1
	kindFloat   = 2
	kindBool    = 3
	kindString  = 4
	kindAny     = 5
	kindDecimal = 6
)

// maxScale bounds a decimal column's scale: 10^18 is the largest power of
// ten an int64 holds.
const maxScale = 18

// appendColumn appends the column of vals (at least one), in the
// shortest kind that holds every value exactly, and returns its kind.
func appendColumn(dst []byte, vals []any) ([]byte, byte, error) {
	ints, nums, bools, strs := true, true, true, true
	for _, v := range vals {
		switch v := v.(type) {
		case json.Number:
			bools, strs = false, false
			if ints {
				_, ints = exactInt(string(v))
			}
		case bool:
			ints, nums, strs = false, false, false
		case string:
			ints, nums, bools = false, false, false
		default:
			ints, nums, bools, strs = false, false, false, false
		}
	}
	switch {
	case ints:
		vs := make([]int64, len(vals))
		for i, v := range vals {
			vs[i], _ = exactInt(string(v.(json.Number)))
		}
		return appendInts(dst, vs), kindInt, nil
	case nums:
		return appendNumbers(dst, vals)
	case bools:
		return appendBools(dst, vals), kindBool, nil
	case strs:
		return appendStrings(dst, vals), kindString, nil
	}
	var err error
	for _, v := range vals {
		if dst, err = appendValue(dst, v); err != nil {
			return nil, 0, err
		}
	}
	return dst, kindAny, nil
}

// appendNumbers appends a column of numbers that are not all integers:
// decimal or float, whichever is shorter, or generic when neither holds
// them all exactly.
func appendNumbers(dst []byte, vals []any) ([]byte, byte, error) {
	var dec, flt []byte
	if mantissas, scale, ok := decimals(vals); ok {
		dec = appendInts([]byte{byte(scale)}, mantissas)
	}
	fs := make([]uint64, 0, len(vals))
	for _, v := range vals {
		f, ok := exactFloat(string(v.(json.Number)))
		if !ok {
			break
		}
		fs = append(fs, math.Float64bits(f))
	}
	if len(fs) == len(vals) {
		flt = appendXOR(nil, fs)
	}
	switch {
	case flt != nil && (dec == nil || len(flt) < len(dec)):
		return append(dst, flt...), kindFloat, nil
	case dec != nil:
		return append(dst, dec...), kindDecimal, nil
	}
	var err error
	for _, v := range vals {
		if dst, err = appendValue(dst, v); err != nil {
			return nil, 0, err
		}
	}
	return dst, kindAny, nil
}

// decimals returns the numbers of vals (canonical json.Numbers) as
// mantissas of one scale s, each number the mantissa times 10^-s, when
// every number has at most maxScale digits after its point and its
// mantissa fits an int64.
func decimals(vals []any) ([]int64, int, bool) {
	scale := 0
	for _, v := range vals {
		s := string(v.(json.Number))
		for i := 0; i < len(s); i++ {
			if s[i] == '.' {
				scale = max(scale, len(s)-i-1)
				break
			}
		}
	}
	if scale > maxScale {
		return nil, 0, false
	}
	ms := make([]int64, len(vals))
	for i, v := range vals {
		m, ok := mantissa(string(v.(json.Number)), scale)
		if !ok {
			return nil, 0, false
		}
		ms[i] = m
	}
	return ms, scale, true
}

// mantissa returns the canonical number s times 10^scale when that is an
// integer an int64 holds and formatDecimal gives s back from it.
func mantissa(s string, scale int) (int64, bool) {
	var buf [48]byte
	digits := buf[:0]
	frac := -1
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			frac = 0
		case c == '-' && i == 0, '0' <= c && c <= '9':
			digits = append(digits, c)
			if frac >= 0 && c != '-' {
				frac++
			}
		default:
			return 0, false
		}
	}
	for range scale - max(frac, 0) {
		digits = append(digits, '0')
	}
	m, err := strconv.ParseInt(string(digits), 10, 64)
	if err != nil {
		return 0, false
	}
	return m, string(appendDecimal(buf[:0], m, scale)) == s
}

// appendDecimal appends m times 10^-scale in canonical form: plain
// notation, no trailing zeros after the point, no point without digits
// after it.
func appendDecimal(dst []byte, m int64, scale int) []byte {
	if m < 0 {
		dst = append(dst, '-')
	}
	var buf [24]byte
	digits := strconv.AppendUint(buf[:0], absUint(m), 10)
	if scale == 0 {
		return append(dst, digits...)
	}
	for len(digits) <= scale {
		digits = append([]byte{'0'}, digits...)
	}
	point := len(digits) - scale
	frac := digits[point:]
	for len(frac) > 0 && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	dst = append(dst, digits[:point]...)
	if len(frac) > 0 {
		dst = append(append(dst, '.'), frac...)
	}
	return dst
}

func absUint(m int64) uint64 {
	if m < 0 {
		return -uint64(m)
	}
	return uint64(m)
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

func appendBools(dst []byte, vals []any) []byte {
	b := make([]byte, (len(vals)+7)/8)
	for i, v := range vals {
		if v.(bool) {
			b[i/8] |= 1 << (i % 8)
		}
	}
	return append(dst, b...)
}

// appendStrings appends a string column: the distinct values in the
// order they first come, and then, when some value comes more than once,
// each value's index among them in the fewest bits that hold the
// largest.
func appendStrings(dst []byte, vals []any) []byte {
	index := make(map[string]int, len(vals))
	var distinct []string
	idx := make([]int, len(vals))
	for i, v := range vals {
		s := v.(string)
		j, ok := index[s]
		if !ok {
			j = len(distinct)
			index[s] = j
			distinct = append(distinct, s)
		}
		idx[i] = j
	}
	dst = binary.AppendUvarint(dst, uint64(len(distinct)))
	for _, s := range distinct {
		dst = appendString(dst, s)
	}
	if len(distinct) == len(vals) {
		return dst
	}
	width := bits.Len(uint(len(distinct) - 1))
	w := bitWriter{b: dst}
	for _, j := range idx {
		w.write(uint64(j), width)
	}
	return w.b
}

// readColumn decodes the m values (m > 0) of a version 2 column of kind
// kind, which takes all of b. Package chunk's readers of whole events and
// of single columns share it.
func readColumn(kind byte, b []byte, m int) ([]any, error) {
	switch kind {
	case kindInt:
		vs, err := readInts(b, m)
		if err != nil {
			return nil, err
		}
		vals := make([]any, m)
		for i, v := range vs {
			vals[i] = json.Number(strconv.FormatInt(v, 10))
		}
		return vals, nil
	case kindDecimal:
		if len(b) == 0 || b[0] > maxScale {
			return nil, corrupt("decimal scale")
		}
		vs, err := readInts(b[1:], m)
		if err != nil {
			return nil, err
		}
		vals := make([]any, m)
		var buf []byte
		for i, v := range vs {
			buf = appendDecimal(buf[:0], v, int(b[0]))
			vals[i] = json.Number(buf)
		}
		return vals, nil
	case kindString:
		return readStrings(b, m)
	}
	return readColumnV1(kind, b, m) // float, bool and any: as version 1
}

func readStrings(b []byte, m int) ([]any, error) {
	r := reader{b: b}
	d := r.count(1)
	if r.err == nil && (d == 0 || d > m) {
		return nil, corrupt("%d distinct strings of %d", d, m)
	}
	distinct := make([]any, 0, d)
	for i := 0; i < d && r.err == nil; i++ {
		distinct = append(distinct, r.string())
	}
	if r.err != nil {
		return nil, r.err
	}
	if d == m {
		if len(r.b) != 0 {
			return nil, corrupt("%d bytes after a string column", len(r.b))
		}
		return distinct, nil
	}
	width := bits.Len(uint(d - 1))
	if packedLen(width, m) != len(r.b) {
		return nil, corrupt("string indexes of %d bytes, %d expected", len(r.b), packedLen(width, m))
	}
	br := bitReader{b: r.b}
	vals := make([]any, m)
	for i := range vals {
		j := br.read(width)
		if j >= uint64(d) {
			return nil, corrupt("string index %d of %d", j, d)
		}
		vals[i] = distinct[j]
	}
	return vals, nil
}
