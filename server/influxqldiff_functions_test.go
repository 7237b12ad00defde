package server_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// diffFunctionsShare is how many statements of the differential test
// are drawn for each of genFunctions': one in this many more.
const diffFunctionsShare = 4

// genFunctions draws a statement of what docs/influxql.md lists beyond
// the plain aggregates: a subquery (an outer aggregate over an inner
// one, a coarser outer GROUP BY time(), tags passed through, WHERE on
// the outer), integral, mode, top and bottom with tags or beside fields,
// distinct beside other columns (refused alike), and a condition on a tag
// and a field together in a SELECT of aggregates.
func genFunctions(rng *rand.Rand) diffStatement {
	switch rng.IntN(7) {
	case 0, 1:
		return genSubquery(rng)
	case 6:
		return genSample(rng)
	case 2:
		return genIntegral(rng)
	case 3:
		return genMode(rng)
	case 4:
		return genTop(rng)
	}
	return genTagOrField(rng)
}

// numericField draws a number field of s's measurement.
func numericField(rng *rand.Rand, s *diffStatement) diffField {
	fields := fieldsOf(s)
	for {
		f := fields[rng.IntN(len(fields))]
		if f.typ == "float" || f.typ == "integer" {
			s.intField = s.intField || f.typ == "integer"
			return f
		}
	}
}

// genOneFrom draws one measurement.
func genOneFrom(rng *rand.Rand, s *diffStatement) string {
	m := diffSchema[rng.IntN(len(diffSchema))].name
	s.measurements = []string{m}
	return m
}

// genSubquery draws SELECT outer(inner) FROM (SELECT inner(f) FROM m
// WHERE … GROUP BY time(i)[, tag]) [WHERE …] [GROUP BY time(coarser)[,
// tag]] [fill], or a raw outer SELECT of the inner's column.
func genSubquery(rng *rand.Rand) diffStatement {
	s := diffStatement{kind: "aggregate", subquery: true}
	from := genOneFrom(rng, &s)
	f := numericField(rng, &s)
	innerFn := []string{"max", "min", "mean", "sum", "count", "last", "spread"}[rng.IntN(7)]
	s.functions = append(s.functions, innerFn)
	ivs := []time.Duration{time.Minute, 5 * time.Minute, 10 * time.Minute}
	iv := ivs[rng.IntN(len(ivs))]
	innerGroup := fmt.Sprintf("time(%s)", fmtDuration(iv))
	tags := tagsOf(&s)
	tag := tags[rng.IntN(len(tags))].key
	byTag := rng.IntN(2) == 0
	if byTag {
		innerGroup += ", " + tag
	}
	// The range on the inner, on the outer, or on both.
	var innerWhere, outerWhere []string
	outerRange := true
	switch rng.IntN(3) {
	case 0:
		innerWhere = append(innerWhere, genTimeRange(rng, &s))
		outerRange = false
	case 1:
		outerWhere = append(outerWhere, genTimeRange(rng, &s))
	default:
		innerWhere = append(innerWhere, genTimeRange(rng, &s))
		outerWhere = append(outerWhere, genTimeRange(rng, &s))
	}
	if rng.IntN(3) == 0 {
		innerWhere = append(innerWhere, genTagCondition(rng, &s))
	}
	inner := fmt.Sprintf("SELECT %s(%s) FROM %s", innerFn, f.name, from)
	if len(innerWhere) > 0 {
		inner += " WHERE " + strings.Join(innerWhere, " AND ")
	}
	inner += " GROUP BY " + innerGroup
	if byTag && rng.IntN(3) == 0 {
		outerWhere = append(outerWhere, fmt.Sprintf("%s = '%s'", tag, tags[0].values[0]))
	}
	if rng.IntN(4) == 0 {
		outerWhere = append(outerWhere, fmt.Sprintf("%s > %d", innerFn, rng.IntN(60)-10))
	}
	where := ""
	if len(outerWhere) > 0 {
		where = " WHERE " + strings.Join(outerWhere, " AND ")
	}
	if rng.IntN(5) == 0 {
		// A raw outer SELECT of the inner's column.
		s.kind = "raw"
		group := ""
		if byTag && rng.IntN(2) == 0 {
			group = " GROUP BY " + tag
			s.groupByTags = true
		}
		s.text = fmt.Sprintf("SELECT %s FROM (%s)%s%s%s", innerFn, inner, where, group, genLimits(rng, &s))
		return s
	}
	outerFn := []string{"mean", "max", "min", "sum", "count", "median", "last", "first", "stddev", "spread"}[rng.IntN(10)]
	s.functions = append(s.functions, outerFn)
	var group []string
	// An outer GROUP BY time() without a time range of its own ends now,
	// on InfluxDB as here (an aggregate's open end), and the two servers
	// of the test do not share a now: timetable's is the fixture's clock.
	if len(outerWhere) > 0 && rng.IntN(2) == 0 && outerRange {
		// Coarser than the inner's.
		s.groupByTime = true
		s.interval = iv * time.Duration(1+rng.IntN(3))
		group = append(group, fmt.Sprintf("time(%s)", fmtDuration(s.interval)))
	}
	if byTag && rng.IntN(2) == 0 {
		group = append(group, tag)
		s.groupByTags = true
	}
	text := fmt.Sprintf("SELECT %s(%s) FROM (%s)%s", outerFn, innerFn, inner, where)
	if len(group) > 0 {
		text += " GROUP BY " + strings.Join(group, ", ")
	}
	if s.groupByTime && rng.IntN(2) == 0 {
		s.fill = []string{"null", "none", "previous", "0"}[rng.IntN(4)]
		text += " fill(" + s.fill + ")"
	}
	s.text = text
	return s
}

