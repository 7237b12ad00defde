package server_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	iql "github.com/influxdata/influxql"
	"github.com/stretchr/testify/require"
)

// knownDifference is a way timetable's answer may differ from InfluxDB's
// that docs/influxql.md's "Differences from InfluxDB" says: doc is a text
// of that section (checkKnownDifferencesDocumented makes sure it is
// there), and applies tells a statement's difference as this one. A
// name that starts with "open: " marks a bug still to fix, not a choice:
// its entry and its line of the doc go once it is fixed.
type knownDifference struct {
	name    string
	doc     string
	applies func(e *diffEnv, c *diffCase) bool
}

// knownDifferences are tried in order; the first that applies is the
// difference's category. Those that look at the answers come first, then
// those told by what the statement is made of.
var knownDifferences []knownDifference

// The list is set in init: an entry classifies again (classify).
func init() { knownDifferences = append(knownDifferenceList(), functionDifferences()...) }

func knownDifferenceList() []knownDifference {
	return []knownDifference{
		{
			name: "bucket interval that does not divide a day",
			doc:  "**Buckets** are the engine's",
			applies: func(_ *diffEnv, c *diffCase) bool {
				return strings.Contains(string(c.timetable), "that divides a day")
			},
		},
		{
			name: "first/last/median/percentile/stddev/count(distinct) over several series or days",
			doc:  "**Merging.** An aggregate of several series",
			applies: func(_ *diffEnv, c *diffCase) bool {
				tt := string(c.timetable)
				return strings.Contains(tt, "series at once is not supported") || strings.Contains(tt, "over more than one bucket of the engine is not supported")
			},
		},
		{
			name: "integer fields are numbers",
			doc:  "integers and floats are not told apart (`SHOW FIELD KEYS` says `float`, and `fill(1.5)` or `fill(linear)` of an aggregate of integers is not cut to an integer)",
			applies: func(_ *diffEnv, c *diffCase) bool {
				if c.stmt.intField && (c.stmt.fill == "-1.5" || c.stmt.fill == "linear") {
					return true
				}
				if c.stmt.show != "FIELD KEYS" {
					return false
				}
				return sameDiffJSON(decodeAnswer([]byte(strings.ReplaceAll(string(rawBody(c.influx)), `"integer"`, `"float"`))), c.b)
			},
		},
		{
			name: "first()/last() among events of one time",
			doc:  "`first()` and `last()` among events of one time",
			applies: func(e *diffEnv, c *diffCase) bool {
				firstLast := func(col string) bool { return strings.HasPrefix(col, "first") || strings.HasPrefix(col, "last") }
				if sameBut(c.a, c.b, firstLast) {
					return true
				}
				// An outer aggregate over an inner last() (sum(last) FROM
				// (SELECT last(f) …)) differs where the inner does: the
				// inner alone, over the range the outer gives it, differs
				// only in its selectors.
				if c.stmt.subquery {
					inner := innerOverOuterRange(c.stmt.text)
					if inner == "" {
						return false
					}
					s := c.stmt
					s.text, s.subquery, s.kind = inner, false, "aggregate"
					r := e.run(s, "full")
					return !r.same && sameBut(r.a, r.b, firstLast)
				}
				// A transform of first() or last() (derivative(last(f)))
				// differs where its argument does: the statement with
				// the selectors in the transforms' place differs only in
				// them, over the range the transforms read (one interval
				// before the statement's, after it under DESC) and without
				// LIMIT or OFFSET, which cut the transforms' rows after
				// they have read every bucket.
				unwrapped := transformOfFirstLast.ReplaceAllString(c.stmt.text, "$1")
				if unwrapped == c.stmt.text {
					return false
				}
				if m := transformOfFirstLast.FindStringSubmatch(c.stmt.text); !strings.HasPrefix(m[0], "cumulative_sum(") {
					unwrapped = widenedRange(unwrapped)
				}
				s := c.stmt
				s.text, s.limited = withoutLimits(unwrapped), false
				r := e.run(s, "full")
				return !r.same && sameBut(r.a, r.b, firstLast)
			},
		},
		{
			name: "stddev() of one value filled",
			doc:  "`stddev()` of a bucket of one value is null, and `fill()`",
			applies: func(_ *diffEnv, c *diffCase) bool {
				return slices.Contains(c.stmt.functions, "stddev") && c.stmt.fill != "" && c.stmt.fill != "null" && c.stmt.fill != "none" &&
					sameBut(c.a, c.b, func(col string) bool { return strings.HasPrefix(col, "stddev") })
			},
		},
		{
			name: "percentile() of too few values in the first bucket",
			doc:  "A `percentile()` of too few values",
			applies: func(e *diffEnv, c *diffCase) bool {
				// A SELECT of percentile() alone that InfluxDB answers
				// with no series.
				if len(c.stmt.functions) == 0 || refuses(200, c.a) {
					return false
				}
				if !c.stmt.transform {
					for _, fn := range c.stmt.functions {
						if fn != "percentile" {
							return false
						}
					}
					return len(seriesOf(c.a)) == 0
				}
				// A transform of percentile() (derivative(percentile(f, 5)))
				// reads what percentile() alone does over the range the
				// transform reads: InfluxDB answers that with no series,
				// and the transform no values. The statement's other
				// columns answer alike on their own.
				alone, rest := splitFields(c.stmt.text, func(f string) bool { return transformOfPercentile.MatchString(f) })
				unwrapped := transformOfPercentile.ReplaceAllString(alone, "$1")
				if alone == "" || unwrapped == alone || transformOfPercentile.MatchString(unwrapped) {
					return false
				}
				s := c.stmt
				s.text, s.transform, s.limited = withoutLimits(widenedRange(unwrapped)), false, false
				r := e.run(s, "full")
				if len(seriesOf(r.a)) != 0 || refuses(200, r.a) || len(seriesOf(r.b)) == 0 {
					return false
				}
				if rest == "" {
					return len(seriesOf(c.a)) == 0
				}
				s = c.stmt
				s.text = rest
				return e.run(s, "full").same
			},
		},
	}
}

