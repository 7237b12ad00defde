package chunk

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/bits"
	"slices"
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

// maxExactMantissa bounds the mantissas (10^15: fifteen digits) whose
// decimals are the shortest text of the float nearest to them, so that
// appendNumbers tells their floats without reading their text.
const maxExactMantissa = 1e15

// maxScale bounds a decimal column's scale: 10^18 is the largest power of
// ten an int64 holds.
const maxScale = 18

// appendColumn appends the column of vals (at least one), in the
// shortest kind that holds every value exactly, and returns its kind.
func appendColumn(dst []byte, vals []any) ([]byte, byte, error) {
	var p packer
	return p.appendColumn(dst, vals)
}

// appendColumn is the package's appendColumn in p's memory.
func (p *packer) appendColumn(dst []byte, vals []any) ([]byte, byte, error) {
	ints, nums, bools, strs := true, true, true, true
	vs := p.ints[:0]
	for _, v := range vals {
		switch v := v.(type) {
		case json.Number:
			bools, strs = false, false
			if ints {
				var i int64
				if i, ints = exactInt(string(v)); ints {
					vs = append(vs, i)
				}
			}
		case bool:
			ints, nums, strs = false, false, false
		case string:
			ints, nums, bools = false, false, false
		default:
			ints, nums, bools, strs = false, false, false, false
		}
	}
	p.ints = vs
	switch {
	case ints:
		return appendInts(dst, vs), kindInt, nil
	case nums:
		return p.appendNumbers(dst, vals)
	case bools:
		return appendBools(dst, vals), kindBool, nil
	case strs:
		return p.appendStrings(dst, vals), kindString, nil
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
// them all exactly. The floats are not tried when the decimals take no
// more than the least a float column takes (the first float's 64 bits
// and a bit for each next), as a few readings with a few decimal places
// do.
func (p *packer) appendNumbers(dst []byte, vals []any) ([]byte, byte, error) {
	start := len(dst)
	mantissas, scale, dec := p.decimals(vals)
	if dec {
		dst = appendInts(append(dst, byte(scale)), mantissas)
		if len(dst)-start <= packedLen(1, 64+len(vals)-1) {
			return dst, kindDecimal, nil
		}
	}
	fs := p.floats[:0]
	for i, v := range vals {
		var f float64
		if m := mantissas; dec && -maxExactMantissa < m[i] && m[i] < maxExactMantissa {
			// What ParseFloat makes of it, without its text: m and
			// 10^scale are exact float64s and a division rounds
			// correctly. And the text is the float's shortest, as
			// exactFloat requires: a decimal of 15 significant digits
			// or fewer reads back from the float nearest to it.
			f = float64(m[i]) / float64(pow10[scale])
		} else {
			var ok bool
			if f, ok = exactFloat(string(v.(json.Number))); !ok {
				break
			}
		}
		fs = append(fs, math.Float64bits(f))
	}
	p.floats = fs
	if len(fs) == len(vals) {
		p.alt = appendXOR(p.alt[:0], fs)
		if !dec || len(p.alt) < len(dst)-start {
			return append(dst[:start], p.alt...), kindFloat, nil
		}
	}
	if dec {
		return dst, kindDecimal, nil
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
// mantissa fits an int64. The mantissas are in p's memory.
func (p *packer) decimals(vals []any) ([]int64, int, bool) {
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
	ms := slices.Grow(p.ints[:0], len(vals))[:len(vals)]
	p.ints = ms
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
	var u uint64 // the digits' value, without the sign
	neg, frac, digits := false, -1, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.' && frac < 0:
			frac = 0
		case c == '-' && i == 0:
			neg = true
		case '0' <= c && c <= '9':
			if u > (math.MaxUint64-9)/10 {
				return 0, false
			}
			u = u*10 + uint64(c-'0')
			digits++
			if frac >= 0 {
				frac++
			}
		default:
			return 0, false
		}
	}
	if digits == 0 || frac > scale {
		return 0, false
	}
	for range scale - max(frac, 0) {
		if u > math.MaxUint64/10 {
			return 0, false
		}
		u *= 10
	}
	var m int64
	switch {
	case !neg && u <= math.MaxInt64:
		m = int64(u)
	case neg && u <= 1<<63:
		m = -int64(u-1) - 1
	default:
		return 0, false
	}
	var buf [48]byte
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
// that an int64 holds: what strconv.ParseInt(s, 10, 64) takes, without
// the error it makes of every other number.
func exactInt(s string) (int64, bool) {
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	if len(s) == 0 {
		return 0, false
	}
	var u uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' || u > (1<<63)/10 {
			return 0, false
		}
		if u = u*10 + uint64(c-'0'); u > 1<<63 {
			return 0, false
		}
	}
	switch {
	case neg:
		return -int64(u-1) - 1, true
	case u < 1<<63:
		return int64(u), true
	}
	return 0, false
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
// largest. The distinct values are looked for among those found so far,
// and in a map only once there are many.
func (p *packer) appendStrings(dst []byte, vals []any) []byte {
	var index map[string]int
	distinct := p.strs[:0]
	idx := slices.Grow(p.idx[:0], len(vals))[:len(vals)]
	for i, v := range vals {
		s := v.(string)
		j := -1
		if index != nil {
			if k, ok := index[s]; ok {
				j = k
			}
		} else {
			j = slices.Index(distinct, s)
		}
		if j < 0 {
			j = len(distinct)
			distinct = append(distinct, s)
			if index != nil {
				index[s] = j
			} else if len(distinct) > 16 {
				index = make(map[string]int, len(vals))
				for k, d := range distinct {
					index[d] = k
				}
			}
		}
		idx[i] = j
	}
	dst = binary.AppendUvarint(dst, uint64(len(distinct)))
	for _, s := range distinct {
		dst = appendString(dst, s)
	}
	clear(distinct) // the strings are the events', not the packer's to keep
	p.strs, p.idx = distinct[:0], idx
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
