package influxql

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	iql "github.com/influxdata/influxql"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/event"
)

// # integral(f[, unit])
//
// integral(f[, unit]), alone in a SELECT, is the area under the field's
// points by the trapezium rule, in value × unit (a second by default),
// computed as InfluxDB 1.x's IntegralReducer computes it: the points of
// a group's series merged in the answer's order (of one time, the last
// in the order of the series' names is kept), each trapezium added to
// the bucket of GROUP BY time() of its first point. Where two points are
// in different buckets, the value at the end of the first one's bucket
// is interpolated on the line between them: the area up to it is the
// first bucket's, the rest the second's, whatever buckets lie between.
// A bucket's row is answered at its start once a point after it is
// read, and the last at the end, unless its only point is at its start;
// fill() does not apply (a bucket without points has no row). Under
// ORDER BY time DESC the points are taken newest first, so the areas are
// negative and each row is at its bucket's end, as InfluxDB answers
// them. Without GROUP BY time() the one row is at time 0. Values are
// float64, as InfluxDB computes a float field's; of an integer field it
// computes the interpolated area otherwise and answers the row without
// GROUP BY time() at the range's start (docs/influxql.md, Differences). At most maxGroupPoints
// points of a group are held.

// parseIntegral reads integral(f[, unit]), as InfluxDB words a unit that
// is not a duration.
func parseIntegral(call *iql.Call, c aggColumn) (aggColumn, error) {
	return fieldAndUnit(call, c, time.Second, "second argument must be a duration")
}

// integralValues answers a SELECT of integral(f[, unit]) alone.
func (x *executor) integralValues(ctx context.Context, st *iql.SelectStatement, p *plan, c aggColumn, w windows, emit func(api.InfluxQLSeries) error) error {
	for _, g := range p.groups {
		var pts []point
		err := x.eachPoint(ctx, p, g, []string{c.field}, func(ev event.Event) {
			if v, ok := ev.Fields[c.field]; ok && len(pts) <= maxGroupPoints {
				pts = append(pts, point{t: ev.Time, v: v, series: ev.Series})
			}
		})
		if err != nil {
			return err
		}
		if len(pts) > maxGroupPoints {
			return fmt.Errorf("more than %d points of a group for integral(), over the limit: narrow the range or GROUP BY the tags", maxGroupPoints)
		}
		slices.SortStableFunc(pts, func(a, b point) int {
			if c := a.t.Compare(b.t); c != 0 {
				return c
			}
			return strings.Compare(a.series, b.series)
		})
		if p.desc {
			slices.Reverse(pts)
		}
		var rows [][]any
		for _, r := range integrate(pts, c.unit, !p.desc, p.interval > 0, w) {
			rows = append(rows, []any{x.timeValue(r.t, p.loc), r.v})
		}
		if p.desc {
			slices.Reverse(rows) // emitColumn puts them in the answer's order again
		}
		if err := emitColumn(st, p, g.tags, c.name, rows, emit); err != nil {
			return err
		}
	}
	return nil
}

// area is one row of integral().
type area struct {
	t time.Time
	v float64
}

// integrate runs InfluxDB's IntegralReducer over points in the answer's
// order: ascending, or newest first.
func integrate(pts []point, unit time.Duration, ascending, byTime bool, w windows) []area {
	var out []area
	var start, end time.Time // of the bucket; under DESC, start is its end
	window := func(t time.Time) {
		if !byTime {
			start, end = time.Unix(0, 0).UTC(), time.Time{}
			return
		}
		s, e := w.of(t)
		if ascending {
			start, end = s, e
		} else {
			start, end = e, s
		}
	}
	crossed := func(t time.Time) bool {
		if !byTime {
			return false
		}
		if ascending {
			return !t.Before(end)
		}
		return !t.After(end)
	}
	var prev point
	var prevV float64
	have := false
	sum := 0.0
	for _, pt := range pts {
		v, ok := toFloat(pt.v)
		if !ok {
			continue
		}
		if !have {
			prev, prevV, have = pt, v, true
			window(pt.t)
			continue
		}
		if prev.t.Equal(pt.t) {
			prev, prevV = pt, v
			continue
		}
		if crossed(pt.t) {
			if !prev.t.Equal(end) {
				at := prevV + (v-prevV)/float64(pt.t.Sub(prev.t))*float64(end.Sub(prev.t))
				sum += 0.5 * (at + prevV) * float64(end.Sub(prev.t)) / float64(unit)
				prevV, prev.t = at, end
			}
			out = append(out, area{t: start, v: sum})
			window(pt.t)
			sum = 0
		}
		sum += 0.5 * (v + prevV) * float64(pt.t.Sub(prev.t)) / float64(unit)
		prev, prevV = pt, v
	}
	if have && !prev.t.Equal(start) {
		out = append(out, area{t: start, v: sum})
	}
	return out
}
