package influxql

import (
	"context"
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
