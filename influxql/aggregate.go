package influxql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	iql "github.com/influxdata/influxql"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
	"golang.org/x/sync/errgroup"
)

// parallelism is how many engine aggregates of a statement's series run
// at once; the engine bounds its own reads under them.
const parallelism = 4

// aggColumn is one column of an aggregate SELECT: an aggregate of a
// field, and maybe a transform of the aggregate over the buckets.
type aggColumn struct {
	name  string
	fn    string // InfluxQL's: count, sum, mean, median, min, max, first, last, spread, percentile, distinct
	field string
	pct   float64
	// outer is derivative, non_negative_derivative, difference,
	// non_negative_difference, moving_average, cumulative_sum, or "".
	outer  string
	unit   time.Duration
	window int
	// by are the tags of top(f, tag, …, N), joined by commas (top.go).
	by string
}

// engineFns are the engine's functions a column needs; merged says
// whether its results of several series or buckets will be merged.
func (c aggColumn) engineFns(merged bool) []string {
	switch c.fn {
	case "count":
		return []string{engine.FnCount}
	case "sum":
		return []string{engine.FnSum}
	case "mean":
		if merged {
			return []string{engine.FnAvg, engine.FnSum, engine.FnCount}
		}
		return []string{engine.FnAvg}
	case "median":
		return []string{engine.FnMedian}
	case "stddev":
		return []string{engine.FnStddev}
	case "percentile":
		return []string{engine.Percentile(c.pct)}
	case "min":
		return []string{engine.FnMin}
	case "max":
		return []string{engine.FnMax}
	case "spread":
		return []string{engine.FnMin, engine.FnMax}
	case "first":
		return []string{engine.FnFirst}
	case "last":
		return []string{engine.FnLast}
	case "distinct":
		return []string{engine.FnCountDistinct}
	}
	return nil
}

// present reports whether the column's value v of the results a holds
// points: results of the field, but a count of 0 (stddev of one point
// holds it, though it has no value).
func (c aggColumn) present(a *acc, v any) bool {
	if a == nil || a.parts == 0 {
		return false
	}
	switch c.fn {
	case "count", "distinct":
		n, ok := toFloat(v)
		return !ok || n != 0
	case "percentile":
		// Of too few values (rank 0), InfluxDB's percentile is no
		// point, where stddev of one value is a null one (exists.go).
		return v != nil
	}
	return true
}

// mergesAcrossSeries reports whether results of several series merge
// exactly into the column's.
func (c aggColumn) mergesAcrossSeries() bool {
	switch c.fn {
	case "count", "sum", "mean", "min", "max", "spread":
		return true
	}
	return false
}

// aggregates InfluxQL answers, and what timetable lacks.
const supportedAggregates = "count, count(distinct()), sum, mean, median, min, max, first, last, spread, stddev, percentile(f, N), distinct, top(f, N), bottom(f, N), elapsed"

