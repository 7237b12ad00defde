package influxql

import (
	"context"
	"slices"

	iql "github.com/influxdata/influxql"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
)

// # What a missing tag is
//
// A series lacks a tag it was not written with, and a tag it lacks is
// the empty string, as in InfluxDB: host = '' and host != 'server01'
// pick it, GROUP BY host puts it in the group of host "", and GROUP BY *
// in the group whose every tag of the measurement is "" but those it
// has. SHOW MEASUREMENTS WHERE reads its condition on the tag values a
// measurement has, as InfluxDB's index does (measurementMatches): no
// comparison of a tag matches a measurement none of whose series has it
// (WHERE region !~ /ca.*/ lists no measurement without a region). A point written in line protocol without any tag is of the
// series "", which the engine cannot name alone (its Series "" is every
// series): a statement that reads it reads every series and keeps the
// points of "" (readTagless), and aggregates it as the engine's
// AggregateGroups by series does (aggregateTagless), the first group in
// key order.
//
// A name the condition compares that is neither a tag key of the
// measurement nor one of its fields is a tag every series lacks, as
// InfluxDB's index reads it (a name not among the measurement's fields
// is a tag): host != 'b' keeps every series of a measurement without
// host, host =~ /./ none. Only a name compared with a string or a
// regular expression is looked up among the fields (SHOW FIELD KEYS'
// fields, fieldTypes), so that a condition on a number or a boolean
// reads no more than before; a name compared with those is a field.

// groupedEngine is the part of *engine.DB that aggregates series apart.
type groupedEngine interface {
	AggregateGroups(ctx context.Context, tenant string, q engine.AggregateQuery) (engine.GroupPage, error)
}

// aggregateTagless is the engine's aggregate of the series "" alone.
func (x *executor) aggregateTagless(ctx context.Context, q engine.AggregateQuery) ([]engine.Bucket, error) {
	ge, ok := x.eng.(groupedEngine)
	if !ok {
		return nil, nil
	}
	q.Series, q.GroupBy, q.GroupLimit, q.GroupAfter = "", engine.GroupBySeries, 1, nil
	page, err := ge.AggregateGroups(ctx, x.tenant, q)
	if err != nil {
		return nil, &EngineError{Err: err}
	}
	if len(page.Groups) == 0 || page.Groups[0].Key != "" {
		return nil, nil
	}
	return page.Groups[0].Buckets, nil
}

// readTagless reads the first n points of the series "" that keep keeps
// (read's rule), from a read of every series.
func (x *executor) readTagless(ctx context.Context, q engine.Query, n int, keep func(event.Event) bool) ([]event.Event, error) {
	q.Series = ""
	return x.read(ctx, q, n, func(ev event.Event) bool { return ev.Series == "" && keep(ev) })
}

// absentTags returns the names of cond that are tags every series of
// a table lacks: compared with a string or a regular expression,
// neither among keys (the table's tag keys, sorted) nor a field of one
// of the statement's tables (InfluxDB types a name across the
// statement's measurements, a field before a tag).
func (x *executor) absentTags(ctx context.Context, tables []engine.LogicalTable, cond iql.Expr, keys []string) ([]string, error) {
	var names []string
	iql.WalkFunc(cond, func(n iql.Node) {
		b, ok := n.(*iql.BinaryExpr)
		if !ok {
			return
		}
		key, lit, ok := tagComparison(b)
		if !ok {
			return
		}
		switch lit.(type) {
		case *iql.StringLiteral, *iql.RegexLiteral:
		default:
			return
		}
		if _, tag := slices.BinarySearch(keys, key); !tag && !slices.Contains(names, key) {
			names = append(names, key)
		}
	})
	if len(names) == 0 {
		return nil, nil
	}
	for _, t := range tables {
		types, _, err := x.fieldTypes(ctx, t)
		if err != nil {
			return nil, err
		}
		names = slices.DeleteFunc(names, func(n string) bool { _, field := types[n]; return field })
	}
	return names, nil
}
