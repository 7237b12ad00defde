package influxql

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	iql "github.com/influxdata/influxql"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/storage"
)

// group is the series a statement reads for one series of its answer:
// the tags it groups by, and the series, or every series of the table.
type group struct {
	tags   map[string]string
	series []string
	whole  bool // every series of the table: one read without a series
}

// plan is what a SELECT reads of one table.
type plan struct {
	table    string
	logical  engine.LogicalTable
	from, to time.Time
	bounded  bool // the statement gave a lower time bound
	filter   *storage.Filter
	groups   []group
	// counted is the number of groups, of a plan made only to count
	// them (planSelect's count), whose groups are not built; countedRead
	// says how the largest of them is read.
	counted     int
	countedRead groupRead
	groupBy     []string
	loc         *time.Location
	desc        bool
	interval    time.Duration
	offset      time.Duration // of the buckets from UTC midnight, in [0, interval)
	tagKeys     []string      // of the table's series, sorted
	// absent are the names the condition compares as tags that no
	// series has (tagless.go): each is "" in every series.
	absent []string
	// rowCond is the part of the condition that reads a tag and a field
	// together, evaluated point by point (rowcond.go).
	rowCond iql.Expr
	// statement are the tables of the statement, this one among them:
	// SELECT * of several has the columns of all (raw.go).
	statement []engine.LogicalTable
	// rows, of a subquery, are the inner answer the plan reads instead
	// of the table (subquery.go).
	rows *subRows
}

// groupRead is how a group's events are read: in one read of every
// series, series by series merged, or of its one series.
type groupRead int

const (
	readOne groupRead = iota
	readWhole
	readMerged
)

// isTag reports whether k is a tag key of the table.
func (p *plan) isTag(k string) bool {
	_, ok := slices.BinarySearch(p.tagKeys, k)
	return ok
}

// selection is what a SELECT reads, decided before any table is
// planned.
type selection struct {
	interval, offset time.Duration
	loc              *time.Location
	cond             iql.Expr
	tr               iql.TimeRange
	groupBy          []string
	wildcard         bool
	tables           []engine.LogicalTable
}

