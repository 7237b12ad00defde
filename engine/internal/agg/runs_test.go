package agg

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/api"
)

// TestDecimalRunsAddAsOneByOne adds generated runs of integers and
// decimals (some ending in zeros, some near the int64 limits, whose sums
// overflow) to one summary as runs (AddDecimals, one by one where it
// declines) and to another one by one (AddDecimal), for every set of
// functions: both answer the same, and hold the same sum, min and max (those
// the functions keep) to the exponent.
func TestDecimalRunsAddAsOneByOne(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 7))
	funcSets := [][]string{
		{FnCount}, {FnSum}, {FnAvg}, {FnMin, FnMax}, {FnFirst, FnLast}, {"p50"},
		{FnCount, FnSum, FnMin, FnMax, FnAvg},
	}
	declined := 0
	for _, funcs := range funcSets {
		for round := range 40 {
			runs := &Summary{Want: NeedsOf(funcs)}
			each := &Summary{Want: NeedsOf(funcs)}
			at := int64(0)
			zeros := round%4 == 0 // every value ends in a zero
			for range 1 + r.IntN(6) {
				scale := r.IntN(4)
				ms := make([]int64, 1+r.IntN(20))
				for i := range ms {
					kind := r.IntN(4)
					if zeros {
						kind = 0
					}
					switch kind {
					case 0:
						ms[i] = (r.Int64N(2000) - 1000) * 10 // ends in a zero
					case 1:
						ms[i] = math.MaxInt64 - r.Int64N(1000)
						if r.IntN(2) == 0 {
							ms[i] = -ms[i]
						}
					default:
						ms[i] = r.Int64N(200000) - 100000
					}
				}
				first := at
				for _, m := range ms {
					each.AddDecimal("v", m, scale, OrderKey{At: at, Series: "s"})
					at++
				}
				if !runs.AddDecimals("v", ms, scale) {
					declined++
					for i, m := range ms {
						runs.AddDecimal("v", m, scale, OrderKey{At: first + int64(i), Series: "s"})
					}
				}
			}
			requireSameSummaries(t, each, runs, funcs, round)
		}
	}
	require.NotZero(t, declined, "no run declined: the one-by-one path went untested")
}

// TestFloatRunsAddAsOneByOne adds generated runs of floats (readings
// that repeat, integers, long fractions, huge and tiny ones whose text is
// no plain decimal) to one summary as runs through one FloatCache
// (AddFloats, one by one where it declines) and to another one by one
// (AddFloat), for every set of functions: both answer the same, and hold
// the same sum, min and max to the exponent.
func TestFloatRunsAddAsOneByOne(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	funcSets := [][]string{
		{FnCount}, {FnSum}, {FnAvg}, {FnMin, FnMax}, {FnFirst, FnLast}, {"p50"},
		{FnCount, FnSum, FnMin, FnMax, FnAvg},
	}
	var cache FloatCache
	declined := 0
	for _, funcs := range funcSets {
		for round := range 40 {
			runs := &Summary{Want: NeedsOf(funcs)}
			each := &Summary{Want: NeedsOf(funcs)}
			at := int64(0)
			for range 1 + r.IntN(6) {
				fs := make([]float64, 1+r.IntN(20))
				times := make([]int64, len(fs))
				for i := range fs {
					switch r.IntN(5) {
					case 0:
						fs[i] = float64(r.IntN(4)) / 4 // repeats
					case 1:
						fs[i] = float64(r.Int64N(1000) - 500)
					case 2:
						fs[i] = r.Float64() * 1000 // 16 or 17 digits
					case 3:
						fs[i] = math.Ldexp(r.Float64(), 200-r.IntN(400)) // no plain decimal
					default:
						fs[i] = 15 + float64(r.IntN(2000))/100 // a reading
					}
					times[i] = at
					each.AddFloat("v", fs[i], OrderKey{At: at, Series: "s"})
					at++
				}
				if !runs.AddFloats("v", fs, times, "s", &cache) {
					declined++
					for i, f := range fs {
						runs.AddFloat("v", f, OrderKey{At: times[i], Series: "s"})
					}
				}
			}
			requireSameSummaries(t, each, runs, funcs, round)
		}
	}
	require.NotZero(t, declined, "no run declined: the one-by-one path went untested")
}

// requireSameSummaries requires the summary of values added one by one
// (each) and of the same values added in runs (runs) to answer funcs
// alike, and to hold the same count, and sum, min and max to the
// exponent where they keep them.
func requireSameSummaries(t *testing.T, each, runs *Summary, funcs []string, round int) {
	t.Helper()
	start := time.Unix(0, 0).UTC()
	want, err := each.Bucket(api.Bucket{Values: map[string]map[string]any{}}, start, []string{"v"}, funcs, true, RankNearest)
	require.NoError(t, err)
	got, err := runs.Bucket(api.Bucket{Values: map[string]map[string]any{}}, start, []string{"v"}, funcs, true, RankNearest)
	require.NoError(t, err)
	require.Equal(t, want, got, "functions %v, round %d", funcs, round)
	w, g := each.lookup("v"), runs.lookup("v")
	require.Equal(t, w.count, g.count)
	if want := each.Want; want.totals() && !want.noSum {
		require.Equal(t, w.sum.String(), g.sum.String(), "functions %v, round %d", funcs, round)
	}
	if want := each.Want; want.totals() && !want.noMinMax {
		require.Equal(t, w.min.String(), g.min.String(), "functions %v, round %d", funcs, round)
		require.Equal(t, w.max.String(), g.max.String(), "functions %v, round %d", funcs, round)
	}
}