// transformOfFirstLast finds a transform of first() or last() in a
// statement's text, the selector in its first group.
var transformOfFirstLast = regexp.MustCompile(`\w+\(((?:first|last)\(\w+\))(?:, \w+)?\)`)

// transformOfPercentile finds a transform of percentile() in a
// statement's text, the percentile() in its first group.
var transformOfPercentile = regexp.MustCompile(`\w+\((percentile\(\w+, [0-9.]+\))(?:, \w+)?\)`)

// splitFields is a SELECT with only the fields that keep reports, and
// the SELECT with only the others; "" for one without any.
func splitFields(text string, keep func(field string) bool) (kept, others string) {
	st, err := iql.ParseStatement(text)
	if err != nil {
		return "", ""
	}
	sel, ok := st.(*iql.SelectStatement)
	if !ok {
		return "", ""
	}
	var in, out iql.Fields
	for _, f := range sel.Fields {
		if keep(f.String()) {
			in = append(in, f)
		} else {
			out = append(out, f)
		}
	}
	write := func(fields iql.Fields) string {
		if len(fields) == 0 {
			return ""
		}
		sel.Fields = fields
		return sel.String()
	}
	return write(in), write(out)
}

// withoutLimits is a SELECT without its LIMIT and OFFSET; the text as it
// was when it is not one.
func withoutLimits(text string) string {
	st, err := iql.ParseStatement(text)
	if err != nil {
		return text
	}
	sel, ok := st.(*iql.SelectStatement)
	if !ok || (sel.Limit == 0 && sel.Offset == 0) {
		return text
	}
	sel.Limit, sel.Offset = 0, 0
	return sel.String()
}