// selectStatement answers a SELECT, each series given to emit as it is
// built.
func (x *executor) selectStatement(ctx context.Context, st *iql.SelectStatement, emit func(api.InfluxQLSeries) error) error {
	if sq := subquery(st); sq != nil {
		return x.subquerySelect(ctx, st, sq, emit)
	}
	sel, err := x.selection(ctx, st)
	if err != nil {
		return err
	}
	for _, t := range sel.tables {
		p, err := x.planSelect(ctx, st, sel, t, false)
		if err != nil {
			return err
		}
		if st.IsRawQuery {
			err = x.raw(ctx, st, p, emit)
		} else {
			err = x.aggregate(ctx, st, p, emit)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// selection reads a SELECT's clauses and the tables it names.
func (x *executor) selection(ctx context.Context, st *iql.SelectStatement) (*selection, error) {
	if st.Target != nil {
		return nil, fmt.Errorf("SELECT INTO is %w", ErrUnsupported)
	}
	for _, s := range st.Sources {
		if _, ok := s.(*iql.SubQuery); ok {
			return nil, fmt.Errorf("subqueries are %w", ErrUnsupported)
		}
	}
	if len(st.SortFields) > 1 || (len(st.SortFields) == 1 && st.SortFields[0].Name != "time") {
		return nil, fmt.Errorf("ORDER BY other than time is %w", ErrUnsupported)
	}
	interval, err := st.GroupByInterval()
	if err != nil {
		return nil, err
	}
	if interval <= 0 && groupsByTime(st) {
		// InfluxDB answers time(0s) as if there were no GROUP BY time().
		return nil, fmt.Errorf("GROUP BY time(%s): the interval must be positive, at least 1s", iql.FormatDuration(interval))
	}
	offset, err := x.groupByOffset(st, interval)
	if err != nil {
		return nil, err
	}
	loc := st.Location
	if loc == nil {
		loc = time.UTC
	}
	cond, tr, err := iql.ConditionExpr(st.Condition, &iql.NowValuer{Now: x.opts.Now, Location: st.Location})
	if err != nil {
		return nil, err
	}
	var groupBy []string
	wildcard := false
	for _, d := range st.Dimensions {
		switch e := d.Expr.(type) {
		case *iql.Call:
			if e.Name != "time" {
				return nil, fmt.Errorf("GROUP BY %s is %w", e, ErrUnsupported)
			}
		case *iql.VarRef:
			groupBy = append(groupBy, e.Val)
		case *iql.Wildcard:
			wildcard = true
		default:
			return nil, fmt.Errorf("GROUP BY %s is %w: group by time(), tags or *", d.Expr, ErrUnsupported)
		}
	}
	tables, err := x.measurements(ctx, st.Sources)
	if err != nil {
		return nil, err
	}
	// The measurements come in InfluxDB's order: by name, each once, in
	// reverse under ORDER BY time DESC.
	slices.SortFunc(tables, func(a, b engine.LogicalTable) int { return strings.Compare(a.Name, b.Name) })
	tables = slices.CompactFunc(tables, func(a, b engine.LogicalTable) bool { return a.Name == b.Name })
	if !st.TimeAscending() {
		slices.Reverse(tables)
	}
	return &selection{interval: interval, offset: offset, loc: loc, cond: cond, tr: tr, groupBy: groupBy, wildcard: wildcard, tables: tables}, nil
}

// planSelect plans what a SELECT reads of one of its tables; with
// count, it counts the groups without building them.
func (x *executor) planSelect(ctx context.Context, st *iql.SelectStatement, sel *selection, t engine.LogicalTable, count bool) (*plan, error) {
	p, err := x.plan(ctx, st, t, sel, count)
	if err != nil {
		return nil, err
	}
	p.loc, p.desc, p.interval, p.offset = sel.loc, !st.TimeAscending(), sel.interval, sel.offset
	p.statement = sel.tables
	return p, nil
}

// groupsByTime reports whether a statement has a GROUP BY time().
func groupsByTime(st *iql.SelectStatement) bool {
	return slices.ContainsFunc(st.Dimensions, func(d *iql.Dimension) bool {
		call, ok := d.Expr.(*iql.Call)
		return ok && call.Name == "time"
	})
}

// groupByOffset returns the offset of GROUP BY time(interval, offset)
// from UTC midnight, at least 0 and less than the interval: a duration,
// negative ones counted back from the next bucket, as InfluxDB does
// (time(1h, -15m) is time(1h, 45m)), or a time such as now(), whose
// bucket then starts at it.
func (x *executor) groupByOffset(st *iql.SelectStatement, interval time.Duration) (time.Duration, error) {
	if interval == 0 {
		return 0, nil
	}
	for _, d := range st.Dimensions {
		call, ok := d.Expr.(*iql.Call)
		if !ok || call.Name != "time" || len(call.Args) != 2 {
			continue
		}
		var off time.Duration
		switch e := iql.Reduce(call.Args[1], &iql.NowValuer{Now: x.opts.Now}).(type) {
		case *iql.DurationLiteral:
			off = e.Val % interval
		case *iql.IntegerLiteral:
			off = time.Duration(e.Val) % interval
		case *iql.TimeLiteral:
			off = time.Duration(e.Val.UnixNano() % int64(interval))
		default:
			return 0, fmt.Errorf("invalid time dimension offset: %s", call.Args[1])
		}
		if off < 0 {
			off += interval
		}
		return off, nil
	}
	return 0, nil
}

// plan decides what a SELECT reads of a table: its range, the series of
// each group from the series index, and the filter on fields; with count,
// only the number of groups (plan.counted), not the groups.
func (x *executor) plan(ctx context.Context, st *iql.SelectStatement, t engine.LogicalTable, sel *selection, count bool) (*plan, error) {
	cond, groupBy := sel.cond, sel.groupBy
	all, err := x.allSeries(ctx, t.Name)
	if err != nil {
		return nil, err
	}
	keys := tagKeys(all)
	absent, err := x.absentTags(ctx, sel.tables, cond, keys)
	if err != nil {
		return nil, err
	}
	isTag := func(k string) bool { _, ok := slices.BinarySearch(keys, k); return ok || slices.Contains(absent, k) }
	tagCond, fieldCond, rowCond, err := splitCondition(cond, isTag)
	if err != nil {
		return nil, err
	}
	p := &plan{table: t.Name, logical: t, tagKeys: keys, absent: absent, rowCond: rowCond}
	if p.filter, err = fieldFilter(fieldCond); err != nil {
		return nil, err
	}
	p.from, p.to, p.bounded = x.statementRange(st, t, sel.tr)
	if sel.wildcard {
		// GROUP BY * is every tag key of the statement's measurements,
		// as InfluxDB expands it: a measurement's series lack the keys
		// of the others.
		if groupBy, err = x.statementTagKeys(ctx, sel.tables); err != nil {
			return nil, err
		}
	}
	p.groupBy = groupBy
	matched, err := matchSeries(ctx, all, tagCond)
	if err != nil {
		return nil, err
	}
	if count {
		n := min(1, len(matched))
		switch {
		case tagCond == nil && len(groupBy) == 0:
			n, p.countedRead = 1, readWhole
		case len(groupBy) == 0 && len(matched) > 1:
			p.countedRead = readMerged
		case len(groupBy) > 0:
			keys := map[string]int{}
			var b []byte
			for _, s := range matched {
				b = b[:0]
				for _, k := range groupBy {
					b = append(append(b, s.tags[k]...), 0)
				}
				keys[string(b)]++
				if keys[string(b)] > 1 {
					p.countedRead = readMerged
				}
			}
			n = len(keys)
		}
		p.counted = max(n-st.SOffset, 0)
		if st.SLimit > 0 {
			p.counted = min(p.counted, st.SLimit)
		}
		return p, nil
	}
	if len(groupBy) == 0 {
		g := group{tags: nil, whole: tagCond == nil}
		for _, s := range matched {
			g.series = append(g.series, s.name)
		}
		if g.whole || len(g.series) > 0 {
			p.groups = []group{g}
		}
	} else {
		// The groups come in InfluxDB's order: by their tags' values,
		// taken in the order of the tag keys' names whatever the order
		// of the GROUP BY. SLIMIT and SOFFSET cut them in that order;
		// under ORDER BY time DESC, what they keep comes in reverse.
		byName := slices.Sorted(slices.Values(groupBy))
		byKey := map[string]*group{}
		for _, s := range matched {
			tags := make(map[string]string, len(groupBy))
			var b strings.Builder
			for _, k := range byName {
				tags[k] = s.tags[k]
				b.WriteString(s.tags[k])
				b.WriteByte(0)
			}
			g := byKey[b.String()]
			if g == nil {
				g = &group{tags: tags}
				byKey[b.String()] = g
			}
			g.series = append(g.series, s.name)
		}
		for _, k := range slices.Sorted(maps.Keys(byKey)) {
			p.groups = append(p.groups, *byKey[k])
		}
	}
	p.groups = cutGroups(p.groups, slices.Sorted(slices.Values(groupBy)), st.SOffset, st.SLimit)
	if !st.TimeAscending() {
		slices.Reverse(p.groups)
	}
	return p, nil
}

// fieldFilter translates a condition on fields into the engine's filter:
// comparisons of a field with a number, a string or a boolean, joined by
// AND and OR.
func fieldFilter(e iql.Expr) (*storage.Filter, error) {
	if e == nil {
		return nil, nil
	}
	f, err := toFilter(e)
	if err != nil {
		return nil, err
	}
	return &f, nil
}

func toFilter(e iql.Expr) (storage.Filter, error) {
	switch e := e.(type) {
	case *iql.ParenExpr:
		return toFilter(e.Expr)
	case *iql.BinaryExpr:
		if e.Op == iql.AND || e.Op == iql.OR {
			l, err := toFilter(e.LHS)
			if err != nil {
				return storage.Filter{}, err
			}
			r, err := toFilter(e.RHS)
			if err != nil {
				return storage.Filter{}, err
			}
			op := storage.FilterAnd
			if e.Op == iql.OR {
				op = storage.FilterOr
			}
			return storage.Filter{Op: op, Args: []storage.Filter{l, r}}, nil
		}
		ops := map[iql.Token]storage.FilterOp{iql.EQ: storage.FilterEq, iql.NEQ: storage.FilterNe, iql.LT: storage.FilterLt,
			iql.LTE: storage.FilterLe, iql.GT: storage.FilterGt, iql.GTE: storage.FilterGe}
		flipped := map[storage.FilterOp]storage.FilterOp{storage.FilterLt: storage.FilterGt, storage.FilterLe: storage.FilterGe,
			storage.FilterGt: storage.FilterLt, storage.FilterGe: storage.FilterLe}
		op, ok := ops[e.Op]
		if !ok {
			return storage.Filter{}, fmt.Errorf("condition %s: %s on a field is %w", e, e.Op, ErrUnsupported)
		}
		ref, lit := e.LHS, e.RHS
		if _, ok := ref.(*iql.VarRef); !ok {
			ref, lit = lit, ref
			if f, ok := flipped[op]; ok {
				op = f
			}
		}
		r, ok := ref.(*iql.VarRef)
		if !ok {
			return storage.Filter{}, fmt.Errorf("condition %s: compare a field with a value", e)
		}
		var v any
		switch lit := lit.(type) {
		case *iql.NumberLiteral:
			v = number(lit.Val)
		case *iql.IntegerLiteral:
			v = json.Number(strconv.FormatInt(lit.Val, 10))
		case *iql.StringLiteral:
			v = lit.Val
		case *iql.BooleanLiteral:
			v = lit.Val
		default:
			return storage.Filter{}, fmt.Errorf("condition %s: compare a field with a number, a string or a boolean", e)
		}
		if op == storage.FilterNe {
			return notEqual(r.Val, v), nil
		}
		return storage.Filter{Op: op, Attr: r.Val, Value: v}, nil
	}
	return storage.Filter{}, fmt.Errorf("condition %s is %w", e, ErrUnsupported)
}

// notEqual is InfluxDB's f != v: it holds when the field is of v's type
// and differs, not when the field is missing or of another type (a
// comparison of values of two types is false in InfluxQL), where the
// engine's <> holds. A number or a string differs when it is less or
// greater (orderings hold only between values of one type); a boolean
// when it is the other one.
func notEqual(field string, v any) storage.Filter {
	if b, ok := v.(bool); ok {
		return storage.Filter{Op: storage.FilterEq, Attr: field, Value: !b}
	}
	return storage.Filter{Op: storage.FilterOr, Args: []storage.Filter{
		{Op: storage.FilterLt, Attr: field, Value: v},
		{Op: storage.FilterGt, Attr: field, Value: v},
	}}
}

// timeValue writes a time as the answer does: RFC 3339 in the
// statement's zone, or an integer at the request's epoch.
func (x *executor) timeValue(t time.Time, loc *time.Location) any {
	var unit time.Duration
	switch x.opts.Epoch {
	case "":
		return t.In(loc).Format(time.RFC3339Nano)
	case "ns", "n":
		return t.UnixNano()
	case "u", "µ", "us":
		unit = time.Microsecond
	case "ms":
		unit = time.Millisecond
	case "s":
		unit = time.Second
	case "m":
		unit = time.Minute
	case "h":
		unit = time.Hour
	default:
		return t.UnixNano()
	}
	return t.UnixNano() / int64(unit)
}

// number is a float as a canonical json.Number.
func number(f float64) json.Number {
	n, err := storage.CanonicalNumber(strconv.FormatFloat(f, 'g', -1, 64))
	if err != nil {
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
	}
	return n
}
