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

// # top(f, N) and bottom(f, N)
//
// top(f, N) and bottom(f, N) answer as InfluxDB 1.x does the N greatest
// (least) values of the field in each bucket of GROUP BY time(), or of
// the range without it, each at its point's time: of equal values the
// earliest, the rows of a bucket in time order (under ORDER BY time DESC
// too, which puts the buckets newest first). Buckets without a value
// have no row. top(f, tag, …, N) takes the greatest value of each
// distinct value of the tags (the earliest of equal ones), then the N
// greatest of those, and answers the tags as columns after the value. Fields
// and tags beside it (SELECT top(f, 2), host, other) are the picked
// point's, null where it has none (a tag a series lacks is null here).
// Other functions beside it are refused with InfluxDB's error. The values
// are read from the group's points, series by series, and held: at most
// maxGroupPoints of a group.

// parseTop reads top(f[, tag, …], N) and bottom(f[, tag, …], N).
func parseTop(call *iql.Call, c aggColumn) (aggColumn, error) {
	ref, ok := call.Args[0].(*iql.VarRef)
	n, isInt := call.Args[len(call.Args)-1].(*iql.IntegerLiteral)
	if len(call.Args) < 2 || !ok || !isInt || n.Val < 1 {
		return c, fmt.Errorf("%s(): %w but as %s(field[, tag, …], N), N at least 1", call.Name, ErrUnsupported, call.Name)
	}
	var by []string
	for _, a := range call.Args[1 : len(call.Args)-1] {
		t, ok := a.(*iql.VarRef)
		if !ok {
			return c, fmt.Errorf("only fields or tags are allowed in %s(), found %s", call.Name, a)
		}
		by = append(by, t.Val)
	}
	c.field, c.window, c.by = ref.Val, int(n.Val), strings.Join(by, ",")
	return c, nil
}

// topValues answers a SELECT of top(f, N) or bottom(f, N), and the
// fields and tags beside it (out, nil when there are none).
func (x *executor) topValues(ctx context.Context, st *iql.SelectStatement, p *plan, c aggColumn, out []outColumn, starts []time.Time, emit func(api.InfluxQLSeries) error) error {
	type point struct {
		t      time.Time
		v      any
		f      float64
		series string
		ev     event.Event
	}
	var by []string
	if c.by != "" {
		by = strings.Split(c.by, ",")
	}
	if st.Limit > 0 && c.window > st.Limit {
		// InfluxDB's refusal, word for word.
		return fmt.Errorf("limit (%d) in %s function can not be larger than the LIMIT (%d) in the select statement", c.window, c.fn, st.Limit)
	}
	if slices.ContainsFunc(out, func(o outColumn) bool { return o.expr != nil }) {
		return fmt.Errorf("math of %s() is %w", c.fn, ErrUnsupported)
	}
	// The columns as InfluxQL names them: the tags of top(f, tag, N)
	// after its value.
	columns := append([]string{"time"}, columnNames(st.Fields)...)
	// valueOf is a field or tag of the picked point, nil where it has none.
	valueOf := func(ev event.Event, k string) any {
		if v, ok := ev.Fields[k]; ok && !p.isTag(k) {
			return v
		}
		if t := Tags(ev.Series)[k]; t != "" && p.isTag(k) {
			return t
		}
		if v, ok := ev.Fields[k]; ok {
			return v
		}
		return nil
	}
	var fields []string
	if out != nil || len(by) > 0 {
		fields = nil // every field: those beside are the point's
	} else {
		fields = []string{c.field}
	}
	for _, g := range p.groups {
		slots := make([][]point, len(starts))
		n := 0
		err := x.eachPoint(ctx, p, g, fields, func(ev event.Event) {
			v, ok := ev.Fields[c.field]
			if !ok {
				return
			}
			f, ok := toFloat(v)
			i := slotOf(p, starts, ev.Time)
			if !ok || i < 0 {
				return
			}
			slots[i] = append(slots[i], point{t: ev.Time, v: v, f: f, series: ev.Series, ev: ev})
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
		best := func(a, b point) int {
			if a.f != b.f {
				if (a.f > b.f) == (c.fn == "top") {
					return -1
				}
				return 1
			}
			return byTime(a, b)
		}
		var rows [][]any
		for _, pts := range slots {
			slices.SortFunc(pts, best)
			if len(by) > 0 {
				// The best point of each value of the tags.
				seen := map[string]bool{}
				pts = slices.DeleteFunc(pts, func(pt point) bool {
					var k strings.Builder
					for _, t := range by {
						fmt.Fprint(&k, valueOf(pt.ev, t), "\x00")
					}
					if seen[k.String()] {
						return true
					}
					seen[k.String()] = true
					return false
				})
			}
			pts = pts[:min(len(pts), c.window)]
			slices.SortFunc(pts, byTime)
			if p.desc {
				// A bucket's rows stay in time order under ORDER BY
				// time DESC, which orders the buckets (emitRows).
				slices.Reverse(pts)
			}
			for _, pt := range pts {
				row := []any{x.timeValue(pt.t, p.loc), pt.v}
				for _, t := range by {
					row = append(row, valueOf(pt.ev, t))
				}
				for _, o := range out {
					if o.ref != "" {
						row = append(row, valueOf(pt.ev, o.ref))
					}
				}
				rows = append(rows, row)
			}
		}
		if err := emitRows(st, p, g.tags, columns, rows, emit); err != nil {
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
	return emitRows(st, p, tags, []string{"time", column}, rows, emit)
}

// emitRows is emitColumn of rows of several columns.
func emitRows(st *iql.SelectStatement, p *plan, tags map[string]string, columns []string, rows [][]any, emit func(api.InfluxQLSeries) error) error {
	if p.desc {
		slices.Reverse(rows)
	}
	rows = cut(rows, st.Offset, st.Limit)
	if len(rows) == 0 {
		return nil
	}
	return emit(api.InfluxQLSeries{Name: p.table, Tags: tags, Columns: columns, Values: rows})
}
