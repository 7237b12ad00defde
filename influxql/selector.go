package influxql

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
)

// # Which point a selector picks
//
// first() and last() pick the earliest and the latest point; of points
// of one time (several series written at one instant), InfluxDB's
// reducers keep the greatest value (numbers by value, strings in byte
// order, true over false), and so does a statement of first() or last()
// alone without GROUP BY time(), which answers that point's time: its
// points at that time are read once more and the greatest kept
// (tieBreak). The engine's first and last of a bucket take the first
// series in its order instead, so buckets of GROUP BY time() may pick
// another of the tied values (docs/influxql.md, Differences).
//
// The engine's first and last of several series do not merge (a
// bucket's value comes without its time): first() and last() of a group
// of several series (SELECT last(temp) ... GROUP BY time(5m), site, as a
// stat panel sends) are picked from the group's points instead, read
// series by series in pages, each kept only while it is the best of its
// bucket so far, with the ties above: memory holds a point a bucket,
// time the group's points. median, percentile, stddev and
// count(distinct()) of several series, which do not merge either, are
// computed from the group's values, held (fromPoints).

// tieAtOnce bounds the points of one time a tie is broken among.
const tieAtOnce = 10_000

// tieBreak returns the greatest value of the column's field among the
// group's points at time at, v when none is read.
func (x *executor) tieBreak(ctx context.Context, p *plan, g group, c aggColumn, at time.Time, v any) (any, error) {
	q := engine.Query{Table: p.table, From: at, To: at, Fields: []string{c.field}, Filter: p.filter}
	has := func(ev event.Event) bool { _, ok := ev.Fields[c.field]; return ok }
	series := g.series
	if g.whole {
		series = []string{""}
	}
	best := v
	for _, s := range series {
		q.Series = s
		var got []event.Event
		var err error
		if s == "" && !g.whole {
			got, err = x.readTagless(ctx, q, tieAtOnce, has)
		} else {
			got, err = x.read(ctx, q, tieAtOnce, has)
		}
		if err != nil {
			return nil, err
		}
		for _, ev := range got {
			if w := ev.Fields[c.field]; greater(w, best) {
				best = w
			}
		}
	}
	return best, nil
}

// greater reports whether a is greater than b as InfluxDB's selectors
// compare values of one type; values of two types are not compared.
func greater(a, b any) bool {
	if fa, ok := toFloat(a); ok {
		fb, ok := toFloat(b)
		return ok && fa > fb
	}
	switch a := a.(type) {
	case string:
		b, ok := b.(string)
		return ok && strings.Compare(a, b) > 0
	case bool:
		b, ok := b.(bool)
		return ok && a && !b
	}
	return false
}

// pick is the point a selector keeps of one bucket.
type pick struct {
	t  time.Time
	v  any
	ok bool
}

// better reports whether a point at t of value v is a better pick of fn
// (first, last, min or max) than the pick k, as InfluxDB's reducers
// pick: max the greatest value and min the least, the earliest of
// equal ones; first and last the earliest and the latest, the greatest
// value of one time.
func (k pick) better(fn string, t time.Time, v any) bool {
	if !k.ok {
		return true
	}
	switch fn {
	case "max", "min":
		switch {
		case fn == "max" && greater(v, k.v), fn == "min" && greater(k.v, v):
			return true
		case greater(v, k.v) || greater(k.v, v):
			return false
		}
		return t.Before(k.t)
	}
	if !t.Equal(k.t) {
		return t.Before(k.t) == (fn == "first")
	}
	return greater(v, k.v)
}

// fromPoints are the functions of several series at once that are
// computed from the group's points (the engine's do not merge): first
// and last picked, median, percentile, stddev and count(distinct())
// from the values held, at most maxGroupPoints of a statement's group.
var fromPoints = []string{"first", "last", "median", "percentile", "stddev", "distinct"}

// maxGroupPoints bounds the values a group's median, percentile,
// stddev or count(distinct()) of several series holds at once.
const maxGroupPoints = 200_000

