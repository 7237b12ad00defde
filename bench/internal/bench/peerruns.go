package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// PeerRuns runs the peer comparison Options.PeerRuns times, one run
// after the other, each in a temp dir of its own removed after it, and
// returns one table of the median of each figure, with notes on the
// ingest aims met (aimNotes) and on the spread (least–most over the runs) of the figures the aims are about: a
// loaded machine moves the rates of every system from one run to the
// next, and one run's ratios say little alone. Only the first run takes
// CPU profiles (Options.PeerProfile).
func PeerRuns(ctx context.Context, o Options) (*PeerReport, error) {
	runs := max(o.PeerRuns, 1)
	var reports []*PeerReport
	for run := range runs {
		// A temp dir of its own, as the benchmark's is: the PostgreSQL
		// peer opens the one above its own to its user.
		dir, err := os.MkdirTemp(filepath.Dir(o.Dir), fmt.Sprintf("timetable-bench-peers-%d-", run+1))
		if err != nil {
			return nil, err
		}
		ro := o
		ro.Dir = dir
		if run > 0 {
			ro.PeerProfile = ""
			o.Progress(fmt.Sprintf("peers: run %d of %d", run+1, runs))
		}
		r, err := Peers(ctx, ro)
		if err := errors.Join(err, os.RemoveAll(ro.Dir)); err != nil {
			return nil, err
		}
		reports = append(reports, r)
	}
	merged := mergePeerRuns(reports)
	merged.notes = append(merged.notes, merged.aimNotes()...)
	return merged, nil
}

// A peerFigure is a figure of the table whose spread over runs is noted.
type peerFigure struct {
	name  string
	value func(peerResult) float64
	// format prints one value.
	format string
}

// spreadFigures are the figures mergePeerRuns notes the spread of: the
// rates, the CPU, and each query's p50.
func spreadFigures() []peerFigure {
	figures := []peerFigure{
		{"ingest, events/s", func(r peerResult) float64 { return r.ingest }, "%.0f"},
		{"server CPU per event, µs", func(r peerResult) float64 { return r.cpuPerEvent }, "%.1f"},
	}
	for i, q := range peerQueries {
		figures = append(figures, peerFigure{q.name + ", p50 ms", func(r peerResult) float64 { return r.p50[i] }, "%.3f"})
	}
	return append(figures, peerFigure{"disk after a flush, MiB", func(r peerResult) float64 { return r.disk }, "%.1f"})
}

// mergePeerRuns returns the table of the median of each figure over
// reports, runs of the same systems in the same order, with the notes of
// the first and, for more than one run, a note of the spread of each of
// spreadFigures.
func mergePeerRuns(reports []*PeerReport) *PeerReport {
	if len(reports) == 1 {
		return reports[0]
	}
	first := reports[0]
	merged := &PeerReport{notes: slices.Clone(first.notes)}
	for i, res := range first.results {
		runs := make([]peerResult, len(reports))
		for j, r := range reports {
			runs[j] = r.results[i]
		}
		m := peerResult{name: res.name, version: res.version, durability: res.durability}
		m.ingest = medianOf(runs, func(r peerResult) float64 { return r.ingest })
		m.cpuPerEvent = medianOf(runs, func(r peerResult) float64 { return r.cpuPerEvent })
		for q := range res.p50 {
			m.p50 = append(m.p50, medianOf(runs, func(r peerResult) float64 { return r.p50[q] }))
			m.p99 = append(m.p99, medianOf(runs, func(r peerResult) float64 { return r.p99[q] }))
		}
		m.disk = medianOf(runs, func(r peerResult) float64 { return r.disk })
		m.memory = medianOf(runs, func(r peerResult) float64 { return r.memory })
		merged.results = append(merged.results, m)
	}
	merged.notes = append(merged.notes, fmt.Sprintf("each figure is the median of %d runs of the whole comparison, one after the other; the spread notes give each system's least and most", len(reports)))
	for _, f := range spreadFigures() {
		var cells []string
		for i, res := range first.results {
			values := make([]float64, len(reports))
			for j, r := range reports {
				values[j] = f.value(r.results[i])
			}
			if slices.ContainsFunc(values, math.IsNaN) {
				continue // a query the system is not asked (errNotAsked)
			}
			cells = append(cells, fmt.Sprintf("%s "+f.format+"–"+f.format, res.name, slices.Min(values), slices.Max(values)))
		}
		merged.notes = append(merged.notes, fmt.Sprintf("spread of %s over %d runs: %s", f.name, len(reports), strings.Join(cells, ", ")))
	}
	return merged
}

// medianOf returns the median of a figure over runs: the mean of the two
// middle values of an even count.
func medianOf(runs []peerResult, value func(peerResult) float64) float64 {
	values := make([]float64, len(runs))
	for i, r := range runs {
		values[i] = value(r)
	}
	slices.Sort(values)
	n := len(values)
	if n%2 == 1 {
		return values[n/2]
	}
	return (values[n/2-1] + values[n/2]) / 2
}
