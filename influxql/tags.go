package influxql

import (
	"context"
	"fmt"
	"slices"
	"time"

	iql "github.com/influxdata/influxql"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event/lineproto"
)

// SeriesTag is the tag a series has when its name is not a tag set.
const SeriesTag = "series"

// Tags returns the tags of a series: those of its tag set, or, for a
// series whose name is not one, the tag SeriesTag with its name.
func Tags(series string) map[string]string {
	tags, ok := lineproto.SeriesTags(series)
	if !ok {
		return map[string]string{SeriesTag: series}
	}
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[t.Key] = t.Value
	}
	return m
}

// seriesTags is a series and its tags.
type seriesTags struct {
	name string
	tags map[string]string
}

// allSeries lists every series of a table from its series index, and
// parses their tags; no event is read.
func (x *executor) allSeries(ctx context.Context, table string) ([]seriesTags, error) {
	if s, ok := x.series[table]; ok {
		return s, nil
	}
	// The version is read before the listing, so that a series written
	// while it runs makes the next statement list again.
	versioned, ok := x.eng.(interface {
		SeriesVersion(tenant, table string) uint64
	})
	var version uint64
	var listed time.Time
	if ok {
		listed = x.opts.Series.clock()
		version = versioned.SeriesVersion(x.tenant, table)
		if s, ok := x.opts.Series.get(x.tenant, table, version); ok {
			x.series[table] = s
			return s, nil
		}
	}
	var out []seriesTags
	after := ""
	for {
		page, err := x.eng.ListSeries(ctx, x.tenant, table, "", after, engine.MaxSeriesLimit)
		if err != nil {
			return nil, &EngineError{Err: err}
		}
		for _, s := range page.Series {
			out = append(out, seriesTags{name: s, tags: Tags(s)})
		}
		if len(out) > x.opts.MaxSeries {
			return nil, fmt.Errorf("measurement %q has more than %d series: narrow the query", table, x.opts.MaxSeries)
		}
		if page.Next == "" {
			break
		}
		after = page.Next
	}
	x.series[table] = out
	if ok {
		x.opts.Series.put(x.tenant, table, version, listed, out)
	}
	return out, nil
}

// tagKeys returns the tag keys of a table's series, sorted.
func tagKeys(series []seriesTags) []string {
	seen := map[string]bool{}
	for _, s := range series {
		for k := range s.tags {
			seen[k] = true
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// checkEvery is how many series a loop over a measurement's series
// takes between two looks at its context.
const checkEvery = 256

// matchSeries returns the series whose tags cond matches; a nil cond
// matches every one.
func matchSeries(ctx context.Context, series []seriesTags, cond iql.Expr) ([]seriesTags, error) {
	if cond == nil {
		return series, nil
	}
	var out []seriesTags
	for i, s := range series {
		if i%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		ok, err := matchTags(cond, s.tags)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// matchTags evaluates a condition on tags: comparisons of a tag with a
// string (=, !=, <>) or a regular expression (=~, !~), joined by AND and
// OR. A tag a series lacks is the empty string, as in InfluxDB.
func matchTags(e iql.Expr, tags map[string]string) (bool, error) {
	switch e := e.(type) {
	case *iql.ParenExpr:
		return matchTags(e.Expr, tags)
	case *iql.BooleanLiteral:
		return e.Val, nil
	case *iql.BinaryExpr:
		switch e.Op {
		case iql.AND, iql.OR:
			l, err := matchTags(e.LHS, tags)
			if err != nil {
				return false, err
			}
			if e.Op == iql.AND && !l {
				return false, nil
			}
			if e.Op == iql.OR && l {
				return true, nil
			}
			return matchTags(e.RHS, tags)
		}
		key, lit, ok := tagComparison(e)
		if !ok {
			return false, fmt.Errorf("condition %s: compare a tag with a string or a regular expression", e)
		}
		v := tags[key]
		switch lit := lit.(type) {
		case *iql.VarRef:
			// A tag compared with another tag.
			switch e.Op {
			case iql.EQ:
				return v == tags[lit.Val], nil
			case iql.NEQ:
				return v != tags[lit.Val], nil
			}
		case *iql.StringLiteral:
			switch e.Op {
			case iql.EQ:
				return v == lit.Val, nil
			case iql.NEQ:
				return v != lit.Val, nil
			}
		case *iql.IntegerLiteral, *iql.NumberLiteral, *iql.BooleanLiteral:
			// Tag values are strings: an unquoted number or boolean is
			// compared as InfluxQL writes it.
			switch e.Op {
			case iql.EQ:
				return v == lit.String(), nil
			case iql.NEQ:
				return v != lit.String(), nil
			}
		case *iql.RegexLiteral:
			switch e.Op {
			case iql.EQREGEX:
				return lit.Val.MatchString(v), nil
			case iql.NEQREGEX:
				return !lit.Val.MatchString(v), nil
			}
		}
		return false, fmt.Errorf("condition %s: %s is not supported on tags: use =, !=, =~ or !~", e, e.Op)
	}
	return false, fmt.Errorf("condition %s is not supported on tags", e)
}

// tagComparison returns the tag and the literal a comparison names,
// either way round.
func tagComparison(e *iql.BinaryExpr) (string, iql.Expr, bool) {
	if ref, ok := e.LHS.(*iql.VarRef); ok {
		return ref.Val, e.RHS, true
	}
	if ref, ok := e.RHS.(*iql.VarRef); ok {
		return ref.Val, e.LHS, true
	}
	return "", nil, false
}

// refs returns the names of the variables an expression reads.
func refs(e iql.Expr) []string {
	var out []string
	iql.WalkFunc(e, func(n iql.Node) {
		if r, ok := n.(*iql.VarRef); ok {
			out = append(out, r.Val)
		}
	})
	return out
}

// splitCondition splits a condition without time into the part on tags,
// the part on fields, and the part that reads both: conjuncts that read
// only tags, those that read no tag, and the rest, evaluated point by
// point (rowcond.go).
func splitCondition(cond iql.Expr, isTag func(string) bool) (tagCond, fieldCond, rowCond iql.Expr, err error) {
	var conj []iql.Expr
	var flatten func(e iql.Expr)
	flatten = func(e iql.Expr) {
		if p, ok := e.(*iql.ParenExpr); ok {
			flatten(p.Expr)
			return
		}
		if b, ok := e.(*iql.BinaryExpr); ok && b.Op == iql.AND {
			flatten(b.LHS)
			flatten(b.RHS)
			return
		}
		conj = append(conj, e)
	}
	if cond != nil {
		flatten(cond)
	}
	and := func(a, b iql.Expr) iql.Expr {
		if a == nil {
			return b
		}
		return &iql.BinaryExpr{Op: iql.AND, LHS: a, RHS: b}
	}
	for _, c := range conj {
		names := refs(c)
		tags := 0
		for _, n := range names {
			if isTag(n) {
				tags++
			}
		}
		switch {
		case tags == len(names) && tags > 0:
			tagCond = and(tagCond, c)
		case tags == 0:
			fieldCond = and(fieldCond, c)
		default:
			rowCond = and(rowCond, c)
		}
	}
	return tagCond, fieldCond, rowCond, nil
}