// innerOverOuterRange is the inner SELECT of a SELECT … FROM (SELECT …)
// with the outer's time range added to its condition, as InfluxDB gives
// the inner the outer's range; "" when the text is not one or its outer
// has no time range.
func innerOverOuterRange(text string) string {
	st, err := iql.ParseStatement(text)
	if err != nil {
		return ""
	}
	sel, ok := st.(*iql.SelectStatement)
	if !ok || sel.Condition == nil || len(sel.Sources) != 1 {
		return ""
	}
	sub, ok := sel.Sources[0].(*iql.SubQuery)
	if !ok {
		return ""
	}
	_, tr, err := iql.ConditionExpr(sel.Condition, nil)
	if err != nil || (tr.Min.IsZero() && tr.Max.IsZero()) {
		return ""
	}
	inner := sub.Statement
	cond := inner.Condition
	for _, b := range []struct {
		op iql.Token
		t  time.Time
	}{{iql.GTE, tr.Min}, {iql.LTE, tr.Max}} {
		if b.t.IsZero() {
			continue
		}
		bound := &iql.BinaryExpr{Op: b.op, LHS: &iql.VarRef{Val: "time"}, RHS: &iql.StringLiteral{Val: b.t.UTC().Format(time.RFC3339Nano)}}
		if cond == nil {
			cond = bound
		} else {
			cond = &iql.BinaryExpr{Op: iql.AND, LHS: &iql.ParenExpr{Expr: cond}, RHS: bound}
		}
	}
	inner.Condition = cond
	return inner.String()
}

// widenedRange is a SELECT of GROUP BY time() over one interval more
// than its own range: before it, or after it under ORDER BY time DESC;
// the text as it was when it is not one, or has no such bound.
func widenedRange(text string) string {
	st, err := iql.ParseStatement(text)
	if err != nil {
		return text
	}
	sel, ok := st.(*iql.SelectStatement)
	if !ok || sel.Condition == nil {
		return text
	}
	interval, err := sel.GroupByInterval()
	if err != nil || interval <= 0 {
		return text
	}
	cond, tr, err := iql.ConditionExpr(sel.Condition, nil)
	if err != nil {
		return text
	}
	if sel.TimeAscending() {
		if tr.Min.IsZero() {
			return text
		}
		tr.Min = tr.Min.Add(-interval)
	} else {
		if tr.Max.IsZero() {
			return text
		}
		tr.Max = tr.Max.Add(interval)
	}
	bound := func(op iql.Token, t time.Time) iql.Expr {
		return &iql.BinaryExpr{Op: op, LHS: &iql.VarRef{Val: "time"}, RHS: &iql.StringLiteral{Val: t.UTC().Format(time.RFC3339Nano)}}
	}
	var timeCond iql.Expr
	for _, b := range []struct {
		op iql.Token
		t  time.Time
	}{{iql.GTE, tr.Min}, {iql.LTE, tr.Max}} {
		if b.t.IsZero() {
			continue
		}
		if timeCond == nil {
			timeCond = bound(b.op, b.t)
		} else {
			timeCond = &iql.BinaryExpr{Op: iql.AND, LHS: timeCond, RHS: bound(b.op, b.t)}
		}
	}
	if cond != nil {
		timeCond = &iql.BinaryExpr{Op: iql.AND, LHS: &iql.ParenExpr{Expr: cond}, RHS: timeCond}
	}
	sel.Condition = timeCond
	return sel.String()
}

// classify is the known difference of a case's, or nil.
func classify(e *diffEnv, c *diffCase) *knownDifference {
	for i := range knownDifferences {
		if e.withoutOpen && strings.HasPrefix(knownDifferences[i].name, "open: ") {
			continue
		}
		if knownDifferences[i].applies(e, c) {
			return &knownDifferences[i]
		}
	}
	return nil
}

