package influxql

import (
	"context"
	"slices"
	"sort"
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
// time the group's points.

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
// (first or last) than the pick k.
func (k pick) better(fn string, t time.Time, v any) bool {
	switch {
	case !k.ok:
		return true
	case !t.Equal(k.t):
		return t.Before(k.t) == (fn == "first")
	}
	return greater(v, k.v)
}

// pickPoints picks the values of the columns marked in byPoints (first
// and last) of each bucket starting at starts, from the points of the
// group's series: picks[j][slot] for column j.
func (x *executor) pickPoints(ctx context.Context, p *plan, g group, cols []aggColumn, byPoints []bool, starts []time.Time) ([][]pick, error) {
	picks := make([][]pick, len(cols))
	var fieldsRead []string
	for j, c := range cols {
		if byPoints[j] {
			picks[j] = make([]pick, len(starts))
			if !slices.Contains(fieldsRead, c.field) {
				fieldsRead = append(fieldsRead, c.field)
			}
		}
	}
	slot := func(t time.Time) int {
		if p.interval == 0 {
			return 0
		}
		return sort.Search(len(starts), func(i int) bool { return starts[i].After(t) }) - 1
	}
	for _, s := range g.series {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		q := engine.Query{Table: p.table, Series: s, From: p.from, To: p.to, Fields: fieldsRead, Filter: p.filter, Limit: pageSize}
		for {
			page, err := x.eng.Query(ctx, x.tenant, q)
			if err != nil {
				return nil, &EngineError{Err: err}
			}
			for _, ev := range page.Events {
				if s == "" && ev.Series != "" {
					continue // the engine reads every series for "" (tagless.go)
				}
				i := slot(ev.Time)
				if i < 0 {
					continue
				}
				for j, c := range cols {
					if !byPoints[j] {
						continue
					}
					v, ok := ev.Fields[c.field]
					if ok && picks[j][i].better(c.fn, ev.Time, v) {
						picks[j][i] = pick{t: ev.Time, v: v, ok: true}
					}
				}
			}
			if page.NextCursor == "" {
				break
			}
			q.Cursor = page.NextCursor
		}
	}
	return picks, nil
}
