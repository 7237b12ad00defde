package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
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
	printTable(w, r.table())
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}

// table returns the report's cells, the header first.
func (r *Report) table() [][]string {
	t := [][]string{{"figure", "timetable", "baseline", "baseline value", "ratio", "aim"}}
	for _, row := range r.Rows {
		base, ratio := "-", "-"
		if row.Base != 0 {
			base = format(row.Base, row.Unit)
			ratio = fmt.Sprintf("%.2f", row.Value/row.Base)
		}
		t = append(t, []string{row.Figure, format(row.Value, row.Unit), orDash(row.Baseline), base, ratio, orDash(row.Aim)})
	}
	return t
}

// printTable writes cells as an aligned table, the first row the header.
func printTable(w io.Writer, t [][]string) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, cells := range t {
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
}

// markdownTable writes cells as a Markdown table, the first row the header.
func markdownTable(w io.Writer, t [][]string) {
	for i, cells := range t {
		escaped := make([]string, len(cells))
		for j, c := range cells {
			escaped[j] = strings.ReplaceAll(c, "|", "\\|")
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(escaped, " | "))
		if i == 0 {
			fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(cells)))
		}
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
