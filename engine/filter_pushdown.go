package engine

import (
	"fmt"
	"slices"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/storage"
)

// pushdown is the filter a read sends to the store for a query's filter
// f: "f OR attribute_exists(tt_ids)", so that map items, which hold many
// events each and are filtered event by event in the engine, come back
// whole. It takes pushdownOperators operators beside f's, which is why
// filter.MaxOperators leaves them out of DynamoDB's 300.
func pushdown(f storage.Filter) *storage.Filter {
	return &storage.Filter{Op: storage.FilterOr, Args: []storage.Filter{f, {Op: storage.FilterExists, Attr: itemenc.MapIDs}}}
}

// pushdownOperators is what pushdown adds to a filter: one OR and one
// attribute_exists.
const pushdownOperators = 2

// projection is the attributes a read of fields asks the store for
// (nil for every attribute): the fields, without timetable's own, the
// map layout's ids and times, and the filter's fields, which the engine
// filters map items' events by and drops after (window.project).
func projection(fields []string, f *storage.Filter) []string {
	if fields == nil {
		return nil
	}
	attrs := append(slices.DeleteFunc(slices.Clone(fields), itemenc.OwnAttribute), itemenc.MapIDs, itemenc.MapNanos)
	if f != nil {
		attrs = f.AppendAttrs(attrs)
	}
	return attrs
}

// checkPushdown refuses a filter whose pushed-down form a store would
// refuse: more operators than DynamoDB's 300 once pushdown adds its own,
// or a FilterExpression over 4 KB with the projection of fields.
func checkPushdown(f *storage.Filter, fields []string) error {
	if f == nil {
		return nil
	}
	q := storage.Query{Filter: pushdown(*f), Attrs: projection(fields, f)}
	if n := f.Operators(); n > storage.MaxExpressionOperators-pushdownOperators {
		return fmt.Errorf("%w: filter: %d operators, over %d (DynamoDB's %d in one expression, less the %d a read adds)",
			ErrBadQuery, n, storage.MaxExpressionOperators-pushdownOperators, storage.MaxExpressionOperators, pushdownOperators)
	}
	if err := q.ValidateFilter(); err != nil {
		return fmt.Errorf("%w: filter: %w", ErrBadQuery, err)
	}
	return nil
}
