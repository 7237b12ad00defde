package agg

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/axiomhq/hyperloglog"
	"github.com/cockroachdb/apd/v3"
)

// The functions that need more than a running total: count_distinct,
// percentiles, and the increase of counters. They are computed from raw
// events only: rollups keep totals, not sets, sketches or per-series
// order, so an aggregate that asks for one of them reads the events
// (the engine's AggregateQuery.Rollups says so).
const (
	FnCountDistinct = "count_distinct"
	FnP50           = "p50"
	FnP90           = "p90"
	FnP99           = "p99"
	FnDelta         = "delta" // the increase of a counter over the bucket, resets included
	FnRate          = "rate"  // delta per second of the bucket's span
	// FnMedian is the middle value, or the mean of the two middle values
	// of an even count (InfluxQL's median); p50 is the lower of the two.
	FnMedian = "median"
	// FnStddev is the sample standard deviation (n - 1 in the
	// denominator, as InfluxQL's stddev); absent for fewer than two
	// values.
	FnStddev = "stddev"
)

// DistinctExact is how many distinct values count_distinct counts
// exactly, per field and bucket; past it, it estimates with a
// HyperLogLog of precision 14 (16,384 registers), whose relative standard
// error is 0.81%: within ±2.5% of the true count 99.7% of the time.
const DistinctExact = 10000

// QuantileExact is how many numeric values of a field p50, p90 and p99
// keep per bucket to answer exactly: while a bucket holds at most this
// many, a percentile is the nearest-rank one, the value at rank
// ceil(q·n) among the n values sorted (p50 of 1, 2, 3, 4 is 2), given as
// it was stored, to every digit. Past it, the values go into a DDSketch
// and the percentile is an estimate (QuantileAccuracy).
const QuantileExact = 1000

// QuantileAccuracy is the relative accuracy of p50, p90 and p99 once a
// bucket holds more than QuantileExact values: each is then within 1% of
// the nearest-rank value (a DDSketch, which guarantees it for any
// distribution), and is reported to six significant digits, which tells
// an estimate from an exact answer only by its digits: an exact answer
// can be told for sure by the bucket's count, at most QuantileExact.
const QuantileAccuracy = 0.01

// SketchFuncs lists the functions a sketch serves, besides the
// percentiles of any rank (Quantile).
var SketchFuncs = []string{FnCountDistinct, FnP50, FnP90, FnP99, FnMedian, FnStddev, FnDelta, FnRate}

// IsSketch reports whether a sketch serves fn: one of SketchFuncs or a
// percentile.
func IsSketch(fn string) bool {
	_, ok := Quantile(fn)
	return ok || slices.Contains(SketchFuncs, fn)
}

// Quantile returns the quantile of a percentile function: "p" and a
// number above 0 and at most 100 in plain notation, without needless
// zeros (p50, p95, p99.9, p0.1); false for any other name.
func Quantile(fn string) (float64, bool) {
	if len(fn) < 2 || fn[0] != 'p' {
		return 0, false
	}
	for _, c := range fn[1:] {
		if (c < '0' || c > '9') && c != '.' {
			return 0, false
		}
	}
	q, err := strconv.ParseFloat(fn[1:], 64)
	if err != nil || q <= 0 || q > 100 || strconv.FormatFloat(q, 'f', -1, 64) != fn[1:] {
		return 0, false
	}
	return q / 100, true
}

// Needs says which sketches a summary keeps for its fields, and which of
// their totals: a rollup's summaries (the zero Needs) keep every total, and
// no sketch.
type Needs struct {
	distinct, quantiles, counter, squares bool
	// noOrder drops first and last, noSum the sum (and so avg), noMinMax
	// min and max, which a query may not ask for.
	noOrder, noSum, noMinMax bool
}

// sketched reports whether w names a sketch.
func (w Needs) sketched() bool { return w.distinct || w.quantiles || w.counter || w.squares }

// totals reports whether w keeps a sum, a min or a max.
func (w Needs) totals() bool { return !w.noSum || !w.noMinMax }

// NeedsOf returns what summaries need to keep for funcs.
func NeedsOf(funcs []string) Needs {
	asks := func(fns ...string) bool {
		return slices.ContainsFunc(fns, func(fn string) bool { return slices.Contains(funcs, fn) })
	}
	w := Needs{noOrder: !asks(FnFirst, FnLast), noSum: !asks(FnSum, FnAvg, FnStddev), noMinMax: !asks(FnMin, FnMax)}
	for _, fn := range funcs {
		switch fn {
		case FnCountDistinct:
			w.distinct = true
		case FnMedian:
			w.quantiles = true
		case FnStddev:
			w.squares = true
		case FnDelta, FnRate:
			w.counter = true
		default:
			if _, ok := Quantile(fn); ok {
				w.quantiles = true
			}
		}
	}
	return w
}

