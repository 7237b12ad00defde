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

// # distinct(f)
//
// distinct(f) answers, as InfluxDB 1.x does, a row for each distinct
// value of the field in each bucket of GROUP BY time() (at the bucket's
// start; without it, at the start of the range), in the order the values
// first appear: by time, then by series. Buckets without a value have no
// row, whatever fill() says. The values are read from the group's
// points, series by series, and held: at most maxGroupPoints distinct
// values of a group.

// distinctValues answers a SELECT of distinct(f) alone.
func (x *executor) distinctValues(ctx context.Context, st *iql.SelectStatement, p *plan, c aggColumn, starts []time.Time, emit func(api.InfluxQLSeries) error) error {
	type seen struct {
		v      any
		t      time.Time
		series string
	}
	for _, g := range p.groups {
		slots := make([]map[any]seen, len(starts))
		n := 0
		err := x.eachPoint(ctx, p, g, []string{c.field}, func(ev event.Event) {
			v, ok := ev.Fields[c.field]
			if !ok {
				return
			}
			i := slotOf(p, starts, ev.Time)
			if i < 0 {
				return
			}
			if slots[i] == nil {
				slots[i] = map[any]seen{}
			}
			key := v
			if f, ok := toFloat(v); ok {
				key = f
			}
			old, ok := slots[i][key]
			if !ok {
				n++
			}
			if !ok || ev.Time.Before(old.t) || (ev.Time.Equal(old.t) && ev.Series < old.series) {
				slots[i][key] = seen{v: v, t: ev.Time, series: ev.Series}
			}
		})
		if err != nil {
			return err
		}
		if n > maxGroupPoints {
			return fmt.Errorf("%d distinct values of a group, over the limit of %d: narrow the range or GROUP BY the tags", n, maxGroupPoints)
		}
		var rows [][]any
		for i, m := range slots {
			vals := make([]seen, 0, len(m))
			for _, s := range m {
				vals = append(vals, s)
			}
			slices.SortFunc(vals, func(a, b seen) int {
				if c := a.t.Compare(b.t); c != 0 {
					return c
				}
				return cmpString(a.series, b.series)
			})
			at := starts[i]
			if p.interval == 0 {
				at = time.Unix(0, 0)
				if p.bounded {
					at = p.from
				}
			}
			for _, s := range vals {
				rows = append(rows, []any{x.timeValue(at, p.loc), s.v})
			}
		}
		if err := emitColumn(st, p, g.tags, c.name, rows, emit); err != nil {
			return err
		}
	}
	return nil
}
