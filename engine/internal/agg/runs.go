package agg

import (
	"math"
	"strconv"

	"github.com/cockroachdb/apd/v3"
)

// AddDecimals adds the decimals m times 10^-scale, for each m of ms, the
// values of the named field of events counted apart (Events), as
// AddDecimal adds them one by one, with the same sum, min and max (each
// to the exponent AddDecimal's additions give it): a run of a column's
// values summed in int64s, and added to the summary as one number. It
// reports false, having added nothing, when the summary keeps more than
// totals (first, last, sketches: those need each value's event) or the
// run's sum does not fit an int64; the caller then adds the values one by
// one. ms is not kept.
func (p *Summary) AddDecimals(name string, ms []int64, scale int) bool {
	if len(ms) == 0 {
		return true
	}
	if p.Want.sketched() || !p.Want.noOrder {
		return false
	}
	var sum int64
	lo, hi := ms[0], ms[0]
	canon := 0 // the largest scale of a value's canonical text
	for _, m := range ms {
		s := sum + m
		if (sum > 0 && m > 0 && s < 0) || (sum < 0 && m < 0 && s >= 0) {
			return false
		}
		sum = s
		lo, hi = min(lo, m), max(hi, m)
		if canon < scale {
			c := scale
			for c > canon && m%10 == 0 {
				m, c = m/10, c-1
			}
			canon = max(canon, c)
		}
	}
	fp := p.field(name)
	first := fp.count == 0
	fp.count += int64(len(ms))
	if fp.nonnum || !p.Want.totals() {
		return true
	}
	// The run's total is tm times 10^te, at the exponent of its values'
	// canonical texts, as AddDecimal's additions leave it. A summary's
	// first values set its sum, min and max, as total does; then it
	// adds only what it keeps, its sum through the pending part
	// (addSum).
	tm, te := sum/pow10[scale-canon], -int32(canon)
	var total, least, most apd.Decimal
	if first {
		total.SetFinite(tm, te)
	}
	if first || !p.Want.noMinMax {
		setCanonical(&least, lo, scale)
		setCanonical(&most, hi, scale)
	}
	if first {
		fp.sum.Set(&total)
		fp.min.Set(&least)
		fp.max.Set(&most)
		return true
	}
	if !p.Want.noSum {
		fp.addSum(tm, te)
	}
	if !p.Want.noMinMax {
		if least.Cmp(&fp.min) < 0 {
			fp.min.Set(&least)
		}
		if most.Cmp(&fp.max) > 0 {
			fp.max.Set(&most)
		}
	}
	return true
}

// setCanonical sets x to m times 10^-scale at the exponent of its
// canonical text, as AddDecimal sets it.
func setCanonical(x *apd.Decimal, m int64, scale int) {
	for scale > 0 && m%10 == 0 {
		m, scale = m/10, scale-1
	}
	x.SetFinite(m, -int32(scale))
}

// FloatCache holds the decimals of the floats AddFloats met last, by
// their bits: readings repeat, and a float's shortest text takes longer
// to make than the cache to look up. The zero value is empty. A reader
// keeps one for every summary it adds to, and uses it from one goroutine.
type FloatCache struct {
	e [floatCacheSize]cachedFloat
}

// floatCacheSize is the number of floats a FloatCache holds.
const floatCacheSize = 64

// cachedFloat is a float and its decimal, the number its canonical text
// is, when that text is a plain decimal parsePlainDecimal reads (ok).
type cachedFloat struct {
	bits uint64
	x    apd.Decimal
	ok   bool
}

// decimal returns the decimal of f's canonical text,
// strconv.FormatFloat(f, 'f', -1, 64), as AddFloat reads it, or false
// when that text is not a plain decimal of at most 18 digits.
func (c *FloatCache) decimal(f float64) (*apd.Decimal, bool) {
	bits := math.Float64bits(f)
	e := &c.e[(bits^bits>>32)%floatCacheSize]
	if e.ok && e.bits == bits {
		return &e.x, true
	}
	var buf [32]byte
	if !parsePlainDecimal(&e.x, strconv.AppendFloat(buf[:0], f, 'f', -1, 64)) {
		e.ok = false
		return nil, false
	}
	e.bits, e.ok = bits, true
	return &e.x, true
}

// AddFloats adds the floats fs, the values of the named field of the
// events at times (Unix nanoseconds) of series, counted apart (Events),
// as AddFloat adds them one by one, with the same sum, min and max: each
// float's decimal is looked up in c before it is made. It reports false,
// having added nothing, when the summary keeps more than totals (first,
// last, sketches); the caller then adds the values one by one. fs and
// times are not kept.
func (p *Summary) AddFloats(name string, fs []float64, times []int64, series string, c *FloatCache) bool {
	if p.Want.sketched() || !p.Want.noOrder {
		return false
	}
	for i, f := range fs {
		x, ok := c.decimal(f)
		if !ok {
			p.AddFloat(name, f, OrderKey{At: times[i], Series: series})
			continue
		}
		p.field(name).addNumber(x, p.Want)
	}
	return true
}
