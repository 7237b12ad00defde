package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPeerWorkload(t *testing.T) {
	w := newPeerWorkload(time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC))
	require.Equal(t, time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC), w.start)
	require.Equal(t, time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), w.end())

	// Every reading is inside the range and off the hours' edges.
	n := 0
	for _, b := range w.batches(peerBatch) {
		for _, r := range b {
			require.False(t, r.Time.Before(w.start) || !r.Time.Before(w.end()), r.Time)
			require.NotZero(t, r.Time.Sub(r.Time.Truncate(time.Hour)), r.Time)
			n++
		}
	}
	require.Equal(t, workloadEvents, n)

	// The hourly buckets of every series, day by day, add up to all the
	// readings, and those of each series to its own.
	total := 0
	for d := range workloadDays {
		from := w.start.Add(time.Duration(d) * 24 * time.Hour)
		for _, b := range w.hourly(-1, from, from.Add(24*time.Hour)) {
			total += b.Count
		}
	}
	require.Equal(t, workloadEvents, total)
	one := w.hourly(7, w.start, w.end())
	count := 0
	for _, b := range one {
		count += b.Count
	}
	require.Equal(t, workloadEvents/workloadSeries, count)
	require.Len(t, w.ofSeries(7, w.start, w.end()), count)

	// The checks refuse an answer a count or a sum off.
	require.NoError(t, checkBuckets("same", one, one))
	off := append([]bucket(nil), one...)
	off[3].Count++
	require.Error(t, checkBuckets("count", off, one))
	off = append([]bucket(nil), one...)
	off[3].Sum += 0.01
	require.Error(t, checkBuckets("sum", off, one))
	require.Error(t, checkBuckets("short", one[1:], one))
	times := w.times(w.ofSeries(7, w.start, w.end()))
	require.Error(t, checkTimes("times", times[1:], times))
}