// parseColumn reads one field of an aggregate SELECT.
func parseColumn(f *iql.Field, interval time.Duration) (aggColumn, error) {
	c := aggColumn{name: f.Name()}
	call, ok := f.Expr.(*iql.Call)
	if !ok {
		return c, fmt.Errorf("%s with aggregates is %w: every field of the SELECT is an aggregate", f.Expr, ErrUnsupported)
	}
	switch call.Name {
	case "derivative", "non_negative_derivative", "difference", "non_negative_difference", "moving_average", "cumulative_sum":
		c.outer = call.Name
		if len(call.Args) == 0 {
			return c, fmt.Errorf("%s() needs an argument", call.Name)
		}
		inner, ok := call.Args[0].(*iql.Call)
		if !ok || interval == 0 {
			return c, fmt.Errorf("%s of raw values is %w: use it over an aggregate with GROUP BY time(), as %s(mean(f))", call.Name, ErrUnsupported, call.Name)
		}
		c.unit = interval
		switch call.Name {
		case "derivative", "non_negative_derivative":
			if len(call.Args) == 2 {
				d, ok := call.Args[1].(*iql.DurationLiteral)
				if !ok || d.Val <= 0 {
					return c, fmt.Errorf("%s(): the second argument is a duration", call.Name)
				}
				c.unit = d.Val
			}
		case "moving_average":
			n, ok := call.Args[len(call.Args)-1].(*iql.IntegerLiteral)
			if len(call.Args) != 2 || !ok {
				return c, fmt.Errorf("moving_average() takes an aggregate and a window of at least 2")
			}
			if n.Val <= 1 {
				// InfluxDB's error.
				return c, fmt.Errorf("moving_average window must be greater than 1, got %d", n.Val)
			}
			c.window = int(n.Val)
		}
		call = inner
	}
	c.fn = call.Name
	if len(call.Args) == 0 {
		return c, fmt.Errorf("%s() needs a field", call.Name)
	}
	switch call.Name {
	case "count", "sum", "mean", "median", "min", "max", "first", "last", "spread", "stddev", "percentile", "mode":
	case "integral":
		// integral(f[, unit]) alone (integral.go).
		return parseIntegral(call, c)
	case "sample":
		// sample(f, N) alone (sample.go).
		return parseSample(call, c)
	case "distinct":
		// distinct(f) alone: its values (distinct.go).
		c.fn = "values"
	case "elapsed":
		// elapsed(f[, unit]) alone (elapsed.go).
		return fieldAndUnit(call, c, time.Nanosecond, "elapsed(): the second argument is a duration")
	case "top", "bottom":
		// top(f[, tag, …], N) and bottom (top.go).
		return parseTop(call, c)
	default:
		return c, fmt.Errorf("%s() is %w: timetable's aggregates are %s", call.Name, ErrUnsupported, supportedAggregates)
	}
	if call.Name == "count" {
		if d, ok := call.Args[0].(*iql.Call); ok && d.Name == "distinct" && len(d.Args) == 1 {
			c.fn = "distinct"
			call = d
		}
		// COUNT(DISTINCT f), InfluxQL's other spelling of count(distinct(f)).
		if d, ok := call.Args[0].(*iql.Distinct); ok && len(call.Args) == 1 {
			c.fn, c.field = "distinct", d.Val
			return c, nil
		}
	}
	ref, ok := call.Args[0].(*iql.VarRef)
	if !ok {
		return c, fmt.Errorf("%s(%s) is %w: name a field", call.Name, call.Args[0], ErrUnsupported)
	}
	c.field = ref.Val
	if c.fn == "percentile" {
		var n float64
		switch a := call.Args[len(call.Args)-1].(type) {
		case *iql.IntegerLiteral:
			n = float64(a.Val)
		case *iql.NumberLiteral:
			n = a.Val
		}
		if len(call.Args) != 2 || n <= 0 || n > 100 {
			return c, fmt.Errorf("percentile(%s): the second argument is a number above 0 and at most 100", call.Args[len(call.Args)-1])
		}
		c.pct = n
	} else if len(call.Args) != 1 {
		return c, fmt.Errorf("%s() takes one field", call.Name)
	}
	return c, nil
}

// selector reports whether the column picks one of the values, whose
// time InfluxDB gives when it is a statement's only column and there is
// no GROUP BY time().
func (c aggColumn) selector() bool {
	switch c.fn {
	case "first", "last", "min", "max", "percentile":
		return c.outer == ""
	}
	return false
}

// oneSelector reports whether the columns are one selector, maybe
// repeated (min(f), min(f)), which InfluxDB reads once and answers with
// the time of the value it picked.
func oneSelector(cols []aggColumn) bool {
	first := cols[0]
	first.name = ""
	return first.selector() && !slices.ContainsFunc(cols[1:], func(c aggColumn) bool {
		c.name = ""
		return c != first
	})
}

