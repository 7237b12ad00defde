package bench

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAimNotes: each timetable column is judged against the InfluxDB and
// PostgreSQL columns of its table, each aim met or not.
func TestAimNotes(t *testing.T) {
	r := &PeerReport{results: []peerResult{
		{name: "timetable", version: "(this tree, chunk layout)", ingest: 300, cpuPerEvent: 4},
		{name: "timetable-row", version: "(this tree, row layout)", ingest: 230, cpuPerEvent: 6},
		{name: "InfluxDB", ingest: 200, cpuPerEvent: 7},
		{name: "PostgreSQL", ingest: 250, cpuPerEvent: 5},
	}}
	require.Equal(t, []string{
		"aims of timetable (this tree, chunk layout): server CPU per event ≤ PostgreSQL's: 4.0 µs against 5.0 µs, met; ingest ≥ 1.2× InfluxDB's: 1.50×, met; ingest ≥ 1.0× PostgreSQL's: 1.20×, met",
		"aims of timetable-row (this tree, row layout): server CPU per event ≤ PostgreSQL's: 6.0 µs against 5.0 µs, not met; ingest ≥ 1.2× InfluxDB's: 1.15×, not met; ingest ≥ 1.0× PostgreSQL's: 0.92×, not met",
	}, r.aimNotes())

	// Without the peers, nothing to judge against.
	r.results = r.results[:2]
	require.Empty(t, r.aimNotes())
}
