package influxql

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	iql "github.com/influxdata/influxql"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/event"
)

// # Subqueries
//
// SELECT … FROM (SELECT …) answers, as InfluxDB 1.x does, the outer
// statement over the inner one's answer: each series of the inner answer
// is a series of the outer's source, its tags those the inner grouped by
// (GROUP BY host passes host through to the outer, which may group by
// it or compare it), each row a point at its time whose fields are the
// row's columns (null ones absent: the empty buckets fill(null) answers
// are no points). The outer statement's time range is given to the inner
// one, ANDed with its own, so that SELECT mean(max) FROM (SELECT max(v)
// FROM m GROUP BY time(1m)) WHERE time > now() - 1h reads the hour; the
// rest of the outer WHERE is evaluated on each point, tags and fields
// alike (rowcond.go). The outer's aggregates are computed from those
// points (points.go), and every function, fill, transform and clause of
// an outer SELECT reads them as it reads a measurement's; a raw outer
// SELECT answers the points, the series merged by time. The outer
// answer's series are named after the inner's measurements. The inner
// answer is held whole while the outer is answered: at most
// maxGroupPoints rows. A subquery beside a measurement in FROM is
// refused.

// subRows is an inner statement's answer as the points of an outer
// statement's source: by series, named by their tags, each in time
// order.
type subRows struct {
	points map[string][]event.Event
	// blocked is set once a group of an outer aggregate without GROUP
	// BY time() has a point before the outer's start (see subRange).
	blocked bool
	// raw is of a raw outer SELECT, which reads every row.
	raw bool
}

// each gives fn the points of the group's series that the outer reads
// (subRange) and its condition keeps, series by series.
func (r *subRows) each(ctx context.Context, p *plan, g group, fn func(event.Event)) error {
	from, to, whole := r.subRange(p)
	if whole && r.blocked {
		return nil
	}
	for _, s := range g.series {
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, ev := range r.points[s] {
			if whole && ev.Time.Before(from) && p.matchesRow(ev) {
				r.blocked = true
				return nil
			}
		}
	}
	for _, s := range g.series {
		for _, ev := range r.points[s] {
			if ev.Time.Before(from) || ev.Time.After(to) || !p.matchesRow(ev) {
				continue
			}
			fn(ev)
		}
	}
	return nil
}

// subRange is the range of the inner answer's points an outer statement
// reads, as InfluxDB reads them: the inner answer's rows are at the
// starts of its buckets, which may be before the outer's range that
// bounded the inner. A raw outer SELECT reads every row; one of GROUP
// BY time() the rows from the start of its first bucket; one of
// aggregates without GROUP BY time() reads its range (whole), and, as
// InfluxDB's reduction stops at a point before its window, answers
// nothing from the first group that has a point before its start on.
func (r *subRows) subRange(p *plan) (from, to time.Time, whole bool) {
	switch {
	case r.raw:
		return time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64), false
	case p.interval > 0:
		from, _ = windows{interval: p.interval, offset: p.offset, loc: p.loc}.of(p.from)
		return from, p.to, false
	}
	return p.from, p.to, true
}

// subquery returns the subquery of a statement's FROM, nil when it has
// none.
func subquery(st *iql.SelectStatement) *iql.SubQuery {
	for _, s := range st.Sources {
		if sq, ok := s.(*iql.SubQuery); ok {
			return sq
		}
	}
	return nil
}

// maxSubqueryRows bounds the rows of an inner statement's answer held.
const maxSubqueryRows = maxGroupPoints

