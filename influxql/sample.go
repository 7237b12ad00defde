package influxql

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	iql "github.com/influxdata/influxql"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/event"
)

// # sample(f, N)
//
// sample(f, N), alone in a SELECT, answers as InfluxDB 1.x does N points
// of the field picked at random (a reservoir sample) of each bucket of
// GROUP BY time(), or of the range without it, each at its point's time,
// the rows of a bucket in time order; a bucket of at most N points
// answers all of them. Which points are picked is random, on InfluxDB
// as here: two answers agree in the number of rows of each bucket, not
// in the rows (docs/influxql.md, Differences). The points are read from
// the group's series, series by series; at most maxGroupPoints of a
// group are held.

// parseSample reads sample(f, N).
func parseSample(call *iql.Call, c aggColumn) (aggColumn, error) {
	ref, ok := call.Args[0].(*iql.VarRef)
	if len(call.Args) != 2 || !ok {
		return c, fmt.Errorf("sample(): %w but as sample(field, N)", ErrUnsupported)
	}
	n, ok := call.Args[1].(*iql.IntegerLiteral)
	if !ok || n.Val < 1 {
		// InfluxDB's refusal, word for word (of an integer N).
		return c, fmt.Errorf("sample window must be greater than 1, got %s", call.Args[1])
	}
	c.field, c.window = ref.Val, int(n.Val)
	return c, nil
}

// sampleValues answers a SELECT of sample(f, N) alone.
func (x *executor) sampleValues(ctx context.Context, st *iql.SelectStatement, p *plan, c aggColumn, starts []time.Time, emit func(api.InfluxQLSeries) error) error {
	for _, g := range p.groups {
		slots := make([][]point, len(starts))
		seen := make([]int, len(starts))
		n := 0
		err := x.eachPoint(ctx, p, g, []string{c.field}, func(ev event.Event) {
			v, ok := ev.Fields[c.field]
			i := slotOf(p, starts, ev.Time)
			if !ok || i < 0 {
				return
			}
			seen[i]++
			pt := point{t: ev.Time, v: v, series: ev.Series}
			if len(slots[i]) < c.window {
				slots[i] = append(slots[i], pt)
				n++
			} else if k := rand.IntN(seen[i]); k < c.window {
				slots[i][k] = pt
			}
		})
		if err != nil {
			return err
		}
		if n > maxGroupPoints {
			return fmt.Errorf("%d values of a group for sample(), over the limit of %d: narrow the range or GROUP BY the tags", n, maxGroupPoints)
		}
		var rows [][]any
		for _, pts := range slots {
			slices.SortFunc(pts, func(a, b point) int {
				if c := a.t.Compare(b.t); c != 0 {
					return c
				}
				return strings.Compare(a.series, b.series)
			})
			if p.desc {
				// A bucket's rows stay in time order under ORDER BY
				// time DESC, which orders the buckets (emitRows).
				slices.Reverse(pts)
			}
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