// fmtDuration writes a duration as InfluxQL does: 1m, 5m, 10s.
func fmtDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}

// genIntegral draws integral(f[, unit]) alone, maybe over GROUP BY
// time(), of one series of one measurement: of several, InfluxDB keeps
// one of their points of one instant in an order of its own
// (docs/influxql.md, Differences).
func genIntegral(rng *rand.Rand) diffStatement {
	s := diffStatement{kind: "aggregate", functions: []string{"integral"}, tagCondition: true}
	from := genOneFrom(rng, &s)
	f := numericField(rng, &s)
	call := fmt.Sprintf("integral(%s)", f.name)
	if rng.IntN(2) == 0 {
		call = fmt.Sprintf("integral(%s, %s)", f.name, []string{"1ms", "1s", "1m", "1h"}[rng.IntN(4)])
	}
	s.groupByTime = rng.IntN(2) == 0
	conds := []string{}
	for _, t := range tagsOf(&s) {
		conds = append(conds, fmt.Sprintf("%s = '%s'", t.key, t.values[rng.IntN(len(t.values))]))
	}
	if s.groupByTime || rng.IntN(2) == 0 {
		conds = append(conds, genTimeRange(rng, &s))
	}
	if rng.IntN(4) == 0 {
		conds = append(conds, genFieldCondition(rng, &s))
	}
	where := " WHERE " + strings.Join(conds, " AND ")
	text := fmt.Sprintf("SELECT %s FROM %s%s", call, from, where)
	if s.groupByTime {
		iv := []string{"1m", "5m", "10m", "15m"}[rng.IntN(4)]
		s.interval, _ = time.ParseDuration(iv)
		text += " GROUP BY time(" + iv + ")"
		if rng.IntN(3) == 0 {
			s.fill = []string{"null", "none", "0"}[rng.IntN(3)]
			text += " fill(" + s.fill + ")"
		}
	}
	if rng.IntN(5) == 0 {
		text += " ORDER BY time DESC"
	}
	if rng.IntN(5) == 0 {
		s.limited = true
		text += fmt.Sprintf(" LIMIT %d", 1+rng.IntN(3))
	}
	s.text = text
	return s
}

// genMode draws mode(f), maybe beside other aggregates, maybe over
// GROUP BY time() and tags.
func genMode(rng *rand.Rand) diffStatement {
	s := diffStatement{kind: "aggregate", functions: []string{"mode"}}
	from := genOneFrom(rng, &s)
	fields := fieldsOf(&s)
	f := fields[rng.IntN(len(fields))]
	s.intField = f.typ == "integer"
	cols := []string{fmt.Sprintf("mode(%s)", f.name)}
	if rng.IntN(3) == 0 {
		cols = append(cols, genCall(rng, &s, false))
	}
	s.groupByTime = rng.IntN(2) == 0
	where := genWhere(rng, &s, s.groupByTime)
	group := genGroupBy(rng, &s, []string{"1m", "5m", "10m"}, 3)
	text := fmt.Sprintf("SELECT %s FROM %s%s%s", strings.Join(cols, ", "), from, where, group)
	s.text = text + genLimits(rng, &s)
	return s
}

// genTop draws top or bottom with a tag, or beside a tag and a field,
// or distinct beside other columns (which both refuse).
func genTop(rng *rand.Rand) diffStatement {
	s := diffStatement{kind: "aggregate"}
	from := genOneFrom(rng, &s)
	f := numericField(rng, &s)
	fn := []string{"top", "bottom"}[rng.IntN(2)]
	s.functions = []string{fn}
	tags := tagsOf(&s)
	tag := tags[rng.IntN(len(tags))].key
	fields := fieldsOf(&s)
	other := fields[rng.IntN(len(fields))].name
	var cols string
	switch rng.IntN(4) {
	case 0:
		cols = fmt.Sprintf("%s(%s, %s, %d)", fn, f.name, tag, 1+rng.IntN(3))
	case 1:
		cols = fmt.Sprintf("%s(%s, %d), %s, %s", fn, f.name, 1+rng.IntN(4), tag, other)
	case 2:
		cols = fmt.Sprintf("%s(%s, %s, %d), %s", fn, f.name, tag, 1+rng.IntN(3), other)
	default:
		s.functions = []string{"distinct"}
		cols = fmt.Sprintf("distinct(%s), %s", f.name, []string{other, "count(" + other + ")"}[rng.IntN(2)])
	}
	s.groupByTime = rng.IntN(3) == 0
	where := genWhere(rng, &s, s.groupByTime)
	group := genGroupBy(rng, &s, []string{"1m", "5m", "10m"}, 4)
	s.text = fmt.Sprintf("SELECT %s FROM %s%s%s", cols, from, where, group) + genLimits(rng, &s)
	return s
}