// selectedAt returns the time of the event whose value of the column's
// field a selector picked: the earliest with it, the latest for last (as
// InfluxDB breaks ties); zero when none is found.
func (x *executor) selectedAt(ctx context.Context, p *plan, g group, c aggColumn, v any) (time.Time, error) {
	if n, ok := v.(float64); ok {
		v = number(n) // of values computed from a group's points (selector.go)
	}
	f := storage.Filter{Op: storage.FilterEq, Attr: c.field, Value: v}
	if p.filter != nil {
		f = storage.Filter{Op: storage.FilterAnd, Args: []storage.Filter{*p.filter, f}}
	}
	q := engine.Query{Table: p.table, From: p.from, To: p.to, Fields: []string{c.field}, Filter: &f, Desc: c.fn == "last"}
	series := g.series
	if g.whole {
		series = []string{""}
	}
	var at time.Time
	for _, s := range series {
		q.Series = s
		var got []event.Event
		var err error
		if s == "" && !g.whole {
			got, err = x.readTagless(ctx, q, 1, func(event.Event) bool { return true })
		} else {
			got, err = x.read(ctx, q, 1, func(event.Event) bool { return true })
		}
		if err != nil {
			return time.Time{}, err
		}
		if len(got) == 1 && (at.IsZero() || got[0].Time.Before(at) != (c.fn == "last")) {
			at = got[0].Time
		}
	}
	return at, nil
}

// acc gathers the results of one field in one time slot, from one or
// more series and buckets.
type acc struct {
	parts    int // buckets that had the field
	single   map[string]any
	count    int64
	sum      float64
	min, max float64
	first    any
	last     any
}

func (a *acc) add(values map[string]any) {
	a.parts++
	if a.parts == 1 {
		a.single = values
		a.first = values[engine.FnFirst]
		a.min, a.max = math.Inf(1), math.Inf(-1)
	}
	a.last = values[engine.FnLast]
	if n, ok := values[engine.FnCount].(int64); ok {
		a.count += n
	}
	if v, ok := toFloat(values[engine.FnSum]); ok {
		a.sum += v
	}
	if v, ok := toFloat(values[engine.FnMin]); ok {
		a.min = math.Min(a.min, v)
	}
	if v, ok := toFloat(values[engine.FnMax]); ok {
		a.max = math.Max(a.max, v)
	}
}

// result is a column's value from the gathered results; an error when
// they do not merge exactly.
func (a *acc) result(c aggColumn) (any, error) {
	if a == nil || a.parts == 0 {
		return nil, nil
	}
	if a.parts == 1 {
		switch c.fn {
		case "spread":
			lo, ok1 := toFloat(a.single[engine.FnMin])
			hi, ok2 := toFloat(a.single[engine.FnMax])
			if !ok1 || !ok2 {
				return nil, nil
			}
			return number(hi - lo), nil
		default:
			return a.single[c.engineFns(false)[0]], nil
		}
	}
	switch c.fn {
	case "count":
		return a.count, nil
	case "sum":
		return number(a.sum), nil
	case "mean":
		if a.count == 0 {
			return nil, nil
		}
		return number(a.sum / float64(a.count)), nil
	case "min":
		return number(a.min), nil
	case "max":
		return number(a.max), nil
	case "spread":
		return number(a.max - a.min), nil
	case "first":
		return a.first, nil
	case "last":
		return a.last, nil
	}
	return nil, fmt.Errorf("%s() over more than one bucket of the engine is %w: add GROUP BY time(1d) or less, or keep the range within one UTC day", c.fn, ErrUnsupported)
}

