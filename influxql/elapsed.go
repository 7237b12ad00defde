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

// # elapsed(f[, unit])
//
// elapsed(f[, unit]), alone in a SELECT without GROUP BY time(), answers
// as InfluxDB 1.x does the time between each point of the field and the
// one before it, in units (nanoseconds by default), at the later point's
// time: the points of a group's series merged in time order (then by
// series), so two series' points of one time are 0 apart. The points'
// times are read series by series and held: at most maxGroupPoints of a
// group.

// elapsedValues answers a SELECT of elapsed(f[, unit]) alone.
func (x *executor) elapsedValues(ctx context.Context, st *iql.SelectStatement, p *plan, c aggColumn, emit func(api.InfluxQLSeries) error) error {
	if p.interval > 0 {
		return fmt.Errorf("aggregate function required inside the call to elapsed")
	}
	type point struct {
		t      time.Time
		series string
	}
	for _, g := range p.groups {
		var pts []point
		err := x.eachPoint(ctx, p, g, []string{c.field}, func(ev event.Event) {
			if _, ok := ev.Fields[c.field]; ok && len(pts) <= maxGroupPoints {
				pts = append(pts, point{t: ev.Time, series: ev.Series})
			}
		})
		if err != nil {
			return err
		}
		if len(pts) > maxGroupPoints {
			return fmt.Errorf("more than %d points of a group for elapsed(), over the limit: narrow the range or GROUP BY the tags", maxGroupPoints)
		}
		slices.SortFunc(pts, func(a, b point) int {
			if c := a.t.Compare(b.t); c != 0 {
				return c
			}
			return cmpString(a.series, b.series)
		})
		var rows [][]any
		for i := 1; i < len(pts); i++ {
			rows = append(rows, []any{x.timeValue(pts[i].t, p.loc), int64(pts[i].t.Sub(pts[i-1].t) / c.unit)})
		}
		if err := emitColumn(st, p, g.tags, c.name, rows, emit); err != nil {
			return err
		}
	}
	return nil
}