// subquerySelect answers a SELECT whose FROM is a subquery.
func (x *executor) subquerySelect(ctx context.Context, st *iql.SelectStatement, sq *iql.SubQuery, emit func(api.InfluxQLSeries) error) error {
	if len(st.Sources) != 1 {
		return fmt.Errorf("a subquery beside other sources in FROM is %w", ErrUnsupported)
	}
	// The outer's clauses, read as a statement's are (its tables aside).
	outer := *st
	outer.Sources = nil
	sel, err := x.selection(ctx, &outer)
	if err != nil {
		return err
	}
	inner := sq.Statement.Clone()
	if inner.Fill == iql.NullFill {
		// An empty bucket of the inner answer is no point of the
		// outer's, a count's 0 included: fill(null)'s rows are left out.
		inner.Fill = iql.NoFill
	}
	if bounds := timeCondition(sel.tr); bounds != nil {
		if inner.Condition == nil {
			inner.Condition = bounds
		} else {
			inner.Condition = &iql.BinaryExpr{Op: iql.AND, LHS: &iql.ParenExpr{Expr: inner.Condition}, RHS: bounds}
		}
	}
	in := *x
	in.opts.Epoch = "ns"
	var names []string
	bySource := map[string]*subSource{}
	n := 0
	err = in.selectStatement(ctx, inner, func(s api.InfluxQLSeries) error {
		n += len(s.Values)
		if n > maxSubqueryRows {
			return fmt.Errorf("the subquery answers more than %d rows, over the limit of what an outer statement reads: narrow its range or widen its GROUP BY time()", maxSubqueryRows)
		}
		src := bySource[s.Name]
		if src == nil {
			src = &subSource{rows: &subRows{points: map[string][]event.Event{}, raw: st.IsRawQuery}, tags: map[string]map[string]string{}}
			bySource[s.Name] = src
			names = append(names, s.Name)
		}
		src.add(s)
		return nil
	})
	if err != nil {
		return err
	}
	slices.Sort(names)
	if !st.TimeAscending() {
		slices.Reverse(names)
	}
	for _, name := range names {
		p, err := bySource[name].plan(ctx, st, sel, name, x.opts.Now)
		if err != nil {
			return err
		}
		if st.IsRawQuery {
			err = x.rawOfRows(ctx, st, p, emit)
		} else {
			err = x.aggregate(ctx, st, p, emit)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// timeCondition is a time range as a condition, nil for one without
// bounds.
func timeCondition(tr iql.TimeRange) iql.Expr {
	var cond iql.Expr
	add := func(op iql.Token, t time.Time) {
		e := &iql.BinaryExpr{Op: op, LHS: &iql.VarRef{Val: "time"}, RHS: &iql.IntegerLiteral{Val: t.UnixNano()}}
		if cond == nil {
			cond = e
		} else {
			cond = &iql.BinaryExpr{Op: iql.AND, LHS: cond, RHS: e}
		}
	}
	if !tr.Min.IsZero() {
		add(iql.GTE, tr.Min)
	}
	if !tr.Max.IsZero() {
		add(iql.LTE, tr.Max)
	}
	return cond
}

// subSource is the inner answer's series of one measurement.
type subSource struct {
	rows   *subRows
	tags   map[string]map[string]string // by series
	order  []string                     // the series, as they came
	first  time.Time
	last   time.Time
	points int
}

// add takes an inner series, its times integers of nanoseconds.
func (s *subSource) add(series api.InfluxQLSeries) {
	name := seriesName(series.Tags)
	if _, ok := s.tags[name]; !ok {
		s.tags[name] = series.Tags
		s.order = append(s.order, name)
	}
	evs := s.rows.points[name]
	for _, row := range series.Values {
		ns, ok := row[0].(int64)
		if !ok {
			continue
		}
		ev := event.Event{Time: time.Unix(0, ns).UTC(), Series: name, Fields: make(map[string]any, len(row)-1)}
		for i, v := range row[1:] {
			if v != nil && i+1 < len(series.Columns) {
				ev.Fields[series.Columns[i+1]] = v
			}
		}
		if len(ev.Fields) == 0 {
			continue
		}
		if s.points == 0 || ev.Time.Before(s.first) {
			s.first = ev.Time
		}
		if s.points == 0 || ev.Time.After(s.last) {
			s.last = ev.Time
		}
		s.points++
		evs = append(evs, ev)
	}
	slices.SortStableFunc(evs, func(a, b event.Event) int { return a.Time.Compare(b.Time) })
	s.rows.points[name] = evs
}

// seriesName names a series of tags as line protocol writes it (Tags
// reads it back); tags of no value are left out, as a missing tag is "".
func seriesName(tags map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		if tags[k] == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(escapeTag(k))
		b.WriteByte('=')
		b.WriteString(escapeTag(tags[k]))
	}
	return b.String()
}

func escapeTag(s string) string {
	return strings.NewReplacer(",", `\,`, "=", `\=`, " ", `\ `).Replace(s)
}

// plan is what the outer statement reads of the source: its range, its
// groups of the inner series by the outer's GROUP BY, the condition on
// tags picking series and the rest evaluated on each point.
func (s *subSource) plan(ctx context.Context, st *iql.SelectStatement, sel *selection, name string, now time.Time) (*plan, error) {
	keys := map[string]bool{}
	var all []seriesTags
	for _, n := range s.order {
		for k := range s.tags[n] {
			keys[k] = true
		}
		all = append(all, seriesTags{name: n, tags: s.tags[n]})
	}
	p := &plan{table: name, tagKeys: slices.Sorted(maps.Keys(keys)), rows: s.rows,
		loc: sel.loc, desc: !st.TimeAscending(), interval: sel.interval, offset: sel.offset}
	tagCond, fieldCond, rowCond, err := splitCondition(sel.cond, p.isTag)
	if err != nil {
		return nil, err
	}
	p.rowCond = rowCond
	if fieldCond != nil {
		if p.rowCond == nil {
			p.rowCond = fieldCond
		} else {
			p.rowCond = &iql.BinaryExpr{Op: iql.AND, LHS: p.rowCond, RHS: fieldCond}
		}
	}
	p.from, p.to = s.first, s.last
	if !st.IsRawQuery {
		p.from, p.to = time.Unix(0, 0).UTC(), now
	}
	if !sel.tr.Min.IsZero() {
		p.from, p.bounded = sel.tr.Min, true
	}
	if !sel.tr.Max.IsZero() {
		p.to = sel.tr.Max
	}
	if p.interval > 0 && !p.bounded && s.points > 0 {
		// Buckets from the first point's, not from 1970.
		p.from = s.first
	}
	matched, err := matchSeries(ctx, all, tagCond)
	if err != nil {
		return nil, err
	}
	groupBy := sel.groupBy
	if sel.wildcard {
		groupBy = p.tagKeys
	}
	p.groupBy = groupBy
	byName := slices.Sorted(slices.Values(groupBy))
	byKey := map[string]*group{}
	for _, m := range matched {
		tags := make(map[string]string, len(groupBy))
		var b strings.Builder
		for _, k := range byName {
			tags[k] = m.tags[k]
			b.WriteString(m.tags[k])
			b.WriteByte(0)
		}
		g := byKey[b.String()]
		if g == nil {
			g = &group{tags: tags}
			if len(groupBy) == 0 {
				g.tags = nil
			}
			byKey[b.String()] = g
		}
		g.series = append(g.series, m.name)
	}
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		p.groups = append(p.groups, *byKey[k])
	}
	p.groups = cut(p.groups, st.SOffset, st.SLimit)
	if p.desc {
		slices.Reverse(p.groups)
	}
	return p, nil
}

// rawOfRows answers a raw outer SELECT of a subquery: the points of each
// group's series merged by time (of one time, by series), the columns
// selected (fields, tags, *, math of fields), a row for each point that
// has one of the fields selected.
func (x *executor) rawOfRows(ctx context.Context, st *iql.SelectStatement, p *plan, emit func(api.InfluxQLSeries) error) error {
	var cols []string // the fields and tags selected, "" for math
	exprAt := map[int]iql.Expr{}
	wildcard := false
	for _, f := range st.Fields {
		switch e := f.Expr.(type) {
		case *iql.VarRef:
			if e.Val != "time" {
				cols = append(cols, e.Val)
			}
		case *iql.Wildcard:
			wildcard = true
		case *iql.BinaryExpr, *iql.ParenExpr:
			exprAt[len(cols)] = f.Expr
			cols = append(cols, "")
		default:
			return fmt.Errorf("%s in a SELECT without an aggregate is %w: select fields, *, math of fields, or aggregates", f.Expr, ErrUnsupported)
		}
	}
	if wildcard && len(cols) > 0 {
		return fmt.Errorf("* beside other columns of a subquery is %w", ErrUnsupported)
	}
	names := columnNames(st.Fields)
	for _, g := range p.groups {
		var evs []event.Event
		var fieldKeys []string
		err := x.eachPoint(ctx, p, g, nil, func(ev event.Event) {
			for k := range ev.Fields {
				if !slices.Contains(fieldKeys, k) {
					fieldKeys = append(fieldKeys, k)
				}
			}
			evs = append(evs, ev)
		})
		if err != nil {
			return err
		}
		names, colRefs := names, cols
		if wildcard {
			var keys []string
			for _, k := range append(fieldKeys, p.tagKeys...) {
				if _, grouped := g.tags[k]; !grouped && !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			names, colRefs = keys, keys
		}
		slices.SortStableFunc(evs, func(a, b event.Event) int {
			c := a.Time.Compare(b.Time)
			if c == 0 {
				c = strings.Compare(a.Series, b.Series)
			}
			if p.desc {
				c = -c
			}
			return c
		})
		var rows [][]any
		for _, ev := range evs {
			row := make([]any, 1+len(colRefs))
			row[0] = x.timeValue(ev.Time, p.loc)
			has := false
			for i, r := range colRefs {
				if e, ok := exprAt[i]; ok {
					row[1+i] = evalMath(e, ev)
					has = has || slices.ContainsFunc(refs(e), func(f string) bool { _, ok := ev.Fields[f]; return ok })
					continue
				}
				v, ok := ev.Fields[r]
				if ok {
					has = has || !p.isTag(r)
				} else if p.isTag(r) {
					if t, ok := Tags(ev.Series)[r]; ok {
						v = t
					}
				}
				row[1+i] = v
			}
			if has {
				rows = append(rows, row)
			}
		}
		rows = cut(rows, st.Offset, st.Limit)
		partial := len(rows) > x.opts.MaxRows
		if partial {
			rows = rows[:x.opts.MaxRows]
		}
		if len(rows) == 0 {
			continue
		}
		s := api.InfluxQLSeries{Name: p.table, Tags: g.tags, Columns: append([]string{"time"}, names...), Values: rows, Partial: partial}
		if err := emit(s); err != nil {
			return err
		}
	}
	return nil
}
