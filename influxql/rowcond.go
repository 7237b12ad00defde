package influxql

import (
	"encoding/json"

	iql "github.com/influxdata/influxql"

	"github.com/timetabledb/timetable/event"
)

// # Conditions that read a tag and a field together
//
// A comparison of a tag with a field (host = value), or a disjunction of
// a condition on tags and one on fields, cannot pick series from the
// series index nor be the engine's filter on fields: a raw SELECT
// evaluates it on each point read, as InfluxDB does, its tags those of
// its series (a tag it lacks is "", tagless.go) and its fields its
// values (numbers as float64, so that a tag, a string, never equals a
// number). A SELECT of aggregates with one is refused.

// matchesRow reports whether a point meets the plan's condition that
// reads tags and fields together; true when there is none.
func (p *plan) matchesRow(ev event.Event) bool {
	if p.rowCond == nil {
		return true
	}
	m := make(map[string]any, len(ev.Fields)+len(p.tagKeys))
	for _, k := range p.tagKeys {
		m[k] = ""
	}
	for _, k := range p.absent {
		m[k] = ""
	}
	for k, v := range Tags(ev.Series) {
		m[k] = v
	}
	for k, v := range ev.Fields {
		if p.isTag(k) {
			continue // the tag, kept as a field too, is read from the series
		}
		if n, ok := v.(json.Number); ok {
			f, err := n.Float64()
			if err != nil {
				continue
			}
			m[k] = f
			continue
		}
		m[k] = v
	}
	return evalRow(p.rowCond, m)
}

// evalRow evaluates a condition on a point's tags and fields as InfluxDB
// does: a comparison that reads a field the point lacks is false (b =
// false too, which InfluxQL's evaluator would hold true of a missing b).
func evalRow(e iql.Expr, m map[string]any) bool {
	switch e := e.(type) {
	case *iql.ParenExpr:
		return evalRow(e.Expr, m)
	case *iql.BinaryExpr:
		switch e.Op {
		case iql.AND:
			return evalRow(e.LHS, m) && evalRow(e.RHS, m)
		case iql.OR:
			return evalRow(e.LHS, m) || evalRow(e.RHS, m)
		}
		for _, r := range refs(e) {
			if _, ok := m[r]; !ok {
				return false
			}
		}
	}
	return (&iql.ValuerEval{Valuer: iql.MapValuer(m)}).EvalBool(e)
}
