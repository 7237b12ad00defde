package server_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// diffStatement is a generated statement and what it is made of, which
// the known differences (influxqldiff_known_test.go) are told apart by.
type diffStatement struct {
	text  string
	epoch string // the epoch parameter, "" for RFC 3339 times
	kind  string // "raw", "aggregate" or "show"
	show  string // SHOW's object: "MEASUREMENTS", "TAG KEYS", …

	measurements []string // FROM, by name or by what /regex/ matches
	several      bool     // FROM names several measurements, or a regex
	timeRange    bool
	emptyRange   bool // the range holds no data
	tagCondition bool
	fieldCond    bool
	groupByTime  bool
	interval     time.Duration
	groupByTags  bool
	fill         string
	transform    bool
	functions    []string // the aggregates, transforms outside
	intField     bool     // an aggregate of an integer field
	limited      bool     // LIMIT or OFFSET
	where        bool     // SHOW … WHERE
	subquery     bool     // FROM (SELECT …)
}

// diffIntervals are GROUP BY time() intervals; 7m and 90s do not divide a
// day (a documented difference), and are drawn rarely.
var diffIntervals = []string{"10s", "30s", "1m", "1m", "5m", "5m", "10m", "15m", "1h"}

// genStatement draws a statement over the grammar docs/influxql.md says
// is supported.
func genStatement(rng *rand.Rand) diffStatement {
	var s diffStatement
	switch n := rng.IntN(20); {
	case n < 4:
		s = genShow(rng)
	case n < 9:
		s = genRaw(rng)
	default:
		s = genAggregate(rng)
	}
	return finishStatement(rng, s)
}

// finishStatement draws the epoch of a statement, and writes its text
// again with time < t+1ns for its time <= t.
func finishStatement(rng *rand.Rand, s diffStatement) diffStatement {
	s.epoch = []string{"", "", "ms", "s", "ns"}[rng.IntN(5)]
	return s
}

// genFrom draws the FROM clause: one measurement, mostly, or two by name,
// or a regex.
func genFrom(rng *rand.Rand, s *diffStatement) string {
	switch n := rng.IntN(10); {
	case n < 7:
		m := diffSchema[rng.IntN(len(diffSchema))].name
		s.measurements = []string{m}
		return m
	case n < 9:
		s.measurements, s.several = []string{"cpu", "mem"}, true
		return "cpu, mem"
	default:
		s.measurements, s.several = []string{"cpu", "mem"}, true
		return "/^(cpu|mem)$/"
	}
}

// fieldsOf is the fields every measurement of s has (of several, those
// of the first: the others then lack them).
func fieldsOf(s *diffStatement) []diffField {
	return diffMeasurementNamed(s.measurements[0]).fields
}

func tagsOf(s *diffStatement) []diffTag {
	if s.several {
		return []diffTag{{"host", []string{"a", "b"}}}
	}
	return diffMeasurementNamed(s.measurements[0]).tags
}

// genTimeRange draws a range: its ends at bucket edges and between
// them, each end in one of the forms InfluxQL takes.
func genTimeRange(rng *rand.Rand, s *diffStatement) string {
	offsets := []time.Duration{-5 * time.Minute, 0, 0, 30 * time.Second, 7 * time.Minute, 10 * time.Minute,
		12*time.Minute + 30*time.Second, 20 * time.Minute, 59 * time.Minute}
	lengths := []time.Duration{10 * time.Minute, 23 * time.Minute, 30 * time.Minute, time.Hour, time.Hour, 65 * time.Minute}
	lo := diffStart.Add(offsets[rng.IntN(len(offsets))])
	hi := lo.Add(lengths[rng.IntN(len(lengths))])
	if rng.IntN(25) == 0 {
		// Before the data, or after it and after the fixtures' now.
		lo = []time.Time{diffStart.Add(-2 * time.Hour), diffStart.Add(150 * time.Minute)}[rng.IntN(2)]
		hi = lo.Add(time.Hour)
		s.emptyRange = true
	}
	loOp := []string{">=", ">"}[rng.IntN(2)]
	hiOp := []string{"<", "<="}[rng.IntN(2)]
	s.timeRange = true
	return fmt.Sprintf("time %s %s AND time %s %s", loOp, timeLiteral(rng, lo), hiOp, timeLiteral(rng, hi))
}

