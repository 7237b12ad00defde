package influxql

import (
	"encoding/json"

	iql "github.com/influxdata/influxql"

	"github.com/timetabledb/timetable/event"
)

// # Math in SELECT
//
// A column of a raw SELECT may be arithmetic of fields and numbers
// (a + b, value * 2, (a + 1) / b), named as InfluxDB names it (a_b): a
// row is answered when one of the fields it reads is present, and the
// column is null when one of its own is absent. A column of a SELECT of
// aggregates may be arithmetic of aggregates and numbers (mean(a) * 2,
// max(b) - min(b)), each aggregate computed as a column of its own and
// the arithmetic applied to a bucket's values, null when one is. Numbers
// are computed in float64, as InfluxDB computes them.

// evalMath is the value of the arithmetic e of a point's fields.
func evalMath(e iql.Expr, ev event.Event) any {
	m := make(map[string]any, 2)
	for _, r := range refs(e) {
		if v, ok := ev.Fields[r]; ok {
			m[r] = mathValue(v)
		}
	}
	return (&iql.ValuerEval{Valuer: iql.MapValuer(m)}).Eval(e)
}

// mathValue is a value as arithmetic reads it: numbers as float64.
func mathValue(v any) any {
	if n, ok := v.(json.Number); ok {
		if f, err := n.Float64(); err == nil {
			return f
		}
	}
	return v
}
