package influxql

import (
	"context"
	"fmt"
	"slices"
	"time"

	iql "github.com/influxdata/influxql"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
)

// # Fields beside a selector
//
// A SELECT of one selector (first, last, min, max) and fields or tags
// (SELECT max(v), host, other) answers, as InfluxDB does, the selected
// point's fields and tags beside its value: of each bucket of GROUP BY
// time() (at the bucket's start, empty buckets filled as fill() says), or
// without it, at the point's time. The point is picked from the group's
// points, read series by series (selector.go's reads): max the greatest
// value, min the least, the earliest of equal values; first and last
// the earliest and the latest, the greatest of one time.

// selectorWithFields answers a SELECT of one selector and fields.
func (x *executor) selectorWithFields(ctx context.Context, st *iql.SelectStatement, p *plan, cols []aggColumn, out []outColumn, starts []time.Time, w windows, emit func(api.InfluxQLSeries) error) error {
	if !slices.ContainsFunc(cols, aggColumn.selector) {
		// InfluxDB's refusal, word for word.
		return fmt.Errorf("mixing aggregate and non-aggregate queries is not supported")
	}
	if len(cols) != 1 || cols[0].outer != "" || !slices.Contains([]string{"first", "last", "min", "max"}, cols[0].fn) ||
		slices.ContainsFunc(out, func(o outColumn) bool { return o.expr != nil }) {
		return fmt.Errorf("fields beside aggregates are %w but beside one selector (first, last, min, max)", ErrUnsupported)
	}
	c := cols[0]
	fillCols := make([]aggColumn, len(out))
	for i, o := range out {
		fillCols[i] = aggColumn{fn: "aux"}
		if o.ref == "" {
			fillCols[i] = c
		}
	}
	type picked struct {
		pick
		ev event.Event
	}
	for _, g := range p.groups {
		picks := make([]picked, len(starts))
		err := x.eachPoint(ctx, p, g, nil, func(ev event.Event) {
			v, ok := ev.Fields[c.field]
			if !ok {
				return
			}
			i := slotOf(p, starts, ev.Time)
			if i >= 0 && picks[i].better(c.fn, ev.Time, v) {
				picks[i] = picked{pick{t: ev.Time, v: v, ok: true}, ev}
			}
		})
		if err != nil {
			return err
		}
		values := make([][]any, len(starts))
		events := make([]int64, len(starts))
		exists := false
		for i, pk := range picks {
			row := make([]any, len(out))
			values[i] = row
			if !pk.ok {
				continue
			}
			exists, events[i] = true, 1
			for j, o := range out {
				if o.ref == "" {
					row[j] = pk.v
					continue
				}
				v, ok := pk.ev.Fields[o.ref]
				if !ok && p.isTag(o.ref) {
					if t, ok := Tags(pk.ev.Series)[o.ref]; ok {
						v = t
					}
				}
				row[j] = v
			}
		}
		if !exists {
			continue
		}
		times := slices.Clone(starts)
		if p.interval == 0 {
			times[0] = picks[0].t
		} else {
			times, values, events = w.rows(starts, values, events, p.from, p.to, p.desc)
		}
		rows := cut(x.finish(st, fillCols, times, values, events, p.desc), st.Offset, st.Limit)
		if len(rows) == 0 {
			continue
		}
		s := api.InfluxQLSeries{Name: p.table, Tags: g.tags, Columns: []string{"time"}, Values: make([][]any, 0, len(rows))}
		for _, o := range out {
			s.Columns = append(s.Columns, o.name)
		}
		for _, r := range rows {
			s.Values = append(s.Values, append([]any{x.timeValue(r.t, p.loc)}, r.values...))
		}
		if err := emit(s); err != nil {
			return err
		}
	}
	return nil
}

// slotOf is the index in starts of the bucket that holds t, -1 before
// the first; 0 without GROUP BY time().
func slotOf(p *plan, starts []time.Time, t time.Time) int {
	if p.interval == 0 {
		return 0
	}
	i, found := slices.BinarySearchFunc(starts, t, func(s, t time.Time) int { return s.Compare(t) })
	if found {
		return i
	}
	return i - 1
}

// eachPoint gives fn each point of the group's series in the plan's
// range that the WHERE keeps, series by series, read in pages; fields
// nil reads every field.
func (x *executor) eachPoint(ctx context.Context, p *plan, g group, fields []string, fn func(event.Event)) error {
	if p.rows != nil {
		return p.rows.each(ctx, p, g, fn)
	}
	if fields != nil && p.rowCond != nil {
		// The fields the condition on each point reads (rowcond.go).
		fields = append(slices.Clip(fields), refs(p.rowCond)...)
	}
	series := g.series
	if g.whole {
		series = []string{""}
	}
	for _, s := range series {
		if err := ctx.Err(); err != nil {
			return err
		}
		tagless := s == "" && !g.whole // the engine reads every series for "" (tagless.go)
		q := engine.Query{Table: p.table, Series: s, From: p.from, To: p.to, Fields: fields, Filter: p.filter, Limit: pageSize}
		for {
			page, err := x.eng.Query(ctx, x.tenant, q)
			if err != nil {
				return &EngineError{Err: err}
			}
			for _, ev := range page.Events {
				if (tagless && ev.Series != "") || !p.matchesRow(ev) {
					continue
				}
				fn(ev)
			}
			if page.NextCursor == "" {
				break
			}
			q.Cursor = page.NextCursor
		}
	}
	return nil
}