// aggregate answers a SELECT of aggregates: the engine's aggregates of
// each group's series, merged by time slot, transformed and filled; each
// group's series is given to emit once built, before the next group is
// read, so that memory holds one group's buckets at a time.
func (x *executor) aggregate(ctx context.Context, st *iql.SelectStatement, p *plan, emit func(api.InfluxQLSeries) error) error {
	cols, out, err := aggColumns(st, p.interval)
	if err != nil {
		return err
	}
	// from and to are the statement's own range; a transform's aggregate
	// reads beyond it, and p's range is that (transform.go).
	from, to := p.from, p.to
	if extra := time.Duration(extraIntervals(cols)) * p.interval; extra > 0 {
		if p.desc {
			p.to = p.to.Add(extra)
		} else {
			p.from = p.from.Add(-extra)
		}
	}
	bucket := p.interval
	switch {
	case bucket == 0:
		bucket = 24 * time.Hour
	case bucket < time.Second || (24*time.Hour)%bucket != 0:
		return fmt.Errorf("GROUP BY time(%s) is %w: use an interval of at least 1s that divides a day (set the data source's min interval to 1s or more)", bucket, ErrUnsupported)
	}
	if p.empty() {
		return nil
	}
	// One slot with no GROUP BY time(): the engine's days, merged.
	w := windows{interval: p.interval, offset: p.offset, loc: p.loc}
	starts := []time.Time{p.from}
	pieces := []piece{{from: p.from, to: p.to, bucket: bucket}}
	if p.interval > 0 {
		if n := int(p.to.Sub(p.from)/bucket) + 1; n > x.opts.MaxBuckets {
			return fmt.Errorf("GROUP BY time(%s) over %s makes %d buckets, over the limit of %d: narrow the range or widen the interval", p.interval, p.to.Sub(p.from), n, x.opts.MaxBuckets)
		}
		starts = w.starts(p.from, p.to, x.opts.MaxBuckets)
		if len(starts) > x.opts.MaxBuckets {
			return fmt.Errorf("GROUP BY time(%s) over %s makes more than %d buckets: narrow the range or widen the interval", p.interval, p.to.Sub(p.from), x.opts.MaxBuckets)
		}
		pieces = w.pieces(starts, p.from, p.to)
	}
	pieces = inclusiveEnds(pieces)
	// The pieces of the aggregates read over the statement's own range.
	ownPieces := pieces
	if !from.Equal(p.from) || !to.Equal(p.to) {
		ownPieces = nil
		for _, pc := range inclusiveEnds(w.pieces(starts, from, to)) {
			if !pc.to.Before(pc.from) {
				ownPieces = append(ownPieces, pc)
			}
		}
	}
	if i := slices.IndexFunc(cols, func(c aggColumn) bool { return c.fn == "integral" }); i >= 0 {
		if len(cols) != 1 || out != nil || cols[0].outer != "" {
			return fmt.Errorf("integral() is %w but alone in a SELECT", ErrUnsupported)
		}
		return x.integralValues(ctx, st, p, cols[0], w, emit)
	}
	if i := slices.IndexFunc(cols, func(c aggColumn) bool { return c.fn == "sample" }); i >= 0 {
		if len(cols) != 1 || out != nil || cols[0].outer != "" {
			return fmt.Errorf("sample() is %w but alone in a SELECT", ErrUnsupported)
		}
		return x.sampleValues(ctx, st, p, cols[0], starts, emit)
	}
	if i := slices.IndexFunc(cols, func(c aggColumn) bool { return c.fn == "elapsed" }); i >= 0 {
		if len(cols) != 1 || out != nil {
			return fmt.Errorf("elapsed() is %w but alone in a SELECT", ErrUnsupported)
		}
		return x.elapsedValues(ctx, st, p, cols[0], emit)
	}
	if i := slices.IndexFunc(cols, func(c aggColumn) bool { return c.fn == "top" || c.fn == "bottom" }); i >= 0 {
		if len(cols) != 1 || cols[0].outer != "" {
			// InfluxDB's refusal, word for word.
			return fmt.Errorf("selector function %s() cannot be combined with other functions", cols[i].fn)
		}
		return x.topValues(ctx, st, p, cols[0], out, starts, emit)
	}
	if i := slices.IndexFunc(cols, func(c aggColumn) bool { return c.fn == "values" }); i >= 0 {
		if len(cols) != 1 || out != nil || cols[0].outer != "" {
			// InfluxDB's refusal, word for word.
			return fmt.Errorf("aggregate function distinct() cannot be combined with other functions or fields")
		}
		return x.distinctValues(ctx, st, p, cols[0], starts, emit)
	}
	if slices.ContainsFunc(out, func(o outColumn) bool { return o.ref != "" }) {
		return x.selectorWithFields(ctx, st, p, cols, out, starts, w, emit)
	}
	if p.byPoints(cols) {
		return x.aggregatePoints(ctx, st, p, cols, out, starts, w, from, to, emit)
	}
	slots := len(starts)
	// A field is read once for the columns over the statement's range,
	// and once more for the transforms' that read beyond it.
	type readKey struct {
		field    string
		extended bool
	}
	keyOf := func(c aggColumn) readKey { return readKey{c.field, c.extended() && extraIntervals(cols) > 0} }
	fields := map[readKey][]string{}
	var order []readKey
	for _, g := range p.groups {
		if err := ctx.Err(); err != nil {
			return err
		}
		multi := !g.whole && len(g.series) > 1
		clear(fields)
		order = order[:0]
		var byPoints []bool // columns picked from the group's points (selector.go)
		for j, c := range cols {
			if multi && !c.mergesAcrossSeries() {
				if !slices.Contains(fromPoints, c.fn) {
					return fmt.Errorf("%s() over %d series at once is %w: GROUP BY their tags, or pick one series with a condition on its tags", c.fn, len(g.series), ErrUnsupported)
				}
				if byPoints == nil {
					byPoints = make([]bool, len(cols))
				}
				byPoints[j] = true
				continue
			}
			k := keyOf(c)
			if _, ok := fields[k]; !ok {
				order = append(order, k)
			}
			for _, fn := range c.engineFns(multi || p.interval == 0) {
				if !slices.Contains(fields[k], fn) {
					fields[k] = append(fields[k], fn)
				}
			}
		}
		accs := map[readKey][]*acc{} // field → slot
		for _, k := range order {
			accs[k] = make([]*acc, slots)
		}
		series := g.series
		if g.whole {
			series = []string{""}
		}
		// The series are aggregated in parallel and merged as they come:
		// several series only ever merge functions whose order does not
		// matter (mergesAcrossSeries), and one series' buckets come in
		// time order from one call.
		var mu sync.Mutex
		merge := func(k readKey, pc piece, buckets []engine.Bucket) {
			mu.Lock()
			defer mu.Unlock()
			for _, b := range buckets {
				slot := 0
				if p.interval > 0 {
					slot = pc.slot(starts, b.Start)
				}
				if slot < 0 || slot >= slots || b.Events == 0 {
					continue
				}
				v := b.Values[k.field]
				if v == nil {
					continue // no value of the field; an empty map is some without a result (stddev of one)
				}
				a := accs[k][slot]
				if a == nil {
					a = &acc{}
					accs[k][slot] = a
				}
				a.add(v)
			}
		}
		eg, ectx := errgroup.WithContext(ctx)
		eg.SetLimit(parallelism)
		for _, s := range series {
			tagless := s == "" && !g.whole // the engine reads every series for ""
			for _, k := range order {
				q := engine.AggregateQuery{Table: p.table, Series: s, Rank: engine.RankInfluxQL,
					Fields: []string{k.field}, Funcs: fields[k], Filter: p.filter}
				pcs := ownPieces
				if k.extended {
					pcs = pieces
				}
				for _, pc := range pcs {
					eg.Go(func() error {
						if s != "" || tagless {
							// A slot of the CPU pool for the series; the
							// engine's aggregate of every series takes its
							// own, a turn of series at a time.
							release, err := x.opts.CPU.AcquireFor(ectx, x.tenant)
							if err != nil {
								return err
							}
							defer release()
						}
						var buckets []engine.Bucket
						var err error
						if tagless {
							buckets, err = x.aggregateTagless(ectx, pc.query(q))
						} else if buckets, err = x.eng.Aggregate(ectx, x.tenant, pc.query(q)); err != nil {
							err = &EngineError{Err: err}
						}
						if err != nil {
							return err
						}
						merge(k, pc, buckets)
						return nil
					})
				}
			}
		}
		if err := eg.Wait(); err != nil {
			return err
		}
		var picks [][]pick
		if byPoints != nil {
			var err error
			if picks, err = x.pickColumns(ctx, p, from, to, g, cols, byPoints, starts); err != nil {
				return err
			}
		}
		// A bucket holds points when a column has a value of them; a
		// series holds points when a bucket does (exists.go).
		columns := make([]columnSlots, len(cols))
		for j, c := range cols {
			columns[j] = columnSlots{values: make([]any, slots), present: make([]bool, slots)}
			for slot := range slots {
				if byPoints != nil && byPoints[j] {
					pk := picks[j][slot]
					columns[j].values[slot], columns[j].present[slot] = pk.v, pk.ok
					continue
				}
				a := accs[keyOf(c)][slot]
				v, err := a.result(c)
				if err != nil {
					return err
				}
				columns[j].values[slot], columns[j].present[slot] = v, c.present(a, v)
			}
		}
		selected := func(v any) (time.Time, any, error) {
			at, err := x.selectedAt(ctx, p, g, cols[0], v)
			if err != nil || at.IsZero() {
				return at, v, err
			}
			if cols[0].fn == "first" || cols[0].fn == "last" {
				v, err = x.tieBreak(ctx, p, g, cols[0], at, v)
			}
			return at, v, err
		}
		if err := x.answerGroup(st, p, g, cols, out, w, starts, columns, from, to, selected, emit); err != nil {
			return err
		}
	}
	return nil
}

