package agg

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/api"
)

// TestPendingSumsAddAsOneByOne: values and runs whose totals together
// overflow an int64 (readings at fine exponents, values near the int64
// limits, of both signs) summed through the pending part of a sum
// (addSum) give the sum, to the exponent, that apd's exact addition of
// each value gives;
// so do summaries merged while parts of their sums are pending, and a
// summary encoded for a rollup.
func TestPendingSumsAddAsOneByOne(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 2))
	for round := range 60 {
		funcs := []string{FnCount, FnSum, FnAvg}
		if round%3 == 0 {
			funcs = append(funcs, FnMin, FnMax)
		}
		var sum apd.Decimal // the sum as apd adds it, value by value
		each := &Summary{Want: NeedsOf(funcs)}
		halves := [2]*Summary{{Want: NeedsOf(funcs)}, {Want: NeedsOf(funcs)}}
		whole := &Summary{Want: NeedsOf(funcs)}
		for i := range 200 {
			scale := r.IntN(16)
			var m int64
			switch r.IntN(3) {
			case 0:
				m = math.MaxInt64/3 - r.Int64N(1000) // a few overflow an int64 together
			case 1:
				m = 1500 + r.Int64N(2000) // a reading
			default:
				m = r.Int64N(1e17)
			}
			if r.IntN(4) == 0 {
				m = -m
			}
			var x apd.Decimal
			x.SetFinite(m, -int32(scale))
			setCanonical(&x, m, scale)
			if i == 0 {
				sum.Set(&x)
			} else if _, err := exact.Add(&sum, &sum, &x); err != nil {
				t.Fatal(err)
			}
			each.AddDecimal("v", m, scale, OrderKey{At: int64(i), Series: "s"})
			require.True(t, whole.AddDecimals("v", []int64{m}, scale))
			require.True(t, halves[i%2].AddDecimals("v", []int64{m}, scale))
		}
		halves[0].Merge(halves[1], []string{"v"})
		_, err := each.Bucket(api.Bucket{Values: map[string]map[string]any{}}, time.Unix(0, 0).UTC(), []string{"v"}, funcs, true, RankNearest)
		require.NoError(t, err)
		require.Equal(t, sum.String(), each.lookup("v").sum.String(), "round %d", round)
		requireSameSummaries(t, each, whole, funcs, round)
		requireSameSummaries(t, each, halves[0], funcs, round)
		require.Equal(t, each.Encode(), whole.Encode(), "round %d", round)
	}
}
