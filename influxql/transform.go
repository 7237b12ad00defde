package influxql

import (
	"math"
	"slices"
	"time"

	iql "github.com/influxdata/influxql"
)

// # How buckets are cut and filled before a transform
//
// A statement with a transform of an aggregate over GROUP BY time()
// buckets (derivative, non_negative_derivative, difference,
// non_negative_difference, moving_average, cumulative_sum) is answered as
// InfluxDB 1.x's iterators answer it (query/select.go,
// buildCallIterator), column by column:
//
//   - A transform's aggregate is read from one interval before the range
//     (after it, under ORDER BY time DESC), whatever the transform:
//     moving_average(f, n) too, so its first value comes n - 2 intervals
//     into the range; cumulative_sum from the range alone. Its buckets
//     are filled as fill() says (count with 0 under fill(null), the
//     default; fill(none) drops the empty ones) over that longer range,
//     and the transform runs over the filled buckets in the answer's
//     order, skipping those still empty; a bucket it gives no value is
//     not one of its rows. So difference(count(f)) of a range whose first
//     bucket holds two points answers 2 there (the bucket before counts
//     0), and moving_average of fill(0) averages the zeros in.
//   - Every other aggregate is read from the range alone, the range's
//     first bucket too (only from the range's start, when that is within
//     the bucket), and filled from the range's first bucket to its last.
//   - A column of no value in a group has no rows; each column's rows are
//     cut by OFFSET and LIMIT on their own (so LIMIT 2 may answer more
//     rows than two, where a transform's rows are not the others'); and
//     the answer's rows are the times of every column's rows. A column
//     without a row at one of those times is the number of fill(number),
//     the value of the row before under fill(previous), else null (as
//     InfluxDB's cursor fills a row from its iterators).
//
// Without a transform, the buckets are filled in the answer's order after
// the aggregates, all columns together (finish).

// extraIntervals is how many intervals beyond the range (before it, or
// after it under ORDER BY time DESC) a statement's transforms read.
func extraIntervals(cols []aggColumn) int {
	for _, c := range cols {
		switch c.outer {
		case "derivative", "non_negative_derivative", "difference", "non_negative_difference", "moving_average":
			return 1
		}
	}
	return 0
}

// extended reports whether the column is read over the range widened by
// extraIntervals: a transform's aggregate that reads beyond the range.
func (c aggColumn) extended() bool {
	return c.outer != "" && c.outer != "cumulative_sum"
}

// hasTransform reports whether a statement's columns transform an
// aggregate over the buckets.
func hasTransform(cols []aggColumn) bool {
	return slices.ContainsFunc(cols, func(c aggColumn) bool { return c.outer != "" })
}

// columnSlots are one column's values in each bucket of a group, and
// whether the bucket holds points of it.
type columnSlots struct {
	values  []any
	present []bool
}

// transformedRows builds a group's rows of a statement with a transform, as
// the rule above says: each column's rows on its own, over the statement's
// range [from, to] or, for a transform's aggregate, over [extFrom, extTo];
// then cut by OFFSET and LIMIT, and joined by time in the answer's order.
func transformedRows(st *iql.SelectStatement, cols []aggColumn, w windows, starts []time.Time, slots []columnSlots, from, to, extFrom, extTo time.Time, desc bool) []row {
	at := map[int64]int{} // a time's row
	var rows []row
	for j, c := range cols {
		s := slots[j]
		if !slices.Contains(s.present, true) {
			continue
		}
		lo, hi := from, to
		if c.extended() {
			lo, hi = extFrom, extTo
		}
		present := s.present
		if c.fn != "stddev" {
			// A bucket of points but no value (percentile's rank 0) is
			// none of the column's rows.
			present = slices.Clone(present)
			for i, v := range s.values {
				present[i] = present[i] && v != nil
			}
		}
		times, idx := w.timeline(starts, present, lo, hi, desc)
		col := make([]row, 0, len(times))
		for k, i := range idx {
			if st.Fill == iql.NoFill && (i < 0 || !present[i]) {
				continue
			}
			r := row{t: times[k], values: []any{nil}}
			if i >= 0 && present[i] {
				r.values[0] = s.values[i]
				if r.values[0] == nil {
					// stddev() of one value, which InfluxDB answers NaN
					// (query.FloatStddevReduceSlice): a row, null, that
					// fill() leaves and a transform of it is NaN over.
					r.values[0] = math.NaN()
				}
			}
			col = append(col, r)
		}
		one := []aggColumn{c}
		fill(st, one, col)
		if c.outer != "" {
			transform(c, 0, col)
			col = slices.DeleteFunc(col, func(r row) bool { return r.values[0] == nil })
		}
		for _, r := range cut(col, st.Offset, st.Limit) {
			k, ok := at[r.t.UnixNano()]
			if !ok {
				k = len(rows)
				at[r.t.UnixNano()] = k
				rows = append(rows, row{t: r.t, values: make([]any, len(cols))})
			}
			rows[k].values[j] = r.values[0]
		}
	}
	slices.SortFunc(rows, func(a, b row) int {
		if desc {
			return b.t.Compare(a.t)
		}
		return a.t.Compare(b.t)
	})
	// A column without a row of its own at a time answers, as InfluxDB's
	// cursor does (query.IteratorScanner's default value), the number of
	// fill(number), the row before's value under fill(previous), else null.
	if st.Fill == iql.NumberFill || st.Fill == iql.PreviousFill {
		fill(st, cols, rows)
	}
	for _, r := range rows {
		for j, v := range r.values {
			if f, ok := v.(float64); ok && math.IsNaN(f) {
				r.values[j] = nil // as InfluxDB writes NaN
			}
		}
	}
	return rows
}

// row is one time slot of an aggregate's answer.
type row struct {
	t      time.Time
	values []any
}

// finish puts the buckets in the answer's order (newest first when
// desc) and fills them in that order, as InfluxDB does (fill(previous)
// of newest first takes the bucket after), of a statement without a
// transform (transformedRows answers one with).
func (x *executor) finish(st *iql.SelectStatement, cols []aggColumn, times []time.Time, values [][]any, events []int64, desc bool) []row {
	if desc {
		slices.Reverse(times)
		slices.Reverse(values)
		slices.Reverse(events)
	}
	rows := make([]row, 0, len(values))
	for i := range values {
		if events[i] == 0 && st.Fill == iql.NoFill {
			continue
		}
		rows = append(rows, row{t: times[i], values: values[i]})
	}
	fill(st, cols, rows)
	return rows
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
	var sum float64
	pos := 0
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
				if c.outer == "derivative" || !(d < 0) { // NaN too, as InfluxDB's
					rows[i].values[j] = d
				}
			}
		case "difference", "non_negative_difference":
			if seen {
				d := v - prev
				if c.outer == "difference" || !(d < 0) {
					rows[i].values[j] = d
				}
			}
		case "cumulative_sum":
			if seen {
				v += prev
			}
			rows[i].values[j] = v
		case "moving_average":
			// A running sum of the window, as InfluxDB's reducer keeps
			// (query.FloatMovingAverageReducer), to its last bits.
			if len(window) < c.window {
				window = append(window, v)
			} else {
				sum -= window[pos]
				window[pos] = v
			}
			sum += v
			pos = (pos + 1) % c.window
			if len(window) == c.window {
				rows[i].values[j] = sum / float64(c.window)
			}
		}
		prev, prevT, seen = v, rows[i].t, true
	}
}
