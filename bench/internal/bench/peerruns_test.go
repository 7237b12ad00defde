package bench

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMergePeerRuns(t *testing.T) {
	run := func(ingest, p50, disk float64) *PeerReport {
		lat := make([]float64, len(peerQueries))
		for i := range lat {
			lat[i] = p50 + float64(i)
		}
		return &PeerReport{
			results: []peerResult{
				{name: "timetable", durability: "synced", ingest: ingest, cpuPerEvent: 3, p50: lat, p99: lat, disk: disk, memory: 100},
				{name: "InfluxDB", version: "1.6.7", durability: "synced", ingest: 2 * ingest, cpuPerEvent: 4, p50: lat, p99: lat, disk: 1, memory: 200},
			},
			notes: []string{"the workload"},
		}
	}

	one := run(100, 1, 9)
	require.Same(t, one, mergePeerRuns([]*PeerReport{one}), "one run is its own table")

	m := mergePeerRuns([]*PeerReport{run(300, 3, 9), run(100, 1, 9), run(200, 7, 10)})
	require.Len(t, m.results, 2)
	tt := m.results[0]
	require.Equal(t, "timetable", tt.name)
	require.Equal(t, 200.0, tt.ingest, "the median of three")
	require.Equal(t, 3.0, tt.p50[0])
	require.Equal(t, 4.0, tt.p50[1])
	require.Equal(t, 9.0, tt.disk)
	require.Equal(t, 400.0, m.results[1].ingest)
	require.Equal(t, "1.6.7", m.results[1].version)
	require.Equal(t, "the workload", m.notes[0])
	require.Contains(t, m.notes, "spread of ingest, events/s over 3 runs: timetable 100–300, InfluxDB 200–600")
	require.Contains(t, m.notes, "spread of disk after a flush, MiB over 3 runs: timetable 9.0–10.0, InfluxDB 1.0–1.0")

	// A query a system is not asked (NaN) has no spread.
	notAsked := func(r *PeerReport) *PeerReport {
		r.results[1].p50 = append([]float64(nil), r.results[1].p50...)
		r.results[1].p50[0] = math.NaN()
		return r
	}
	m = mergePeerRuns([]*PeerReport{notAsked(run(100, 1, 9)), notAsked(run(200, 2, 9))})
	require.Contains(t, m.notes, "spread of "+peerQueries[0].name+", p50 ms over 2 runs: timetable 1.000–2.000")

	two := mergePeerRuns([]*PeerReport{run(100, 1, 9), run(200, 2, 9)})
	require.Equal(t, 150.0, two.results[0].ingest, "the mean of the middle two")
	require.Equal(t, []string{"ingest, events/s", "150", "300 (0.50)"}, two.table()[1], "the table shows the medians and their ratio")
}