// sketches are a field's summaries beyond totals, in one bucket.
type sketches struct {
	// distinct holds the values seen, keyed by type and canonical text,
	// until there are more than DistinctExact; then hll counts them.
	distinct map[string]struct{}
	hll      *hyperloglog.Sketch
	// values holds the numeric values while there are at most
	// QuantileExact; then quantiles holds them.
	values    []apd.Decimal
	quantiles *ddsketch.DDSketch
	// last is each series' last value in the bucket; increase the sum
	// of each series' increases between consecutive values (a value
	// below the last is a reset: it counts from zero).
	last     map[string]*apd.Decimal
	increase apd.Decimal
	// squares is the sum of the squares of the values, for stddev.
	squares apd.Decimal
}

// add adds one value of the field, of an event of series; the events of
// a series come in time order. x is the value as a number, when it is
// one.
func (s *sketches) add(w Needs, v any, x *apd.Decimal, series string) {
	if w.distinct {
		s.addDistinct(v)
	}
	if x == nil {
		return
	}
	if w.quantiles {
		s.addQuantile(x)
	}
	if w.squares {
		var sq apd.Decimal
		_, _ = exact.Mul(&sq, x, x) // exact on parsed decimals
		addDecimal(&s.squares, &sq)
	}
	if w.counter {
		if s.last == nil {
			s.last = map[string]*apd.Decimal{}
		}
		prev := s.last[series]
		switch {
		case prev == nil:
			prev = new(apd.Decimal)
			s.last[series] = prev
		case x.Cmp(prev) >= 0:
			var d apd.Decimal
			_, _ = exact.Sub(&d, x, prev) // exact on parsed decimals
			addDecimal(&s.increase, &d)
		default:
			addDecimal(&s.increase, x) // a reset: counted from zero
		}
		prev.Set(x)
	}
}

// merge adds o's values: those of other series.
func (s *sketches) merge(o *sketches) {
	switch {
	case s.hll == nil && o.hll == nil:
		for k := range o.distinct {
			s.addDistinctKey(k)
		}
	default:
		if s.hll == nil {
			s.hll = hyperloglog.New14()
			for k := range s.distinct {
				s.hll.Insert([]byte(k))
			}
			s.distinct = nil
		}
		if o.hll != nil {
			_ = s.hll.Merge(o.hll) // of the same precision
		} else {
			for k := range o.distinct {
				s.hll.Insert([]byte(k))
			}
		}
	}
	for i := range o.values {
		s.addQuantile(&o.values[i])
	}
	if o.quantiles != nil {
		if s.quantiles == nil {
			s.sketchValues()
		}
		_ = s.quantiles.MergeWith(o.quantiles) // of the same mapping
	}
	addDecimal(&s.increase, &o.increase)
	addDecimal(&s.squares, &o.squares)
}

// addQuantile adds a value for the percentiles: kept while there are
// at most QuantileExact, sketched after.
func (s *sketches) addQuantile(x *apd.Decimal) {
	if s.quantiles == nil {
		s.values = append(s.values, apd.Decimal{})
		s.values[len(s.values)-1].Set(x)
		if len(s.values) <= QuantileExact {
			return
		}
		s.sketchValues()
		return
	}
	f, _ := x.Float64()
	if !math.IsInf(f, 0) {
		_ = s.quantiles.Add(f) // finite values are always accepted
	}
}

// sketchValues moves the values kept into a new sketch.
func (s *sketches) sketchValues() {
	s.quantiles, _ = ddsketch.NewDefaultDDSketch(QuantileAccuracy) // a valid accuracy
	for i := range s.values {
		f, _ := s.values[i].Float64()
		if !math.IsInf(f, 0) {
			_ = s.quantiles.Add(f) // finite values are always accepted
		}
	}
	s.values = nil
}

// Rank is how a percentile picks its value among the n values of a
// bucket while they are kept (QuantileExact).
type Rank int

const (
	// RankNearest takes the value at rank ⌈q·n⌉, the nearest rank (p50 of
	// 1, 2, 3, 4 is 2).
	RankNearest Rank = iota
	// RankInfluxQL takes the value at rank ⌊n·q + 0.5⌋, as InfluxQL's
	// percentile(f, N) does, and none when that rank is 0 (p1 of 20
	// values).
	RankInfluxQL
)

