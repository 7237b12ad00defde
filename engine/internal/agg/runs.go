package agg

import "github.com/cockroachdb/apd/v3"

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
	var total, least, most apd.Decimal
	total.SetFinite(sum/pow10[scale-canon], -int32(canon))
	setCanonical(&least, lo, scale)
	setCanonical(&most, hi, scale)
	if first {
		fp.sum.Set(&total)
		fp.min.Set(&least)
		fp.max.Set(&most)
		return true
	}
	if !p.Want.noSum {
		addDecimal(&fp.sum, &total)
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