// timeLiteral writes t as an RFC 3339 string, epoch nanoseconds, or
// epoch milliseconds or seconds with their unit.
func timeLiteral(rng *rand.Rand, t time.Time) string {
	switch rng.IntN(4) {
	case 0:
		return fmt.Sprint(t.UnixNano())
	case 1:
		return fmt.Sprintf("%dms", t.UnixMilli())
	case 2:
		return fmt.Sprintf("%ds", t.Unix())
	}
	return rfc(t)
}

// genTagCondition draws a condition on the tags of s.
func genTagCondition(rng *rand.Rand, s *diffStatement) string {
	tags := tagsOf(s)
	t := tags[rng.IntN(len(tags))]
	v := t.values[rng.IntN(len(t.values))]
	s.tagCondition = true
	switch rng.IntN(8) {
	case 0:
		return fmt.Sprintf("%s != '%s'", t.key, v)
	case 1:
		return fmt.Sprintf("%s =~ /^(%s|zz)$/", t.key, v)
	case 2:
		return fmt.Sprintf("%s !~ /%s/", t.key, v)
	case 3:
		return fmt.Sprintf("%s = ''", t.key)
	case 4:
		u := tags[rng.IntN(len(tags))]
		return fmt.Sprintf("(%s = '%s' OR %s = '%s')", t.key, v, u.key, u.values[rng.IntN(len(u.values))])
	case 5:
		return fmt.Sprintf(`"%s" =~ /./`, t.key)
	}
	return fmt.Sprintf("%s = '%s'", t.key, v)
}

// genFieldCondition draws a condition on the fields of s.
func genFieldCondition(rng *rand.Rand, s *diffStatement) string {
	s.fieldCond = true
	fields := fieldsOf(s)
	one := func() string {
		f := fields[rng.IntN(len(fields))]
		switch f.typ {
		case "float":
			return fmt.Sprintf("%s %s %d", f.name, []string{">", "<=", ">=", "<"}[rng.IntN(4)], rng.IntN(100)-20)
		case "integer":
			return fmt.Sprintf("%s %s %d", f.name, []string{">", "<=", "=", "!="}[rng.IntN(4)], rng.IntN(100)-20)
		case "string":
			return fmt.Sprintf("%s %s '%s'", f.name, []string{"=", "!="}[rng.IntN(2)], []string{"x", "y"}[rng.IntN(2)])
		}
		return fmt.Sprintf("%s = %s", f.name, []string{"true", "false"}[rng.IntN(2)])
	}
	if rng.IntN(4) == 0 {
		return fmt.Sprintf("(%s OR %s)", one(), one())
	}
	return one()
}

