package lifecycle

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSweepCount(t *testing.T) {
	tests := []struct {
		total   int
		elapsed time.Duration
		want    int
	}{
		{0, time.Hour, 0},
		{1, time.Minute, 1},
		{300, 5 * time.Minute, 2}, // 300 × 5/1440 = 1.04
		{2500, 5 * time.Minute, 9},
		{2500, 0, 9}, // the first cycle: DefaultInterval
		{2500, time.Hour, MaxSweep},
		{10, 48 * time.Hour, 10},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, sweepCount(tt.total, tt.elapsed), "%d tables after %v", tt.total, tt.elapsed)
	}
	// At any pace every table is seen within SweepPeriod, as long as a
	// cycle's share stays under MaxSweep.
	for _, total := range []int{1, 7, 100, 2500, 10000} {
		for _, every := range []time.Duration{time.Minute, 5 * time.Minute, time.Hour} {
			n := sweepCount(total, every)
			if n == MaxSweep {
				continue
			}
			cycles := (total + n - 1) / n
			require.LessOrEqual(t, time.Duration(cycles)*every, SweepPeriod+every, "%d tables every %v", total, every)
		}
	}
}

func TestSweepOrder(t *testing.T) {
	names := []string{"c", "a", "d", "b"}
	tests := []struct {
		cursor string
		n      int
		want   []string
		next   string
	}{
		{"", 2, []string{"a", "b"}, "b"},
		{"b", 2, []string{"c", "d"}, "d"},
		{"d", 3, []string{"a", "b", "c"}, "c"},
		{"bb", 1, []string{"c"}, "c"}, // a cursor table gone since
		{"", 9, []string{"a", "b", "c", "d"}, "d"},
		{"x", 0, nil, "x"},
	}
	for _, tt := range tests {
		idx, next := sweepOrder(names, tt.cursor, tt.n)
		var got []string
		for _, i := range idx {
			got = append(got, names[i])
		}
		require.Equal(t, tt.want, got, "after %q", tt.cursor)
		require.Equal(t, tt.next, next)
	}
}