// quantile returns the percentile q of the values, at rank r while they
// are kept, the sketch's estimate after; nil when there are none.
func (s *sketches) quantile(q float64, r Rank) any {
	if s.quantiles == nil {
		if len(s.values) == 0 {
			return nil
		}
		slices.SortFunc(s.values, func(a, b apd.Decimal) int { return a.Cmp(&b) })
		rank := int(math.Ceil(q * float64(len(s.values))))
		if r == RankInfluxQL {
			// As InfluxDB computes it: n·percent/100.
			rank = int(math.Floor(float64(len(s.values))*(q*100)/100 + 0.5))
			if rank < 1 {
				return nil
			}
		}
		return decimalNumber(&s.values[max(rank, 1)-1])
	}
	if s.quantiles.IsEmpty() {
		return nil
	}
	v, err := s.quantiles.GetValueAtQuantile(q)
	if err != nil {
		return nil
	}
	return json.Number(strconv.FormatFloat(v, 'g', 6, 64))
}

// median returns the middle value, or the mean of the two middle values
// of an even count, while the values are kept; the sketch's estimate of
// p50 after; nil when there are none.
func (s *sketches) median() any {
	if s.quantiles != nil || len(s.values)%2 == 1 {
		return s.quantile(0.5, RankNearest)
	}
	if len(s.values) == 0 {
		return nil
	}
	slices.SortFunc(s.values, func(a, b apd.Decimal) int { return a.Cmp(&b) })
	var sum, two, m apd.Decimal
	_, _ = exact.Add(&sum, &s.values[len(s.values)/2-1], &s.values[len(s.values)/2])
	two.SetInt64(2)
	_, _ = averaging.Quo(&m, &sum, &two)
	return decimalNumber(&m)
}

// stddev returns the sample standard deviation of count values whose sum
// is sum, from the sum of their squares: sqrt((n·Σx² - (Σx)²) / (n(n-1))),
// the numerator exact, rounded to AvgDigits significant digits; nil for
// fewer than two values.
func (s *sketches) stddev(sum *apd.Decimal, count int64) any {
	if count < 2 {
		return nil
	}
	var n, num, sq, den, v, r apd.Decimal
	n.SetInt64(count)
	_, _ = exact.Mul(&num, &n, &s.squares)
	_, _ = exact.Mul(&sq, sum, sum)
	_, _ = exact.Sub(&num, &num, &sq)
	if num.Sign() <= 0 {
		return json.Number("0") // equal values
	}
	den.SetInt64(count * (count - 1))
	wide := averaging.WithPrecision(AvgDigits + 4)
	_, _ = wide.Quo(&v, &num, &den)
	_, _ = wide.Sqrt(&r, &v)
	_, _ = averaging.Round(&r, &r)
	return decimalNumber(&r)
}

// addDistinct counts a value among the distinct ones.
func (s *sketches) addDistinct(v any) { s.addDistinctKey(distinctKey(v)) }

// addDistinctKey counts a value, named by distinctKey, among the distinct
// ones.
func (s *sketches) addDistinctKey(key string) {
	if s.hll != nil {
		s.hll.Insert([]byte(key))
		return
	}
	if s.distinct == nil {
		s.distinct = map[string]struct{}{}
	}
	s.distinct[key] = struct{}{}
	if len(s.distinct) > DistinctExact {
		s.hll = hyperloglog.New14()
		for k := range s.distinct {
			s.hll.Insert([]byte(k))
		}
		s.distinct = nil
	}
}

// distinctKey names a value by type and value: the number 1 and the
// string "1" differ, 1 and 1.0 (both canonical "1") do not.
func distinctKey(v any) string {
	switch v := v.(type) {
	case string:
		return "s" + v
	case json.Number:
		var d apd.Decimal
		if parseDecimal(&d, string(v)) {
			return "n" + string(decimalNumber(&d))
		}
		return "n" + string(v)
	}
	b, _ := json.Marshal(v) // storage values always marshal
	return "j" + string(b)
}

// result returns the value of a sketch function over a bucket of span
// seconds.
func (s *sketches) result(fn string, span float64, r Rank) any {
	switch fn {
	case FnCountDistinct:
		if s.hll != nil {
			return int64(s.hll.Estimate())
		}
		return int64(len(s.distinct))
	case FnMedian:
		return s.median()
	case FnDelta:
		return decimalNumber(&s.increase)
	case FnRate:
		var r, d apd.Decimal
		d.SetFloat64(span)
		if _, err := averaging.Quo(&r, &s.increase, &d); err != nil {
			panic(fmt.Sprintf("engine: rate: %v", err)) // span is positive
		}
		return decimalNumber(&r)
	}
	if q, ok := Quantile(fn); ok {
		return s.quantile(q, r)
	}
	return nil
}
