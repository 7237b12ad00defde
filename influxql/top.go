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

// # top(f, N) and bottom(f, N)
//
// top(f, N) and bottom(f, N), alone in a SELECT, answer as InfluxDB 1.x
// does the N greatest (least) values of the field in each bucket of
// GROUP BY time(), or of the range without it, each at its point's time:
// of equal values the earliest, the rows of a bucket in time order.
// Buckets without a value have no row. The values are read from the
// group's points, series by series, and held: at most maxGroupPoints of
// a group.

// topValues answers a SELECT of top(f, N) or bottom(f, N) alone.
func (x *executor) topValues(ctx context.Context, st *iql.SelectStatement, p *plan, c aggColumn, starts []time.Time, emit func(api.InfluxQLSeries) error) error {
	type point struct {
		t      time.Time
		v      any
		f      float64
		series string
	}
	for _, g := range p.groups {
		slots := make([][]point, len(starts))
		n := 0
		err := x.eachPoint(ctx, p, g, []string{c.field}, func(ev event.Event) {
			v, ok := ev.Fields[c.field]
			if !ok {
				return
			}
			f, ok := toFloat(v)
			i := slotOf(p, starts, ev.Time)
			if !ok || i < 0 {
				return
			}
			slots[i] = append(slots[i], point{t: ev.Time, v: v, f: f, series: ev.Series})
			n++
		})
		if err != nil {
			return err
		}
		if n > maxGroupPoints {
			return fmt.Errorf("%d values of a group for %s(), over the limit of %d: narrow the range or GROUP BY the tags", n, c.fn, maxGroupPoints)
		}
		byTime := func(a, b point) int {
			if c := a.t.Compare(b.t); c != 0 {
				return c
			}
			return cmpString(a.series, b.series)
		}
		var rows [][]any
		for _, pts := range slots {
			slices.SortFunc(pts, func(a, b point) int {
				if a.f != b.f {
					if (a.f > b.f) == (c.fn == "top") {
						return -1
					}
					return 1
				}
				return byTime(a, b)
			})
			pts = pts[:min(len(pts), c.window)]
			slices.SortFunc(pts, byTime)
			for _, pt := range pts {
				rows = append(rows, []any{x.timeValue(pt.t, p.loc), pt.v})
			}
		}
		if err := emitColumn(st, p, g.tags, c.name, rows, emit); err != nil {
			return err
		}
	}
	return nil
}

// emitColumn answers a group of a function that picks points rather
// than one value a bucket (top, bottom, distinct, elapsed): its rows of
// time and one column, in the statement's order, cut to its OFFSET and
// LIMIT; a group left without rows answers nothing.
func emitColumn(st *iql.SelectStatement, p *plan, tags map[string]string, column string, rows [][]any, emit func(api.InfluxQLSeries) error) error {
	if p.desc {
		slices.Reverse(rows)
	}
	rows = cut(rows, st.Offset, st.Limit)
	if len(rows) == 0 {
		return nil
	}
	return emit(api.InfluxQLSeries{Name: p.table, Tags: tags, Columns: []string{"time", column}, Values: rows})
}
