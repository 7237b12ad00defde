package influxql

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	iql "github.com/influxdata/influxql"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
)

// columnNames names the fields of a SELECT but time as InfluxDB does:
// the aliases, then each field's name, a name already taken followed by
// _1, _2, … (percentile, percentile_1).
func columnNames(fields iql.Fields) []string {
	var keep iql.Fields
	for _, f := range fields {
		if r, ok := f.Expr.(*iql.VarRef); ok && r.Val == "time" {
			continue
		}
		keep = append(keep, f)
	}
	return (&iql.SelectStatement{Fields: keep, OmitTime: true}).ColumnNames()
}

// pageSize is the events one engine read asks for, and tiePage those
// it asks for past the events wanted, for those of the same time.
const tiePage = 16

// pageSize is the events one engine read asks for.
const pageSize = 1000

// raw answers a SELECT of fields, without aggregates: the events of each
// group's series, merged in time order; each group's series is given to
// emit once built, before the next group is read.
func (x *executor) raw(ctx context.Context, st *iql.SelectStatement, p *plan, emit func(api.InfluxQLSeries) error) error {
	var names, fields []string
	var read []string           // the fields the columns read
	var exprAt map[int]iql.Expr // columns of math, by index
	wildcard := false
	for _, f := range st.Fields {
		switch e := f.Expr.(type) {
		case *iql.VarRef:
			if e.Val == "time" {
				continue
			}
			names = append(names, f.Name())
			fields = append(fields, e.Val)
		case *iql.Wildcard:
			wildcard = true
		case *iql.BinaryExpr, *iql.ParenExpr:
			// Math of fields (math.go): its column reads no field of
			// its own name.
			if exprAt == nil {
				exprAt = map[int]iql.Expr{}
			}
			exprAt[len(fields)] = f.Expr
			fields = append(fields, "")
			read = append(read, refs(f.Expr)...)
		default:
			return fmt.Errorf("%s in a SELECT without an aggregate is %w: select fields, *, math of fields, or aggregates", f.Expr, ErrUnsupported)
		}
	}
	if wildcard && exprAt != nil {
		return fmt.Errorf("* beside math of fields is %w", ErrUnsupported)
	}
	for _, f := range fields {
		if f != "" {
			read = append(read, f)
		}
	}
	names = columnNames(st.Fields)
	// * is every field and tag of the measurement, as InfluxDB has it:
	// those the events read have, and those the table's latest events
	// and its series index know.
	// Of several measurements, each has the columns of all, as
	// InfluxDB answers them (nulls where it has none).
	var known []string
	if wildcard {
		tables := p.statement
		if len(tables) == 0 {
			tables = []engine.LogicalTable{p.logical}
		}
		for _, t := range tables {
			types, keys, err := x.fieldTypes(ctx, t)
			if err != nil {
				return err
			}
			known = append(append(known, slices.Collect(maps.Keys(types))...), keys...)
		}
	}
	if p.empty() {
		return nil
	}
	need := rawNeed(st, x.opts.MaxRows)
	q := engine.Query{Table: p.table, From: p.from, To: p.to, Desc: p.desc, Filter: p.filter}
	if !wildcard {
		q.Fields = read
	}
	// A row holds one of the fields selected, as in InfluxDB: a tag
	// selected beside them (which line protocol writes keep as a field
	// too) does not make a row.
	var valued []string
	for _, f := range read {
		if _, tag := slices.BinarySearch(p.tagKeys, f); !tag {
			valued = append(valued, f)
		}
	}
	keep := func(ev event.Event) bool {
		return (wildcard || slices.ContainsFunc(valued, func(f string) bool { _, ok := ev.Fields[f]; return ok })) &&
			p.matchesRow(ev)
	}
	for _, g := range p.groups {
		if err := ctx.Err(); err != nil {
			return err
		}
		var events []event.Event
		// Events of one time come in the order of their series, as
		// InfluxDB's series keys sort (reversed, newest first).
		order := func(a, b event.Event) int {
			c := a.Time.Compare(b.Time)
			if c == 0 {
				c = strings.Compare(a.Series, b.Series)
			}
			if p.desc {
				c = -c
			}
			return c
		}
		// OFFSET's events, once skipped as they were read.
		skipped := 0
		switch {
		case g.whole:
			got, err := x.read(ctx, q, need, keep)
			if err != nil {
				return err
			}
			slices.SortStableFunc(got, order)
			events = got[:min(len(got), need)]
		case len(g.series) == 1 && g.series[0] != "":
			// One series comes in its order: OFFSET's events are
			// dropped as they are read, not held.
			q := q
			q.Series = g.series[0]
			got, err := x.readPast(ctx, q, st.Offset, need-st.Offset, keep)
			if err != nil {
				return err
			}
			events, skipped = got, st.Offset
		default:
			// Each series' first events are merged into the answer so
			// far, which keeps only its first need: memory holds two
			// answers, however many series the group has.
			for _, s := range g.series {
				if err := ctx.Err(); err != nil {
					return err
				}
				q := q
				q.Series = s
				var got []event.Event
				var err error
				if s == "" {
					got, err = x.readTagless(ctx, q, need, keep)
				} else {
					got, err = x.read(ctx, q, need, keep)
				}
				if err != nil {
					return err
				}
				if len(events) == 0 {
					events = got
					continue // in order: one series, a read in time order
				}
				events = append(events, got...)
				slices.SortStableFunc(events, order)
				if len(events) > need {
					events = events[:need]
				}
			}
		}
		events = cut(events, st.Offset-skipped, st.Limit)
		partial := len(events) > x.opts.MaxRows
		if partial {
			events = events[:x.opts.MaxRows]
		}
		if len(events) == 0 {
			continue
		}
		cols, refs := names, fields
		if wildcard {
			seen := map[string]bool{}
			for _, k := range known {
				if _, grouped := g.tags[k]; !grouped {
					seen[k] = true
				}
			}
			for _, ev := range events {
				for k := range ev.Fields {
					if _, grouped := g.tags[k]; !grouped {
						seen[k] = true
					}
				}
			}
			refs, cols = expandWildcard(st.Fields, slices.Sorted(maps.Keys(seen)))
		}
		s := api.InfluxQLSeries{Name: p.table, Tags: g.tags, Columns: append([]string{"time"}, cols...), Partial: partial,
			Values: make([][]any, 0, len(events))}
		tagsOf := map[string]map[string]string{}
		for _, ev := range events {
			r := x.row(ev, refs, p, tagsOf)
			for i, e := range exprAt {
				r[1+i] = evalMath(e, ev)
			}
			s.Values = append(s.Values, r)
		}
		if err := emit(s); err != nil {
			return err
		}
	}
	return nil
}