// genWhere joins a time range (always with want), a condition on tags
// and one on fields, each maybe.
func genWhere(rng *rand.Rand, s *diffStatement, wantTime bool) string {
	var conds []string
	if wantTime || rng.IntN(3) > 0 {
		conds = append(conds, genTimeRange(rng, s))
	}
	if rng.IntN(2) == 0 {
		conds = append(conds, genTagCondition(rng, s))
	}
	if rng.IntN(4) == 0 {
		conds = append(conds, genFieldCondition(rng, s))
	}
	rng.Shuffle(len(conds), func(i, j int) { conds[i], conds[j] = conds[j], conds[i] })
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// genGroupByTags draws the tags of a GROUP BY, or *.
func genGroupByTags(rng *rand.Rand, s *diffStatement) []string {
	s.groupByTags = true
	if rng.IntN(3) == 0 {
		return []string{"*"}
	}
	tags := tagsOf(s)
	if len(tags) > 1 && rng.IntN(2) == 0 {
		return []string{tags[0].key, tags[1].key}
	}
	return []string{tags[rng.IntN(len(tags))].key}
}

// genLimits draws ORDER BY time DESC, LIMIT/OFFSET and SLIMIT/SOFFSET,
// each maybe.
func genLimits(rng *rand.Rand, s *diffStatement) string {
	var b strings.Builder
	if rng.IntN(5) == 0 {
		b.WriteString(" ORDER BY time DESC")
	}
	if rng.IntN(4) == 0 {
		s.limited = true
		fmt.Fprintf(&b, " LIMIT %d", 1+rng.IntN(5))
		if rng.IntN(2) == 0 {
			fmt.Fprintf(&b, " OFFSET %d", rng.IntN(4))
		}
	}
	if rng.IntN(6) == 0 {
		fmt.Fprintf(&b, " SLIMIT %d", 1+rng.IntN(3))
		if rng.IntN(2) == 0 {
			fmt.Fprintf(&b, " SOFFSET %d", rng.IntN(3))
		}
	}
	return b.String()
}

// genRaw draws a SELECT of fields.
func genRaw(rng *rand.Rand) diffStatement {
	s := diffStatement{kind: "raw"}
	from := genFrom(rng, &s)
	var cols []string
	if rng.IntN(4) == 0 {
		cols = []string{"*"}
	} else {
		fields := fieldsOf(&s)
		for _, i := range rng.Perm(len(fields))[:1+rng.IntN(min(3, len(fields)))] {
			c := fields[i].name
			if rng.IntN(6) == 0 {
				c += " AS " + fields[i].name + "_v"
			}
			cols = append(cols, c)
		}
		if rng.IntN(6) == 0 {
			cols = append(cols, "host")
		}
	}
	where := genWhere(rng, &s, false)
	group := ""
	if rng.IntN(4) == 0 {
		group = " GROUP BY " + strings.Join(genGroupByTags(rng, &s), ", ")
	}
	s.text = fmt.Sprintf("SELECT %s FROM %s%s%s%s", strings.Join(cols, ", "), from, where, group, genLimits(rng, &s))
	return s
}

// diffAggregate is an aggregate and the field types it takes.
type diffAggregate struct {
	name  string
	types string // "n" numbers only, "a" any type
}

var diffAggregates = []diffAggregate{
	{"count", "a"}, {"sum", "n"}, {"mean", "n"}, {"median", "n"}, {"min", "n"}, {"max", "n"},
	{"first", "a"}, {"last", "a"}, {"spread", "n"}, {"stddev", "n"}, {"percentile", "n"}, {"count_distinct", "a"},
}

// genCall draws an aggregate of a field of s.
func genCall(rng *rand.Rand, s *diffStatement, numeric bool) string {
	fields := fieldsOf(s)
	for {
		a := diffAggregates[rng.IntN(len(diffAggregates))]
		f := fields[rng.IntN(len(fields))]
		num := f.typ == "float" || f.typ == "integer"
		if (a.types == "n" || numeric) && !num {
			continue
		}
		s.functions = append(s.functions, a.name)
		s.intField = s.intField || f.typ == "integer"
		switch a.name {
		case "percentile":
			return fmt.Sprintf("percentile(%s, %s)", f.name, []string{"50", "90", "95", "99.9", "5"}[rng.IntN(5)])
		case "count_distinct":
			return fmt.Sprintf("count(distinct(%s))", f.name)
		}
		return fmt.Sprintf("%s(%s)", a.name, f.name)
	}
}

// genAggregate draws a SELECT of aggregates, maybe with transforms over
// GROUP BY time().
func genAggregate(rng *rand.Rand) diffStatement {
	s := diffStatement{kind: "aggregate"}
	from := genFrom(rng, &s)
	s.groupByTime = rng.IntN(10) < 7
	var cols []string
	for range 1 + rng.IntN(3) {
		if s.groupByTime && rng.IntN(4) == 0 {
			s.transform = true
			inner := genCall(rng, &s, true)
			switch t := []string{"derivative", "non_negative_derivative", "difference", "non_negative_difference", "moving_average"}[rng.IntN(5)]; t {
			case "moving_average":
				cols = append(cols, fmt.Sprintf("%s(%s, %d)", t, inner, 2+rng.IntN(2)))
			case "derivative", "non_negative_derivative":
				if rng.IntN(2) == 0 {
					cols = append(cols, fmt.Sprintf("%s(%s, %s)", t, inner, []string{"1s", "1m", "10s"}[rng.IntN(3)]))
				} else {
					cols = append(cols, fmt.Sprintf("%s(%s)", t, inner))
				}
				s.functions = append(s.functions, t)
			default:
				cols = append(cols, fmt.Sprintf("%s(%s)", t, inner))
				s.functions = append(s.functions, t)
			}
			continue
		}
		cols = append(cols, genCall(rng, &s, false))
	}
	where := genWhere(rng, &s, s.groupByTime)
	var group []string
	if s.groupByTime {
		iv := diffIntervals[rng.IntN(len(diffIntervals))]
		if rng.IntN(20) == 0 {
			iv = []string{"7m", "90s"}[rng.IntN(2)]
		}
		s.interval, _ = time.ParseDuration(iv)
		switch rng.IntN(8) {
		case 0:
			group = append(group, fmt.Sprintf("time(%s, %s)", iv, []string{"10s", "-10s", "1m"}[rng.IntN(3)]))
		default:
			group = append(group, fmt.Sprintf("time(%s)", iv))
		}
	}
	if rng.IntN(3) == 0 {
		group = append(group, genGroupByTags(rng, &s)...)
	}
	text := fmt.Sprintf("SELECT %s FROM %s%s", strings.Join(cols, ", "), from, where)
	if len(group) > 0 {
		text += " GROUP BY " + strings.Join(group, ", ")
	}
	if s.groupByTime && rng.IntN(2) == 0 {
		s.fill = []string{"null", "none", "previous", "linear", "0", "-1.5"}[rng.IntN(6)]
		text += " fill(" + s.fill + ")"
	}
	s.text = text + genLimits(rng, &s)
	return s
}

// genShow draws a SHOW statement.
func genShow(rng *rand.Rand) diffStatement {
	s := diffStatement{kind: "show"}
	from := func() string {
		if rng.IntN(2) == 0 {
			s.measurements = []string{"cpu"}
			return ""
		}
		m := diffSchema[rng.IntN(len(diffSchema))].name
		s.measurements = []string{m}
		return " FROM " + m
	}
	where := func() string {
		if rng.IntN(2) == 0 {
			return ""
		}
		s.where = true
		return " WHERE " + genTagCondition(rng, &s)
	}
	limit := func() string {
		if rng.IntN(4) > 0 {
			return ""
		}
		l := fmt.Sprintf(" LIMIT %d", 1+rng.IntN(3))
		if rng.IntN(2) == 0 {
			l += fmt.Sprintf(" OFFSET %d", rng.IntN(3))
		}
		return l
	}
	switch rng.IntN(5) {
	case 0:
		s.show = "MEASUREMENTS"
		s.measurements = []string{"cpu"}
		with := ""
		if rng.IntN(3) == 0 {
			with = []string{" WITH MEASUREMENT =~ /m|c/", " WITH MEASUREMENT = net", " WITH MEASUREMENT =~ /^n/"}[rng.IntN(3)]
		}
		s.text = "SHOW MEASUREMENTS" + with + where() + limit()
	case 1:
		s.show = "TAG KEYS"
		s.text = "SHOW TAG KEYS" + from() + where() + limit()
	case 2:
		s.show = "TAG VALUES"
		f := from()
		key := []string{` WITH KEY = "host"`, ` WITH KEY IN ("host", "region")`, ` WITH KEY =~ /o/`, ` WITH KEY != "host"`}[rng.IntN(4)]
		s.text = "SHOW TAG VALUES" + f + key + where() + limit()
	case 3:
		s.show = "FIELD KEYS"
		s.text = "SHOW FIELD KEYS" + from()
	default:
		s.show = "SERIES"
		s.text = "SHOW SERIES" + from() + where() + limit()
	}
	return s
}
