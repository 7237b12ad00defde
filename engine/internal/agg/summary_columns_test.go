package agg

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/api"
)

// TestColumnValuesAddAsTheirText adds generated integers, floats and
// decimals to one summary as a column holds them (AddInt, AddFloat,
// AddDecimal) and to another as their canonical text (AddValue), for
// every set of functions: both answer the same, to the text.
func TestColumnValuesAddAsTheirText(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	funcSets := [][]string{
		{FnCount}, {FnSum}, {FnAvg}, {FnMin, FnMax}, {FnFirst, FnLast},
		{FnCount, FnSum, FnMin, FnMax, FnAvg, FnFirst, FnLast},
	}
	for _, funcs := range funcSets {
		for round := range 30 {
			cols := &Summary{Want: NeedsOf(funcs)}
			texts := &Summary{Want: NeedsOf(funcs)}
			for i := range 1 + r.IntN(50) {
				k := OrderKey{At: int64(i), Series: "s"}
				switch r.IntN(3) {
				case 0:
					n := r.Int64N(2000) - 1000
					cols.AddInt("v", n, k)
					texts.AddValue("v", json.Number(strconv.FormatInt(n, 10)), k)
				case 1:
					f := (r.Float64() - 0.5) * float64(r.IntN(1e6))
					cols.AddFloat("v", f, k)
					texts.AddValue("v", json.Number(strconv.FormatFloat(f, 'f', -1, 64)), k)
				default:
					m, scale := r.Int64N(200000)-100000, r.IntN(5)
					var x apd.Decimal
					x.SetFinite(m, -int32(scale))
					var c apd.Decimal
					_, _, _ = apd.BaseContext.Reduce(&c, &x) // the canonical text: no trailing zeros after the point
					text := c.Text('f')
					cols.AddDecimal("v", m, scale, k)
					texts.AddValue("v", json.Number(text), k)
				}
			}
			start := time.Unix(0, 0).UTC()
			want, err := texts.Bucket(api.Bucket{Values: map[string]map[string]any{}}, start, []string{"v"}, funcs, true, RankNearest)
			require.NoError(t, err)
			got, err := cols.Bucket(api.Bucket{Values: map[string]map[string]any{}}, start, []string{"v"}, funcs, true, RankNearest)
			require.NoError(t, err)
			require.Equal(t, want, got, "functions %v, round %d", funcs, round)
		}
	}
}