// answerGroup answers a group of a SELECT of aggregates from its
// columns' buckets, however computed (by the engine, or from the
// group's points: points.go): nothing when no bucket holds points; else
// the buckets put on the answer's timeline, filled, transformed
// (transform.go) and cut by OFFSET and LIMIT, given to emit as the
// group's series. from and to are the statement's own range, p's the
// range its transforms read; selected is, of one selector without GROUP
// BY time(), the time of the point it picked and its value (a zero time:
// the range's start).
func (x *executor) answerGroup(st *iql.SelectStatement, p *plan, g group, cols []aggColumn, out []outColumn, w windows, starts []time.Time, columns []columnSlots, from, to time.Time, selected func(v any) (time.Time, any, error), emit func(api.InfluxQLSeries) error) error {
	events := make([]int64, len(starts))
	for _, c := range columns {
		for slot, ok := range c.present {
			if ok {
				events[slot] = 1
			}
		}
	}
	if !slices.Contains(events, 1) {
		return nil
	}
	var rows []row
	if hasTransform(cols) {
		rows = transformedRows(st, cols, w, starts, columns, from, to, p.from, p.to, p.desc)
	} else {
		values := make([][]any, len(starts))
		for slot := range values {
			values[slot] = make([]any, len(cols))
			for j, c := range columns {
				values[slot][j] = c.values[slot]
			}
		}
		times := slices.Clone(starts)
		if p.interval == 0 {
			times[0] = time.Unix(0, 0)
			if p.bounded {
				times[0] = p.from
			}
			if oneSelector(cols) && out == nil && values[0][0] != nil {
				at, v, err := selected(values[0][0])
				if err != nil {
					return err
				}
				if !at.IsZero() {
					times[0], values[0][0] = at, v
				}
			}
		} else {
			times, values, events = w.rows(starts, values, events, p.from, p.to, p.desc)
		}
		rows = cut(x.finish(st, cols, times, values, events, p.desc), st.Offset, st.Limit)
	}
	if len(rows) == 0 {
		return nil
	}
	s := api.InfluxQLSeries{Name: p.table, Tags: g.tags, Columns: []string{"time"}, Values: make([][]any, 0, len(rows))}
	if out == nil {
		for _, c := range cols {
			s.Columns = append(s.Columns, c.name)
		}
	} else {
		for _, o := range out {
			s.Columns = append(s.Columns, o.name)
		}
	}
	for _, r := range rows {
		vs := r.values
		if out != nil {
			vs = outValues(out, r.values)
		}
		s.Values = append(s.Values, append([]any{x.timeValue(r.t, p.loc)}, vs...))
	}
	return emit(s)
}

// toFloat reads a number of an aggregate's results.
func toFloat(v any) (float64, bool) {
	switch v := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		return f, err == nil
	case float64:
		return v, true
	case int64:
		return float64(v), true
	case int:
		return float64(v), true
	}
	return 0, false
}

// fieldAndUnit reads the arguments of a function of a field and an
// optional unit (elapsed(f[, unit]), integral(f[, unit])): the unit is
// def when not given, and a unit that is no positive duration is the
// error badUnit.
func fieldAndUnit(call *iql.Call, c aggColumn, def time.Duration, badUnit string) (aggColumn, error) {
	ref, ok := call.Args[0].(*iql.VarRef)
	if !ok || len(call.Args) > 2 {
		return c, fmt.Errorf("%s(): %w but as %s(field[, unit])", call.Name, ErrUnsupported, call.Name)
	}
	c.field, c.unit = ref.Val, def
	if len(call.Args) == 2 {
		d, ok := call.Args[1].(*iql.DurationLiteral)
		if !ok || d.Val <= 0 {
			return c, errors.New(badUnit)
		}
		c.unit = d.Val
	}
	return c, nil
}
