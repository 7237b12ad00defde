package influxql

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

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

// outColumn is a column of a SELECT of aggregates with math: the
// aggregate column col, or, with expr, arithmetic of aggregate columns,
// each named in expr by its index ("0", "1", ...).
type outColumn struct {
	name string
	col  int
	expr iql.Expr
	// ref is a field or tag beside a selector (SELECT max(v), host):
	// the selected point's (auxiliary.go).
	ref string
}

// aggColumns reads the fields of a SELECT of aggregates: the aggregate
// columns computed, and, when some field is math of them, the columns
// answered (nil when they are the aggregate columns).
func aggColumns(st *iql.SelectStatement, interval time.Duration) ([]aggColumn, []outColumn, error) {
	var cols []aggColumn
	var out []outColumn
	math := false
	names := columnNames(st.Fields)
	for _, f := range st.Fields {
		if r, ok := f.Expr.(*iql.VarRef); ok && r.Val == "time" {
			continue
		}
		name := names[len(out)]
		switch e := f.Expr.(type) {
		case *iql.VarRef:
			math = true
			out = append(out, outColumn{name: name, col: -1, ref: e.Val})
		case *iql.BinaryExpr, *iql.ParenExpr:
			math = true
			var err error
			rewritten := iql.RewriteExpr(iql.CloneExpr(f.Expr), func(e iql.Expr) iql.Expr {
				call, ok := e.(*iql.Call)
				if !ok || err != nil {
					return e
				}
				var c aggColumn
				if c, err = parseColumn(&iql.Field{Expr: call}, interval); err != nil {
					return e
				}
				c.name = call.Name
				cols = append(cols, c)
				return &iql.VarRef{Val: strconv.Itoa(len(cols) - 1)}
			})
			if err != nil {
				return nil, nil, err
			}
			out = append(out, outColumn{name: name, col: -1, expr: rewritten})
		default:
			c, err := parseColumn(f, interval)
			if err != nil {
				return nil, nil, err
			}
			c.name = name
			cols = append(cols, c)
			out = append(out, outColumn{name: name, col: len(cols) - 1})
		}
	}
	if len(cols) == 0 {
		return nil, nil, fmt.Errorf("%s: a SELECT of math needs an aggregate or a field", st)
	}
	if !math {
		return cols, nil, nil
	}
	return cols, out, nil
}

// outValues are a row's values of the columns answered, from those of
// the aggregate columns.
func outValues(out []outColumn, values []any) []any {
	row := make([]any, len(out))
	for i, o := range out {
		if o.expr == nil {
			row[i] = values[o.col]
			continue
		}
		m := make(map[string]any, len(values))
		for j, v := range values {
			if v != nil {
				m[strconv.Itoa(j)] = mathValue(v)
			}
		}
		row[i] = (&iql.ValuerEval{Valuer: iql.MapValuer(m)}).Eval(o.expr)
	}
	return row
}