// checkKnownDifferencesDocumented fails unless every known difference's
// doc is a text of docs/influxql.md's "Differences from InfluxDB", so
// that the doc and the test cannot drift apart.
func checkKnownDifferencesDocumented(t *testing.T) {
	t.Helper()
	doc, err := os.ReadFile("../docs/influxql.md")
	require.NoError(t, err)
	section := string(doc)
	start := strings.Index(section, "\n## Differences from InfluxDB\n")
	require.GreaterOrEqual(t, start, 0, "docs/influxql.md has no section Differences from InfluxDB")
	section = section[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	// Lines of a bullet are joined, so that a doc text may run across
	// the doc's line breaks.
	section = strings.Join(strings.Fields(section), " ")
	for _, k := range knownDifferences {
		require.Contains(t, section, strings.Join(strings.Fields(k.doc), " "),
			"known difference %q: its line is not in docs/influxql.md, Differences from InfluxDB", k.name)
	}
}

// rawBody is the body of a case's "status body" answer.
func rawBody(answer []byte) []byte {
	_, body, _ := strings.Cut(string(answer), " ")
	return []byte(body)
}

// seriesOf is the series of an answer's results.
func seriesOf(v any) []any {
	m, _ := v.(map[string]any)
	results, _ := m["results"].([]any)
	var out []any
	for _, r := range results {
		rm, _ := r.(map[string]any)
		s, _ := rm["series"].([]any)
		out = append(out, s...)
	}
	return out
}

// sameBut reports whether two answers are alike but for the values of
// the columns that blank names.
func sameBut(a, b any, blank func(column string) bool) bool {
	return sameDiffJSON(blankColumns(a, blank), blankColumns(b, blank))
}

// blankColumns is an answer with the values of the columns that blank
// names null.
func blankColumns(v any, blank func(column string) bool) any {
	raw, _ := json.Marshal(v)
	w := decodeAnswer(raw)
	for _, s := range seriesOf(w) {
		sm, _ := s.(map[string]any)
		columns, _ := sm["columns"].([]any)
		values, _ := sm["values"].([]any)
		for i, col := range columns {
			if name, _ := col.(string); !blank(name) {
				continue
			}
			for _, row := range values {
				if r, _ := row.([]any); i < len(r) {
					r[i] = nil
				}
			}
		}
	}
	return w
}

// withoutNullRows is an answer without the rows of its series that hold
// nothing but nulls beside their time.
func withoutNullRows(v any) any {
	raw, _ := json.Marshal(v)
	w := decodeAnswer(raw)
	for _, s := range seriesOf(w) {
		sm, _ := s.(map[string]any)
		values, _ := sm["values"].([]any)
		var keep []any
		for _, row := range values {
			r, _ := row.([]any)
			if slices.ContainsFunc(r[min(1, len(r)):], func(cell any) bool { return cell != nil }) {
				keep = append(keep, row)
			}
		}
		sm["values"] = keep
	}
	return withoutEmptySeries(w)
}

// withoutEmptySeries is an answer without its series whose every row
// holds nothing but nulls and zeros beside its time.
func withoutEmptySeries(v any) any {
	raw, _ := json.Marshal(v)
	w := decodeAnswer(raw)
	m, _ := w.(map[string]any)
	results, _ := m["results"].([]any)
	for _, r := range results {
		rm, _ := r.(map[string]any)
		series, _ := rm["series"].([]any)
		var keep []any
		for _, s := range series {
			sm, _ := s.(map[string]any)
			values, _ := sm["values"].([]any)
			empty := true
			for _, row := range values {
				r, _ := row.([]any)
				for _, cell := range r[min(1, len(r)):] {
					if cell != nil && cell != json.Number("0") {
						empty = false
					}
				}
			}
			if !empty {
				keep = append(keep, s)
			}
		}
		if len(keep) == 0 {
			delete(rm, "series")
		} else {
			rm["series"] = keep
		}
	}
	return w
}
