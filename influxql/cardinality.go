package influxql

import (
	"context"
	"fmt"

	iql "github.com/influxdata/influxql"

	"github.com/timetabledb/timetable/api"
)

// # Cardinality
//
// SHOW MEASUREMENT, SERIES, TAG KEY, TAG VALUES and FIELD KEY
// CARDINALITY count what the matching SHOW statement lists, from the
// series index (fields as SHOW FIELD KEYS finds them): exact, with or
// without EXACT. As InfluxDB 1.x answers them, the counts of
// measurements and, without EXACT, of series are one number (the column
// "count", or "cardinality estimation" without EXACT); the others, and
// SERIES with EXACT, a count per measurement, the measurements without
// any left out. A WHERE on tags counts what SHOW MEASUREMENTS (of
// measurements) or SHOW SERIES (of the others) would list with it.

// countSeries is one number of a cardinality's answer.
func countSeries(exact bool, n int) []api.InfluxQLSeries {
	col := "count"
	if !exact {
		col = "cardinality estimation"
	}
	return []api.InfluxQLSeries{{Columns: []string{col}, Values: [][]any{{n}}}}
}

// cardinality answers the SHOW … CARDINALITY statements.
func (x *executor) cardinality(ctx context.Context, st iql.Statement) ([]api.InfluxQLSeries, error) {
	switch st := st.(type) {
	case *iql.ShowMeasurementCardinalityStatement:
		if len(st.Dimensions) > 0 {
			return nil, fmt.Errorf("SHOW MEASUREMENT CARDINALITY GROUP BY is %w", ErrUnsupported)
		}
		shown, err := x.showMeasurements(ctx, &iql.ShowMeasurementsStatement{Condition: st.Condition, Source: firstSource(st.Sources)})
		if err != nil {
			return nil, err
		}
		n := 0
		for _, s := range shown {
			n += len(s.Values)
		}
		return countSeries(st.Exact, n), nil
	case *iql.ShowSeriesCardinalityStatement:
		if len(st.Dimensions) > 0 {
			return nil, fmt.Errorf("SHOW SERIES CARDINALITY GROUP BY is %w", ErrUnsupported)
		}
		return x.countEach(ctx, st.Sources, st.Condition, !st.Exact, func(series []seriesTags, _ string) (int, error) {
			return len(series), nil
		})
	case *iql.ShowTagKeyCardinalityStatement:
		return x.countEach(ctx, st.Sources, st.Condition, false, func(series []seriesTags, _ string) (int, error) {
			return len(tagKeys(series)), nil
		})
	case *iql.ShowTagValuesCardinalityStatement:
		key := iql.ShowTagValuesStatement{Op: st.Op, TagKeyExpr: st.TagKeyExpr}
		return x.countEach(ctx, st.Sources, st.Condition, false, func(series []seriesTags, _ string) (int, error) {
			seen := map[[2]string]bool{}
			for _, s := range series {
				for k, v := range s.tags {
					if tagKeyMatches(&key, k) {
						seen[[2]string{k, v}] = true
					}
				}
			}
			return len(seen), nil
		})
	case *iql.ShowFieldKeyCardinalityStatement:
		return x.countEach(ctx, st.Sources, st.Condition, false, func(_ []seriesTags, table string) (int, error) {
			shown, err := x.showFieldKeys(ctx, &iql.ShowFieldKeysStatement{Sources: iql.Sources{&iql.Measurement{Name: table}}})
			if err != nil || len(shown) == 0 {
				return 0, err
			}
			return len(shown[0].Values), nil
		})
	}
	return nil, fmt.Errorf("%s is %w", st, ErrUnsupported)
}

// countEach counts, with count, what each measurement of sources has of
// the series cond picks: a series per measurement with its count, the
// measurements of none left out; with total, one number of them all.
func (x *executor) countEach(ctx context.Context, sources iql.Sources, cond iql.Expr, total bool, count func([]seriesTags, string) (int, error)) ([]api.InfluxQLSeries, error) {
	tables, err := x.measurements(ctx, sources)
	if err != nil {
		return nil, err
	}
	var out []api.InfluxQLSeries
	sum := 0
	for _, t := range tables {
		series, err := x.matching(ctx, t.Name, cond)
		if err != nil {
			return nil, err
		}
		if len(series) == 0 {
			continue
		}
		n, err := count(series, t.Name)
		if err != nil {
			return nil, err
		}
		sum += n
		if n > 0 {
			out = append(out, api.InfluxQLSeries{Name: t.Name, Columns: []string{"count"}, Values: [][]any{{n}}})
		}
	}
	if total {
		return countSeries(false, sum), nil
	}
	return out, nil
}

// firstSource is the one source of a statement that takes one, nil for
// none.
func firstSource(s iql.Sources) iql.Source {
	if len(s) == 0 {
		return nil
	}
	return s[0]
}
