package influxql

import (
	"context"
	"fmt"
	"slices"
	"time"

	iql "github.com/influxdata/influxql"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/event"
)

// # Aggregates computed from the group's points
//
// Some aggregates are not the engine's: mode() (mode.go), and every
// aggregate of a SELECT whose WHERE reads a tag and a field together
// (host = 'a' OR v > 3, which neither picks series nor is the engine's
// filter: rowcond.go) or that reads a subquery (subquery.go). These are
// computed from the group's points, read series by series (eachPoint)
// and held, each bucket's values reduced as InfluxDB's reducers reduce
// them: count, sum, mean, median, percentile, stddev, count(distinct())
// in float64, min, max, first and last picked as selector.go says, spread
// max - min. At most maxGroupPoints values of a group are held; past
// them the statement's error asks to narrow it. The buckets are then
// filled, transformed and cut as the engine's are (transform.go).

// inPoints reports whether a column is computed only from points.
func (c aggColumn) inPoints() bool { return c.fn == "mode" }

// byPoints reports whether a SELECT of aggregates is computed from its
// groups' points rather than by the engine.
func (p *plan) byPoints(cols []aggColumn) bool {
	return p.rowCond != nil || p.rows != nil || slices.ContainsFunc(cols, aggColumn.inPoints)
}

// point is a value of a field read for an aggregate.
type point struct {
	t      time.Time
	v      any
	series string
}

// aggregatePoints answers a SELECT of aggregates from its groups'
// points; p's range is the one its transforms read (transform.go), from
// and to the statement's own, of the columns that read no further.
func (x *executor) aggregatePoints(ctx context.Context, st *iql.SelectStatement, p *plan, cols []aggColumn, out []outColumn, starts []time.Time, w windows, from, to time.Time, emit func(api.InfluxQLSeries) error) error {
	// A field is held once for the columns over the statement's range,
	// and once more for the transforms' that read beyond it.
	type heldKey struct {
		field    string
		extended bool
	}
	keyOf := func(c aggColumn) heldKey { return heldKey{c.field, c.extended() && extraIntervals(cols) > 0} }
	var keys []heldKey
	var fields []string
	for _, c := range cols {
		if k := keyOf(c); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
		if !slices.Contains(fields, c.field) {
			fields = append(fields, c.field)
		}
	}
	// The points the columns over the statement's range read: those
	// eachPoint reads of a plan of that range.
	ownFrom, ownTo := from, to
	if p.rows != nil {
		own := *p
		own.from, own.to = from, to
		ownFrom, ownTo, _ = p.rows.subRange(&own)
	}
	for _, g := range p.groups {
		if err := ctx.Err(); err != nil {
			return err
		}
		held := make(map[heldKey][][]point, len(keys)) // slot → points
		for _, k := range keys {
			held[k] = make([][]point, len(starts))
		}
		n := 0
		err := x.eachPoint(ctx, p, g, fields, func(ev event.Event) {
			i := slotOf(p, starts, ev.Time)
			if i < 0 || i >= len(starts) {
				return
			}
			own := !ev.Time.Before(ownFrom) && !ev.Time.After(ownTo)
			for _, k := range keys {
				if v, ok := ev.Fields[k.field]; ok && v != nil && (own || k.extended) {
					held[k][i] = append(held[k][i], point{t: ev.Time, v: v, series: ev.Series})
					n++
				}
			}
		})
		if err != nil {
			return err
		}
		if n > maxGroupPoints {
			return fmt.Errorf("%d values of a group held for its aggregates, over the limit of %d: narrow the range, GROUP BY the tags, or pick fewer series", n, maxGroupPoints)
		}
		columns := make([]columnSlots, len(cols))
		var at time.Time // of the one selector without GROUP BY time()
		for j, c := range cols {
			columns[j] = columnSlots{values: make([]any, len(starts)), present: make([]bool, len(starts))}
			for i, pts := range held[keyOf(c)] {
				if len(pts) == 0 {
					continue
				}
				v, t := reducePoints(c, pts, p.desc)
				columns[j].values[i], columns[j].present[i] = v, true
				if j == 0 {
					at = t
				}
			}
		}
		selected := func(v any) (time.Time, any, error) { return at, v, nil }
		if err := x.answerGroup(st, p, g, cols, out, w, starts, columns, from, to, selected, emit); err != nil {
			return err
		}
	}
	return nil
}

// reducePoints is a column's value of a bucket's points, and for a
// selector the time of the point it picked.
func reducePoints(c aggColumn, pts []point, desc bool) (any, time.Time) {
	switch c.fn {
	case "count":
		return int64(len(pts)), time.Time{}
	case "first", "last", "min", "max":
		var k pick
		for _, pt := range pts {
			if c.fn == "min" || c.fn == "max" {
				if _, ok := toFloat(pt.v); !ok {
					continue
				}
			}
			if k.better(c.fn, pt.t, pt.v) {
				k = pick{t: pt.t, v: pt.v, ok: true}
			}
		}
		if !k.ok {
			return nil, time.Time{}
		}
		return k.v, k.t
	case "mode":
		return modeOf(pts, desc), time.Time{}
	}
	vs := make([]any, len(pts))
	for i, pt := range pts {
		vs[i] = pt.v
	}
	switch c.fn {
	case "distinct", "median", "stddev":
		return ofValues(c, vs), time.Time{}
	case "percentile":
		v := ofValues(c, vs)
		var at time.Time
		if f, ok := toFloat(v); ok {
			for _, pt := range pts {
				if g, ok := toFloat(pt.v); ok && g == f && (at.IsZero() || pt.t.Before(at)) {
					at = pt.t
				}
			}
		}
		return v, at
	}
	var sum, lo, hi float64
	n := 0
	for _, v := range vs {
		f, ok := toFloat(v)
		if !ok {
			continue
		}
		if n == 0 || f < lo {
			lo = f
		}
		if n == 0 || f > hi {
			hi = f
		}
		sum += f
		n++
	}
	if n == 0 {
		return nil, time.Time{}
	}
	switch c.fn {
	case "sum":
		return number(sum), time.Time{}
	case "mean":
		return number(sum / float64(n)), time.Time{}
	case "spread":
		return number(hi - lo), time.Time{}
	}
	return nil, time.Time{}
}
