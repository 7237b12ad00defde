package influxql_test

import (
	"errors"
	"strings"
	"testing"

	iql "github.com/influxdata/influxql"

	"github.com/timetabledb/timetable/influxql"
)

// depthCounter measures a statement as the parser built it: the deepest
// nesting of parentheses and calls, and its binary operators.
type depthCounter struct {
	depth int
	most  *int
	ops   *int
}

func (v depthCounter) Visit(n iql.Node) iql.Visitor {
	switch n.(type) {
	case *iql.ParenExpr, *iql.Call:
		v.depth++
	case *iql.BinaryExpr:
		*v.ops++
	}
	*v.most = max(*v.most, v.depth)
	return v
}

// Whatever the text, Parse returns statements or an error, and what it
// returns holds to its bounds: the check of the text before the parser
// counts at least what the parser then builds, whatever strings, names,
// regular expressions and comments hide.
func FuzzParse(f *testing.F) {
	for _, q := range []string{
		"SELECT v FROM iq OFFSET 9223372036854775807",
		"SELECT v FROM iq LIMIT 9223372036854775808",
		"SELECT count(v) FROM iq WHERE time > now() - 1h GROUP BY time(0s)",
		";",
		"SELECT v FROM iq WHERE " + terms(2000, "AND"),
		"SELECT v FROM iq WHERE " + nested(40, "v > 1"),
		"SELECT * / 2 FROM iq WHERE ((v > 1))",
		"SELECT v::field / 2, mean(v) FROM /m(x)/ WHERE h =~ /'\\/(/ AND (v > 1) -- ((\n",
		`SHOW TAG VALUES WITH KEY =~ /"/ WHERE "a""(" = ')' /* ( */ AND (b = 'c')`,
		"SELECT derivative(mean(v), 1s) FROM iq WHERE time > now() - 1d GROUP BY time(1h), * fill(linear) SLIMIT 2 SOFFSET 1",
		// A / where an operand is expected, and no unescaped / after it
		// on the line: each such / was once scanned to the line's end.
		"SELECT v FROM iq WHERE v = /" + strings.Repeat(`\/`, 3000),
	} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		stmts, err := influxql.Parse(q, nil)
		if err != nil {
			if errors.Is(err, influxql.ErrQueryLimit) && !strings.Contains(err.Error(), "statement") {
				t.Fatalf("%q: a bound's error names no statement: %v", q, err)
			}
			return
		}
		for _, st := range stmts {
			var most, ops int
			iql.Walk(depthCounter{most: &most, ops: &ops}, st)
			if most > influxql.MaxDepth || ops > influxql.MaxOperators {
				t.Fatalf("%q parsed to a statement %d deep with %d operators, past the bounds", q, most, ops)
			}
			if s, ok := st.(*iql.SelectStatement); ok && (s.Limit < 0 || s.Offset < 0 || s.SLimit < 0 || s.SOffset < 0) {
				t.Fatalf("%q: a negative LIMIT, OFFSET, SLIMIT or SOFFSET", q)
			}
		}
	})
}
