package influxql

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	iql "github.com/influxdata/influxql"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine"
)

// showMeasurements answers SHOW MEASUREMENTS [WITH MEASUREMENT ...]
// [WHERE tags] [LIMIT n] [OFFSET n]: the logical tables.
func (x *executor) showMeasurements(ctx context.Context, st *iql.ShowMeasurementsStatement) ([]api.InfluxQLSeries, error) {
	if iql.HasTimeExpr(st.Condition) {
		return nil, fmt.Errorf("SHOW MEASUREMENTS doesn't support time in WHERE clause")
	}
	var sources iql.Sources
	if st.Source != nil {
		sources = iql.Sources{st.Source}
	}
	tables, err := x.measurements(ctx, sources)
	if err != nil {
		return nil, err
	}
	var values [][]any
	for _, t := range tables {
		if st.Condition != nil {
			series, err := x.allSeries(ctx, t.Name)
			if err != nil {
				return nil, err
			}
			ok, err := measurementMatches(t.Name, series, st.Condition)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		values = append(values, []any{t.Name})
	}
	values = cut(values, st.Offset, st.Limit)
	if len(values) == 0 {
		return nil, nil
	}
	return []api.InfluxQLSeries{{Name: "measurements", Columns: []string{"name"}, Values: values}}, nil
}

// measurementMatches reports whether SHOW MEASUREMENTS WHERE cond lists
// a measurement, as InfluxDB 1.x's in-memory index decides it
// (measurementNamesByTagFilters): a comparison of a tag no series has
// is false; otherwise key = 'v' holds when a series has the value v,
// key =~ /re/ when one has a value that matches, and key != 'v' and
// key !~ /re/ when none has (host != 'a' lists no measurement with a
// series of host a); AND and OR join them; the key _name compares the
// measurement's name.
func measurementMatches(name string, series []seriesTags, cond iql.Expr) (bool, error) {
	switch e := cond.(type) {
	case *iql.ParenExpr:
		return measurementMatches(name, series, e.Expr)
	case *iql.BooleanLiteral:
		return e.Val, nil
	case *iql.BinaryExpr:
		switch e.Op {
		case iql.AND, iql.OR:
			l, err := measurementMatches(name, series, e.LHS)
			if err != nil {
				return false, err
			}
			r, err := measurementMatches(name, series, e.RHS)
			if err != nil {
				return false, err
			}
			if e.Op == iql.AND {
				return l && r, nil
			}
			return l || r, nil
		case iql.EQ, iql.NEQ, iql.EQREGEX, iql.NEQREGEX:
		default:
			return false, fmt.Errorf("condition %s: %s is not supported on tags: use =, !=, =~ or !~", e, e.Op)
		}
		key, ok := e.LHS.(*iql.VarRef)
		if !ok {
			return false, fmt.Errorf("left side of '%s' must be a tag key", e.Op)
		}
		var match func(string) bool
		if iql.IsRegexOp(e.Op) {
			re, ok := e.RHS.(*iql.RegexLiteral)
			if !ok {
				return false, fmt.Errorf("right side of '%s' must be a regular expression", e.Op)
			}
			match = re.Val.MatchString
		} else {
			s, ok := e.RHS.(*iql.StringLiteral)
			if !ok {
				return false, fmt.Errorf("right side of '%s' must be a tag value string", e.Op)
			}
			match = func(v string) bool { return v == s.Val }
		}
		equal := e.Op == iql.EQ || e.Op == iql.EQREGEX
		if key.Val == "_name" {
			return match(name) == equal, nil
		}
		has, matched := false, false
		for _, s := range series {
			v, ok := s.tags[key.Val]
			if !ok {
				continue
			}
			has = true
			if match(v) {
				matched = true
				break
			}
		}
		return has && matched == equal, nil
	}
	return false, fmt.Errorf("condition %s is not supported on tags", cond)
}

// matching returns the series of a table that a condition on tags
// picks. Only the series index is read.
func (x *executor) matching(ctx context.Context, table string, cond iql.Expr) ([]seriesTags, error) {
	series, err := x.allSeries(ctx, table)
	if err != nil {
		return nil, err
	}
	cond, _, err = iql.ConditionExpr(cond, &iql.NowValuer{Now: x.opts.Now})
	if err != nil {
		return nil, err
	}
	return matchSeries(ctx, series, cond)
}

// showTagKeys answers SHOW TAG KEYS [FROM m] [WHERE tags].
func (x *executor) showTagKeys(ctx context.Context, st *iql.ShowTagKeysStatement) ([]api.InfluxQLSeries, error) {
	tables, err := x.measurements(ctx, st.Sources)
	if err != nil {
		return nil, err
	}
	tables = cut(tables, st.SOffset, st.SLimit)
	var out []api.InfluxQLSeries
	for _, t := range tables {
		series, err := x.matching(ctx, t.Name, st.Condition)
		if err != nil {
			return nil, err
		}
		var values [][]any
		for _, k := range tagKeys(series) {
			values = append(values, []any{k})
		}
		values = cut(values, st.Offset, st.Limit)
		if len(values) > 0 {
			out = append(out, api.InfluxQLSeries{Name: t.Name, Columns: []string{"tagKey"}, Values: values})
		}
	}
	return out, nil
}

// showTagValues answers SHOW TAG VALUES [FROM m] WITH KEY = k | IN (...)
// | =~ /re/ | != k | !~ /re/ [WHERE tags] [LIMIT n] [OFFSET n].
func (x *executor) showTagValues(ctx context.Context, st *iql.ShowTagValuesStatement) ([]api.InfluxQLSeries, error) {
	tables, err := x.measurements(ctx, st.Sources)
	if err != nil {
		return nil, err
	}
	keyMatches := func(k string) bool { return tagKeyMatches(st, k) }
	var out []api.InfluxQLSeries
	for _, t := range tables {
		series, err := x.matching(ctx, t.Name, st.Condition)
		if err != nil {
			return nil, err
		}
		type kv struct{ k, v string }
		seen := map[kv]bool{}
		for _, s := range series {
			for k, v := range s.tags {
				if keyMatches(k) {
					seen[kv{k, v}] = true
				}
			}
		}
		pairs := make([]kv, 0, len(seen))
		for p := range seen {
			pairs = append(pairs, p)
		}
		slices.SortFunc(pairs, func(a, b kv) int {
			if a.k != b.k {
				return cmpString(a.k, b.k)
			}
			return cmpString(a.v, b.v)
		})
		var values [][]any
		for _, p := range pairs {
			values = append(values, []any{p.k, p.v})
		}
		values = cut(values, st.Offset, st.Limit)
		if len(values) > 0 {
			out = append(out, api.InfluxQLSeries{Name: t.Name, Columns: []string{"key", "value"}, Values: values})
		}
	}
	return out, nil
}

// tagKeyMatches reports whether a tag key is one of those WITH KEY of a
// SHOW TAG VALUES names.
func tagKeyMatches(st *iql.ShowTagValuesStatement, k string) bool {
	switch lit := st.TagKeyExpr.(type) {
	case *iql.StringLiteral:
		return (st.Op == iql.EQ) == (k == lit.Val)
	case *iql.ListLiteral:
		return slices.Contains(lit.Vals, k)
	case *iql.RegexLiteral:
		return (st.Op == iql.EQREGEX) == lit.Val.MatchString(k)
	}
	return false
}

// SHOW FIELD KEYS reads fieldSample of a table's latest events to find
// its fields and their types, timetable keeping no schema; from a table
// of more than fieldSeries series, it reads the latest of fieldSeries of
// them, spread over the series index.
const (
	fieldSample = 1000
	fieldSeries = 100
)

// showFieldKeys answers SHOW FIELD KEYS [FROM m]: the fields of the
// latest events of each table, tags left out, with InfluxDB's type names.
func (x *executor) showFieldKeys(ctx context.Context, st *iql.ShowFieldKeysStatement) ([]api.InfluxQLSeries, error) {
	tables, err := x.measurements(ctx, st.Sources)
	if err != nil {
		return nil, err
	}
	var out []api.InfluxQLSeries
	for _, t := range tables {
		types, _, err := x.fieldTypes(ctx, t)
		if err != nil {
			return nil, err
		}
		keys := make([]string, 0, len(types))
		for k := range types {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var values [][]any
		for _, k := range keys {
			values = append(values, []any{k, types[k]})
		}
		values = cut(values, st.Offset, st.Limit)
		if len(values) > 0 {
			out = append(out, api.InfluxQLSeries{Name: t.Name, Columns: []string{"fieldKey", "fieldType"}, Values: values})
		}
	}
	return out, nil
}

// fields are the fields of a table and their types, and its tag keys,
// as fieldTypes found them.
type fields struct {
	types map[string]string
	keys  []string
}

// fieldTypes returns the fields of a table and their types, found in its
// latest events, and its tag keys, which are not among the fields; read
// once per query, for every statement that asks (SHOW FIELD KEYS,
// SELECT *). The caller does not change them.
func (x *executor) fieldTypes(ctx context.Context, t engine.LogicalTable) (map[string]string, []string, error) {
	if f, ok := x.fields[t.Name]; ok {
		return f.types, f.keys, nil
	}
	types, keys, err := x.readFieldTypes(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	x.fields[t.Name] = fields{types: types, keys: keys}
	return types, keys, nil
}

// readFieldTypes is fieldTypes, read from the table's latest events.
func (x *executor) readFieldTypes(ctx context.Context, t engine.LogicalTable) (map[string]string, []string, error) {
	series, err := x.allSeries(ctx, t.Name)
	if err != nil {
		return nil, nil, err
	}
	tags := map[string]bool{}
	keys := tagKeys(series)
	for _, k := range keys {
		tags[k] = true
	}
	// The latest events of the table, in one read of every series;
	// a table of many series is sampled series by series instead,
	// so that no read opens all of its partitions.
	from, to := x.tableRange(t)
	reads := []engine.Query{{Table: t.Name, From: from, To: to, Desc: true, Limit: fieldSample}}
	if len(series) > fieldSeries {
		reads = reads[:0]
		step := len(series) / fieldSeries
		for i := 0; i < len(series) && len(reads) < fieldSeries; i += step {
			if series[i].name == "" {
				continue // the engine reads every series for ""
			}
			reads = append(reads, engine.Query{Table: t.Name, Series: series[i].name, From: from, To: to, Desc: true, Limit: fieldSample / fieldSeries})
		}
	}
	types := map[string]string{}
	for _, q := range reads {
		page, err := x.eng.Query(ctx, x.tenant, q)
		if err != nil {
			return nil, nil, &EngineError{Err: err}
		}
		for _, ev := range page.Events {
			for k, v := range ev.Fields {
				if _, ok := types[k]; !ok && !tags[k] {
					types[k] = fieldType(v)
				}
			}
		}
	}
	return types, keys, nil
}

// fieldType is InfluxDB's name of a value's type. timetable keeps
// numbers as decimals, without telling integers from floats: every
// number is a float.
func fieldType(v any) string {
	switch v.(type) {
	case json.Number, float64, int64:
		return "float"
	case bool:
		return "boolean"
	}
	return "string"
}

// showSeries answers SHOW SERIES [FROM m] [WHERE tags] [LIMIT] [OFFSET]:
// keys "measurement,tag=value,...".
func (x *executor) showSeries(ctx context.Context, st *iql.ShowSeriesStatement) ([]api.InfluxQLSeries, error) {
	tables, err := x.measurements(ctx, st.Sources)
	if err != nil {
		return nil, err
	}
	var values [][]any
	for _, t := range tables {
		series, err := x.matching(ctx, t.Name, st.Condition)
		if err != nil {
			return nil, err
		}
		for _, s := range series {
			key := t.Name
			if s.name != "" {
				if _, ok := s.tags[SeriesTag]; ok && len(s.tags) == 1 && s.tags[SeriesTag] == s.name {
					key += "," + SeriesTag + "=" + s.name
				} else {
					key += "," + s.name
				}
			}
			values = append(values, []any{key})
		}
	}
	values = cut(values, st.Offset, st.Limit)
	if len(values) == 0 {
		return nil, nil
	}
	return []api.InfluxQLSeries{{Columns: []string{"key"}, Values: values}}, nil
}

// cut applies OFFSET and LIMIT (0: none) to rows.
func cut[T any](rows []T, offset, limit int) []T {
	if offset >= len(rows) {
		return nil
	}
	rows = rows[offset:]
	if limit > 0 && limit < len(rows) {
		rows = rows[:limit]
	}
	return rows
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
