package bench

import (
	"fmt"
	"math"
	"strings"
)

// The aims of the peer table on ingest (docs/benchmarks.md, "Aims the
// peer table is read against"): timetable's server ingests at least
// 1.2× InfluxDB's events/s and 1.0× PostgreSQL's, at no more CPU per
// event than PostgreSQL's.
const (
	aimIngestOverInflux   = 1.2
	aimIngestOverPostgres = 1.0
)

// aimNotes says, for each timetable column (each layout), whether it
// meets each ingest aim, against the InfluxDB and PostgreSQL columns of
// the same table; nothing for an aim whose peer was not run.
func (r *PeerReport) aimNotes() []string {
	find := func(name string) (peerResult, bool) {
		for _, res := range r.results {
			if res.name == name {
				return res, true
			}
		}
		return peerResult{}, false
	}
	influx, haveInflux := find((&influxPeer{}).name())
	pg, havePG := find((&postgresPeer{}).name())
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "not met"
	}
	var notes []string
	for _, tt := range r.results {
		if !strings.HasPrefix(tt.name, "timetable") {
			continue
		}
		var parts []string
		if havePG && pg.cpuPerEvent > 0 && !math.IsNaN(tt.cpuPerEvent) {
			parts = append(parts, fmt.Sprintf("server CPU per event ≤ PostgreSQL's: %.1f µs against %.1f µs, %s",
				tt.cpuPerEvent, pg.cpuPerEvent, verdict(tt.cpuPerEvent <= pg.cpuPerEvent)))
		}
		if haveInflux && influx.ingest > 0 {
			x := tt.ingest / influx.ingest
			parts = append(parts, fmt.Sprintf("ingest ≥ %.1f× InfluxDB's: %.2f×, %s", aimIngestOverInflux, x, verdict(x >= aimIngestOverInflux)))
		}
		if havePG && pg.ingest > 0 {
			x := tt.ingest / pg.ingest
			parts = append(parts, fmt.Sprintf("ingest ≥ %.1f× PostgreSQL's: %.2f×, %s", aimIngestOverPostgres, x, verdict(x >= aimIngestOverPostgres)))
		}
		if len(parts) > 0 {
			notes = append(notes, fmt.Sprintf("aims of %s %s: %s", tt.name, tt.version, strings.Join(parts, "; ")))
		}
	}
	return notes
}