// expandWildcard returns the columns of a SELECT of * and maybe fields
// (SELECT value, *): each field in its place, * as every key of keys,
// and their names as InfluxDB gives them (value, host, value_1).
func expandWildcard(fields iql.Fields, keys []string) (refs, names []string) {
	if len(fields) == 1 {
		return keys, keys
	}
	var expanded iql.Fields
	for _, f := range fields {
		switch e := f.Expr.(type) {
		case *iql.Wildcard:
			for _, k := range keys {
				expanded = append(expanded, &iql.Field{Expr: &iql.VarRef{Val: k}})
				refs = append(refs, k)
			}
		case *iql.VarRef:
			if e.Val == "time" {
				continue
			}
			expanded = append(expanded, f)
			refs = append(refs, e.Val)
		}
	}
	return refs, columnNames(expanded)
}

// row is the answer's row of one event: its time, then the value of each
// of refs, a tag the event does not keep as a field read from its
// series' name (tagsOf keeps those read).
func (x *executor) row(ev event.Event, refs []string, p *plan, tagsOf map[string]map[string]string) []any {
	row := make([]any, 1+len(refs))
	row[0] = x.timeValue(ev.Time, p.loc)
	for i, f := range refs {
		v, ok := ev.Fields[f]
		if !ok && p.isTag(f) {
			// A tag the events do not keep as a field: the series
			// "series" of a name that is not a tag set.
			tags, ok := tagsOf[ev.Series]
			if !ok {
				tags = Tags(ev.Series)
				tagsOf[ev.Series] = tags
			}
			if t, ok := tags[f]; ok {
				v = t
			}
		}
		row[1+i] = v
	}
	return row
}

// readPast reads the events of one series that keep keeps past its
// first skip, at most n, page by page: those skipped are dropped as they
// are read, not held.
func (x *executor) readPast(ctx context.Context, q engine.Query, skip, n int, keep func(event.Event) bool) ([]event.Event, error) {
	var out []event.Event
	for len(out) < n {
		q.Limit = pageSize
		if skip == 0 {
			q.Limit = min(pageSize, n-len(out))
		}
		page, err := x.eng.Query(ctx, x.tenant, q)
		if err != nil {
			return nil, &EngineError{Err: err}
		}
		for _, ev := range page.Events {
			switch {
			case len(out) >= n:
				return out, nil
			case !keep(ev):
			case skip > 0:
				skip--
			default:
				out = append(out, ev)
			}
		}
		if page.NextCursor == "" {
			break
		}
		q.Cursor = page.NextCursor
	}
	return out, nil
}

// rawNeed returns the rows a raw SELECT reads of each group: OFFSET's,
// then the LIMIT or one more than maxRows, saturated at the largest int.
func rawNeed(st *iql.SelectStatement, maxRows int) int {
	need := addSat(st.Offset, maxRows+1)
	if st.Limit > 0 {
		need = min(need, addSat(st.Offset, st.Limit))
	}
	return need
}

// read reads the first n events of a query that keep keeps, page by
// page, and, of a read of every series, those after of the same time as
// the n-th, so that the caller can order the events of one time by series
// and keep the first n; at most n + pageSize. The events of one series
// come in their order: n of them.
func (x *executor) read(ctx context.Context, q engine.Query, n int, keep func(event.Event) bool) ([]event.Event, error) {
	var out []event.Event
	most := addSat(n, pageSize)
	if q.Series != "" {
		most = n
	}
	for len(out) < most {
		q.Limit = tiePage
		if len(out) < n {
			q.Limit = min(pageSize, n-len(out))
		}
		page, err := x.eng.Query(ctx, x.tenant, q)
		if err != nil {
			return nil, &EngineError{Err: err}
		}
		for _, ev := range page.Events {
			if len(out) >= n && !ev.Time.Equal(out[n-1].Time) {
				return out, nil
			}
			if keep(ev) {
				out = append(out, ev)
			}
		}
		if page.NextCursor == "" {
			break
		}
		q.Cursor = page.NextCursor
	}
	return out, nil
}

// addSat returns a + b of two counts, at least 0: the largest int when
// the sum overflows.
func addSat(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}
