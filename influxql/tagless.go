package influxql

import (
	"context"

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
// measurement has, as InfluxDB's index does: a comparison of a tag
// matches only the series that have it (WHERE region !~ /ca.*/ lists no
// measurement without a region). A point written in line protocol without any tag is of the
// series "", which the engine cannot name alone (its Series "" is every
// series): a statement that reads it reads every series and keeps the
// points of "" (readTagless), and aggregates it as the engine's
// AggregateGroups by series does (aggregateTagless), the first group in
// key order.

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