// pickPoints computes the columns marked in byPoints (fromPoints) of
// each bucket starting at starts from the points of the group's series:
// picks[j][slot] for column j, ok when the bucket has values.
func (x *executor) pickPoints(ctx context.Context, p *plan, g group, cols []aggColumn, byPoints []bool, starts []time.Time) ([][]pick, error) {
	picks := make([][]pick, len(cols))
	held := make([][][]any, len(cols))
	var fieldsRead []string
	for j, c := range cols {
		if byPoints[j] {
			picks[j] = make([]pick, len(starts))
			if c.fn != "first" && c.fn != "last" {
				held[j] = make([][]any, len(starts))
			}
			if !slices.Contains(fieldsRead, c.field) {
				fieldsRead = append(fieldsRead, c.field)
			}
		}
	}
	n := 0
	err := x.eachPoint(ctx, p, g, fieldsRead, func(ev event.Event) {
		i := slotOf(p, starts, ev.Time)
		if i < 0 {
			return
		}
		for j, c := range cols {
			if !byPoints[j] {
				continue
			}
			v, ok := ev.Fields[c.field]
			switch {
			case !ok:
			case held[j] != nil:
				held[j][i] = append(held[j][i], v)
				n++
			case picks[j][i].better(c.fn, ev.Time, v):
				picks[j][i] = pick{t: ev.Time, v: v, ok: true}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if n > maxGroupPoints {
		return nil, fmt.Errorf("%d values of a group of several series held for median, percentile, stddev or count(distinct()), over the limit of %d: narrow the range, GROUP BY the tags, or pick fewer series", n, maxGroupPoints)
	}
	for j, c := range cols {
		for i, vs := range held[j] {
			if len(vs) > 0 {
				// A percentile of too few values is no point on
				// InfluxDB: the bucket holds none of it (exists.go).
				v := ofValues(c, vs)
				picks[j][i] = pick{v: v, ok: v != nil || c.fn != "percentile"}
			}
		}
	}
	return picks, nil
}

// pickColumns is pickPoints of each column over its own range: the
// statement's, from and to, or p's for a transform's aggregate that reads
// beyond it (transform.go); one read when they are the same.
func (x *executor) pickColumns(ctx context.Context, p *plan, from, to time.Time, g group, cols []aggColumn, byPoints []bool, starts []time.Time) ([][]pick, error) {
	if from.Equal(p.from) && to.Equal(p.to) {
		return x.pickPoints(ctx, p, g, cols, byPoints, starts)
	}
	own, beyond := make([]bool, len(cols)), make([]bool, len(cols))
	for j, c := range cols {
		own[j] = byPoints[j] && !c.extended()
		beyond[j] = byPoints[j] && c.extended()
	}
	ownPlan := *p
	ownPlan.from, ownPlan.to = from, to
	picks := make([][]pick, len(cols))
	for _, part := range []struct {
		p    *plan
		mask []bool
	}{{p, beyond}, {&ownPlan, own}} {
		if !slices.Contains(part.mask, true) {
			continue
		}
		got, err := x.pickPoints(ctx, part.p, g, cols, part.mask, starts)
		if err != nil {
			return nil, err
		}
		for j := range cols {
			if part.mask[j] {
				picks[j] = got[j]
			}
		}
	}
	return picks, nil
}

// ofValues computes median, percentile, stddev or count(distinct()) of
// a bucket's values as InfluxDB does: the median the middle value, or
// the mean of the two middle ones; percentile N the value at rank
// floor(n*N/100 + 0.5), none at 0; the sample standard deviation, none
// of one value.
func ofValues(c aggColumn, vs []any) any {
	if c.fn == "distinct" {
		seen := map[any]bool{}
		for _, v := range vs {
			if f, ok := toFloat(v); ok {
				v = f
			}
			seen[v] = true
		}
		return int64(len(seen))
	}
	fs := make([]float64, 0, len(vs))
	for _, v := range vs {
		if f, ok := toFloat(v); ok {
			fs = append(fs, f)
		}
	}
	if len(fs) == 0 {
		return nil
	}
	slices.Sort(fs)
	switch c.fn {
	case "median":
		if len(fs)%2 == 1 {
			return fs[len(fs)/2]
		}
		return (fs[len(fs)/2-1] + fs[len(fs)/2]) / 2
	case "percentile":
		i := int(math.Floor(float64(len(fs))*c.pct/100+0.5)) - 1
		if i < 0 || i >= len(fs) {
			return nil
		}
		return fs[i]
	case "stddev":
		if len(fs) < 2 {
			return nil
		}
		mean := 0.0
		for _, f := range fs {
			mean += f
		}
		mean /= float64(len(fs))
		var sq float64
		for _, f := range fs {
			sq += (f - mean) * (f - mean)
		}
		return math.Sqrt(sq / float64(len(fs)-1))
	}
	return nil
}