// genSample draws sample(f, N), N at times more than a bucket's points
// (every point, compared exactly), maybe over GROUP BY time() and tags.
func genSample(rng *rand.Rand) diffStatement {
	s := diffStatement{kind: "aggregate", functions: []string{"sample"}}
	from := genOneFrom(rng, &s)
	fields := fieldsOf(&s)
	f := fields[rng.IntN(len(fields))]
	s.groupByTime = rng.IntN(2) == 0
	where := genWhere(rng, &s, s.groupByTime)
	group := genGroupBy(rng, &s, []string{"1m", "5m", "10m"}, 3)
	s.text = fmt.Sprintf("SELECT sample(%s, %d) FROM %s%s%s", f.name, []int{1, 2, 3, 1000}[rng.IntN(4)], from, where, group)
	return s
}

// genGroupBy draws the GROUP BY clause of s: time() of one of
// intervals when s groups by time, and tags one time in tagOdds. It
// returns "" for neither.
func genGroupBy(rng *rand.Rand, s *diffStatement, intervals []string, tagOdds int) string {
	var group []string
	if s.groupByTime {
		iv := intervals[rng.IntN(len(intervals))]
		s.interval, _ = time.ParseDuration(iv)
		group = append(group, "time("+iv+")")
	}
	if rng.IntN(tagOdds) == 0 {
		group = append(group, genGroupByTags(rng, s)...)
	}
	if len(group) == 0 {
		return ""
	}
	return " GROUP BY " + strings.Join(group, ", ")
}

// sameShape reports whether two answers have the same series, each
// with the same columns and as many rows.
func sameShape(a, b any) bool {
	shape := func(v any) any {
		raw, _ := json.Marshal(v)
		w := decodeAnswer(raw)
		for _, s := range seriesOf(w) {
			sm, _ := s.(map[string]any)
			values, _ := sm["values"].([]any)
			sm["values"] = len(values)
		}
		return w
	}
	return sameDiffJSON(shape(a), shape(b))
}

// genTagOrField draws aggregates whose WHERE reads a tag and a field
// together: a tag OR a field, or a tag compared with a field.
func genTagOrField(rng *rand.Rand) diffStatement {
	s := diffStatement{kind: "aggregate"}
	from := genOneFrom(rng, &s)
	s.groupByTime = rng.IntN(2) == 0
	var cols []string
	for range 1 + rng.IntN(2) {
		cols = append(cols, genCall(rng, &s, false))
	}
	s.tagCondition, s.fieldCond = true, true
	tagCond := genTagCondition(rng, &s)
	fieldCond := genFieldCondition(rng, &s)
	conds := []string{fmt.Sprintf("(%s OR %s)", tagCond, fieldCond)}
	if s.groupByTime || rng.IntN(2) == 0 {
		conds = append(conds, genTimeRange(rng, &s))
	}
	text := fmt.Sprintf("SELECT %s FROM %s WHERE %s", strings.Join(cols, ", "), from, strings.Join(conds, " AND "))
	text += genGroupBy(rng, &s, diffIntervals, 3)
	if s.groupByTime && rng.IntN(2) == 0 {
		s.fill = []string{"null", "none", "previous", "linear", "0"}[rng.IntN(5)]
		text += " fill(" + s.fill + ")"
	}
	s.text = text + genLimits(rng, &s)
	return s
}

// functionDifferences are the known differences of genFunctions'
// statements.
func functionDifferences() []knownDifference {
	return []knownDifference{
		{
			name: "mode() of values that tie",
			doc:  "`mode()` of a bucket of more than 12 values whose most frequent ones tie",
			applies: func(_ *diffEnv, c *diffCase) bool {
				return slices.Contains(c.stmt.functions, "mode") && sameBut(c.a, c.b, func(col string) bool { return strings.HasPrefix(col, "mode") })
			},
		},
		{
			name: "top()/bottom() with LIMIT",
			doc:  "`top()` and `bottom()` with `LIMIT`",
			applies: func(_ *diffEnv, c *diffCase) bool {
				return (slices.Contains(c.stmt.functions, "top") || slices.Contains(c.stmt.functions, "bottom")) && c.stmt.limited
			},
		},
		{
			name: "sample() picks points at random",
			doc:  "`sample()` picks its points at random",
			applies: func(_ *diffEnv, c *diffCase) bool {
				return slices.Contains(c.stmt.functions, "sample") && sameShape(c.a, c.b)
			},
		},
		{
			name: "integral() of an integer field",
			doc:  "`integral()` of an integer field",
			applies: func(_ *diffEnv, c *diffCase) bool {
				return slices.Contains(c.stmt.functions, "integral") && c.stmt.intField
			},
		},
	}
}
