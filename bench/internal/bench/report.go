package bench

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"
)

// Row is one line of the report: a figure next to its baseline.
type Row struct {
	Figure   string
	Value    float64
	Unit     string
	Baseline string  // what the value is compared with
	Base     float64 // the baseline's value, 0 when there is none
	Aim      string
}

// Report is the whole table.
type Report struct {
	Rows  []Row
	Notes []string
}

// Print writes the report as an aligned table.
func (r *Report) Print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\ttimetable\tbaseline\tbaseline value\tratio\taim")
	for _, row := range r.Rows {
		base, ratio := "-", "-"
		if row.Base != 0 {
			base = format(row.Base, row.Unit)
			ratio = fmt.Sprintf("%.2f", row.Value/row.Base)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", row.Figure, format(row.Value, row.Unit), orDash(row.Baseline), base, ratio, orDash(row.Aim))
	}
	tw.Flush()
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func format(v float64, unit string) string {
	switch unit {
	case "ev/s":
		return fmt.Sprintf("%.0f ev/s", v)
	case "ms":
		return fmt.Sprintf("%.3f ms", v)
	case "MiB":
		return fmt.Sprintf("%.0f MiB", v)
	}
	return fmt.Sprintf("%.2f %s", v, unit)
}

// median runs f n times and returns the median of its results.
func median(n int, f func() (float64, error)) (float64, error) {
	var xs []float64
	for range n {
		x, err := f()
		if err != nil {
			return 0, err
		}
		xs = append(xs, x)
	}
	slices.Sort(xs)
	return xs[len(xs)/2], nil
}

// interleavedMedians calls each of fs in turn, n rounds, and returns the
// median of each one's results: measurements compared with each other
// then see the same changes of load.
func interleavedMedians(n int, fs ...func() (float64, error)) ([]float64, error) {
	xs := make([][]float64, len(fs))
	for range n {
		for i, f := range fs {
			x, err := f()
			if err != nil {
				return nil, err
			}
			xs[i] = append(xs[i], x)
		}
	}
	out := make([]float64, len(fs))
	for i := range xs {
		slices.Sort(xs[i])
		out[i] = xs[i][len(xs[i])/2]
	}
	return out, nil
}

// rate returns events per second.
func rate(events int, d time.Duration) float64 { return float64(events) / d.Seconds() }

// percentile returns the p-th percentile (0 to 100) of sorted durations, in
// milliseconds.
func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p / 100)
	return float64(sorted[i]) / float64(time.Millisecond)
}
