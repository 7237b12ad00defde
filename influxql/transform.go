package influxql

import (
	"slices"
	"time"

	iql "github.com/influxdata/influxql"
)

// # How buckets are cut and filled before a transform
//
// A transform of an aggregate over GROUP BY time() buckets (derivative,
// non_negative_derivative, difference, non_negative_difference,
// moving_average, cumulative_sum) runs as InfluxDB 1.x's does: the range is read from
// the intervals before its start that the transform needs first
// (extraIntervals: one for a derivative or a difference, n - 1 for
// moving_average(f, n)), the buckets are filled as fill() says (count
// with 0 under fill(null), the default; fill(none) drops the empty
// ones), and the transform runs over the filled buckets in the answer's
// order (newest first under ORDER BY time DESC), skipping those still
// empty. A bucket the transform gives no value is not answered. So
// difference(count(f)) of a range whose first bucket holds two points
// answers 2 there (the bucket before counts 0), and moving_average of
// fill(0) averages the zeros in. Without a transform, the buckets are
// filled in the answer's order after the aggregates.

// extraIntervals is how many intervals before the range a statement's
// transforms read.
func extraIntervals(cols []aggColumn) int {
	n := 0
	for _, c := range cols {
		switch c.outer {
		case "derivative", "non_negative_derivative", "difference", "non_negative_difference":
			n = max(n, 1)
		case "moving_average":
			n = max(n, c.window-1)
		}
	}
	return n
}

// row is one time slot of an aggregate's answer.
type row struct {
	t      time.Time
	values []any
}

// finish puts the buckets in the answer's order (newest first when
// desc), fills them in that order, as InfluxDB does (fill(previous) of
// newest first takes the bucket after), and runs the transforms over
// them, as the rule above says.
func (x *executor) finish(st *iql.SelectStatement, cols []aggColumn, times []time.Time, values [][]any, events []int64, desc bool) []row {
	if desc {
		slices.Reverse(times)
		slices.Reverse(values)
		slices.Reverse(events)
	}
	transformed := slices.ContainsFunc(cols, func(c aggColumn) bool { return c.outer != "" })
	rows := make([]row, 0, len(values))
	for i := range values {
		if events[i] == 0 && st.Fill == iql.NoFill {
			continue
		}
		rows = append(rows, row{t: times[i], values: values[i]})
	}
	fill(st, cols, rows)
	if !transformed {
		return rows
	}
	for j, c := range cols {
		if c.outer != "" {
			transform(c, j, rows)
		}
	}
	return slices.DeleteFunc(rows, func(r row) bool {
		return !slices.ContainsFunc(r.values, func(v any) bool { return v != nil })
	})
}

// fill fills the empty buckets of each column as fill() says, before
// any transform, so a count's empty bucket is the 0 it transforms.
func fill(st *iql.SelectStatement, cols []aggColumn, rows []row) {
	for j, c := range cols {
		// A count, of values or of distinct ones, is a column of
		// integers on InfluxDB whatever the field.
		counts := c.fn == "count" || c.fn == "distinct"
		switch st.Fill {
		case iql.NullFill:
			// Buckets of GROUP BY time() are filled, as InfluxDB's:
			// without it, a count of no value is null. So is a count
			// of a series without a value of its field in any bucket
			// (of a measurement without the field): InfluxDB fills
			// only the series its count answers.
			if counts && groupsByTime(st) && slices.ContainsFunc(rows, func(r row) bool { return r.values[j] != nil }) {
				for _, r := range rows {
					if r.values[j] == nil {
						r.values[j] = int64(0)
					}
				}
			}
		case iql.NumberFill:
			// InfluxDB casts the number to the column's type:
			// fill(-1.5) of a count is -1, of booleans false, of
			// strings "" (a column of no value keeps the number).
			fill := st.FillValue
			switch {
			case counts:
				if f, ok := toFloat(fill); ok {
					fill = int64(f)
				}
			case columnHolds[bool](rows, j):
				fill = false
			case columnHolds[string](rows, j):
				fill = ""
			}
			for _, r := range rows {
				if r.values[j] == nil {
					r.values[j] = fill
				}
			}
		case iql.PreviousFill:
			var prev any
			for _, r := range rows {
				if r.values[j] == nil {
					r.values[j] = prev
				}
				prev = r.values[j]
			}
		case iql.LinearFill:
			last := -1
			for i, r := range rows {
				v, ok := toFloat(r.values[j])
				if !ok {
					continue
				}
				if last >= 0 && i-last > 1 {
					// A line by the buckets (a day across a DST
					// switch counts as one, as on InfluxDB), its
					// values cut to integers in a column of them.
					lv, _ := toFloat(rows[last].values[j])
					slope := (v - lv) / float64(i-last)
					for k := last + 1; k < i; k++ {
						step := slope * float64(k-last)
						if counts {
							rows[k].values[j] = int64(lv + step)
						} else {
							rows[k].values[j] = lv + step
						}
					}
				}
				last = i
			}
		}
	}
}

// columnHolds reports whether column j of the rows holds values of
// type T.
func columnHolds[T any](rows []row, j int) bool {
	return slices.ContainsFunc(rows, func(r row) bool { _, ok := r.values[j].(T); return ok })
}

// transform replaces column j of the rows by its transform, over the
// rows in their order; a row whose value is empty is skipped.
func transform(c aggColumn, j int, rows []row) {
	var prevT time.Time
	var prev float64
	var window []float64
	seen := false
	for i := range rows {
		v, ok := toFloat(rows[i].values[j])
		rows[i].values[j] = nil
		if !ok {
			continue
		}
		switch c.outer {
		case "derivative", "non_negative_derivative":
			if seen {
				elapsed := rows[i].t.Sub(prevT)
				if elapsed < 0 {
					elapsed = -elapsed
				}
				d := (v - prev) / (float64(elapsed) / float64(c.unit))
				if c.outer == "derivative" || d >= 0 {
					rows[i].values[j] = d
				}
			}
		case "difference", "non_negative_difference":
			if seen {
				d := v - prev
				if c.outer == "difference" || d >= 0 {
					rows[i].values[j] = d
				}
			}
		case "cumulative_sum":
			if seen {
				v += prev
			}
			rows[i].values[j] = v
		case "moving_average":
			window = append(window, v)
			if len(window) > c.window {
				window = window[1:]
			}
			if len(window) == c.window {
				sum := 0.0
				for _, w := range window {
					sum += w
				}
				rows[i].values[j] = sum / float64(c.window)
			}
		}
		prev, prevT, seen = v, rows[i].t, true
	}
}
