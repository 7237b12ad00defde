package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine/internal/agg"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"golang.org/x/sync/errgroup"
)

// GroupBySeries groups an aggregate by series.
const GroupBySeries = "series"

// Bounds on the groups of one answer.
const (
	DefaultGroupLimit = 100
	MaxGroupLimit     = 1000
)

// Group is one group of a grouped aggregate and its buckets: api.Group,
// as the HTTP API answers it.
type Group = api.Group

// GroupPage is one page of a grouped aggregate's groups, in key order.
type GroupPage struct {
	Groups []Group
	// Next, when not nil, is the GroupAfter of the next page: more
	// groups follow.
	Next *string
}

// checkGroups validates the grouping of a query and fills in its limit.
func (q *AggregateQuery) checkGroups() error {
	switch {
	case q.GroupBy == "":
		if q.GroupLimit != 0 || q.GroupAfter != nil {
			return fmt.Errorf("%w: a group limit or cursor without group_by", ErrBadQuery)
		}
		return nil
	case q.GroupLimit < 0 || q.GroupLimit > MaxGroupLimit:
		return fmt.Errorf("%w: group limit %d: use 1 to %d", ErrBadQuery, q.GroupLimit, MaxGroupLimit)
	case q.GroupLimit == 0:
		q.GroupLimit = DefaultGroupLimit
	}
	return nil
}

// AggregateGroups summarises events in time buckets, as Aggregate does,
// for each group of q.GroupBy apart, and returns a page of the groups in
// key order.
//
// Grouped by series, each series of the page is aggregated on its own,
// from rollups where the table keeps them, up to QueryParallelism at a
// time; the page's series are found in the series indexes of the tables
// of the range. Grouped by a field, the events are read once and each
// goes to the group of its value; the groups past the page are dropped
// as soon as GroupLimit+1 smaller ones are known, so memory holds one
// page of groups.
func (db *DB) AggregateGroups(ctx context.Context, tenant string, q AggregateQuery) (GroupPage, error) {
	done, err := db.enter()
	if err != nil {
		return GroupPage{}, err
	}
	defer done()
	if q.GroupBy == "" {
		return GroupPage{}, fmt.Errorf("%w: AggregateGroups needs group_by", ErrBadQuery)
	}
	if err := db.checkAggregate(ctx, tenant, &q); err != nil {
		return GroupPage{}, err
	}
	pol := db.policy(q.Table)
	if q.GroupBy == GroupBySeries {
		return db.groupsBySeries(ctx, tenant, q, pol)
	}
	return db.groupsByField(ctx, tenant, q, pol)
}

// groupsBySeries aggregates each series of the page.
func (db *DB) groupsBySeries(ctx context.Context, tenant string, q AggregateQuery, pol family.TablePolicy) (GroupPage, error) {
	tables, err := db.catalog.tables(ctx, pol.Family, q.From, q.To)
	if err != nil {
		return GroupPage{}, err
	}
	all, err := db.seriesOf(ctx, tenant, q.Table, tables)
	if err != nil {
		return GroupPage{}, err
	}
	keys := slices.DeleteFunc(all, func(s string) bool { return !q.after(s) || (q.Series != "" && s != q.Series) })
	var page GroupPage
	if len(keys) > q.GroupLimit {
		keys = keys[:q.GroupLimit]
		page.Next = &keys[len(keys)-1]
	}
	page.Groups = make([]Group, len(keys))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(db.opts.QueryParallelism)
	for i, s := range keys {
		g.Go(func() error {
			b, err := db.aggregateSeries(gctx, tenant, q, pol, tables, s)
			page.Groups[i] = Group{Key: s, Buckets: b}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return GroupPage{}, err
	}
	return page, nil
}

// aggregateSeries aggregates one series. The empty series, which
// AggregateQuery.Series cannot name, is read from its events.
func (db *DB) aggregateSeries(ctx context.Context, tenant string, q AggregateQuery, pol family.TablePolicy, tables []physTable, series string) ([]Bucket, error) {
	if series != "" {
		q.Series = series
		return db.aggregate(ctx, tenant, q, pol)
	}
	parts := map[int64]*agg.Summary{}
	if err := db.summarise(ctx, sourceSpec{tenant: tenant, q: q.eventQuery(), layout: pol.Layout.Kind, tables: tables}, series, &q, parts); err != nil {
		return nil, err
	}
	return partsToBuckets(parts, q)
}

// groupsByField reads the events once and summarises each in the group
// of its value of the field.
func (db *DB) groupsByField(ctx context.Context, tenant string, q AggregateQuery, pol family.TablePolicy) (GroupPage, error) {
	tables, err := db.catalog.tables(ctx, pol.Family, q.From, q.To)
	if err != nil {
		return GroupPage{}, err
	}
	eq := q.eventQuery()
	if eq.Fields != nil && !slices.Contains(eq.Fields, q.GroupBy) {
		eq.Fields = append(slices.Clip(eq.Fields), q.GroupBy)
	}
	streams := map[string]*bucketStream{}
	// ceiling, once set, is a group past the page: GroupLimit+1 smaller
	// ones are known, so it and every greater one are left out.
	var ceiling *string
	err = db.eachEvent(ctx, sourceSpec{tenant: tenant, q: eq, layout: pol.Layout.Kind, tables: tables}, func(ev event.Event) error {
		key, ok := ev.Fields[q.GroupBy].(string)
		if !ok || !q.after(key) || (ceiling != nil && key >= *ceiling) {
			return nil
		}
		s := streams[key]
		if s == nil {
			s = newBucketStream(&q)
			streams[key] = s
			if len(streams) > q.GroupLimit+1 {
				top := slices.Max(slices.Collect(maps.Keys(streams)))
				delete(streams, top)
				ceiling = &top
			}
			if streams[key] == nil {
				return nil // the group just made was the one past the page
			}
		}
		return s.add(ev)
	})
	if err != nil {
		return GroupPage{}, err
	}
	keys := slices.Sorted(maps.Keys(streams))
	var page GroupPage
	if len(keys) > q.GroupLimit {
		keys = keys[:q.GroupLimit]
		page.Next = &keys[len(keys)-1]
	}
	for _, k := range keys {
		b, err := streams[k].done()
		if err != nil {
			return GroupPage{}, err
		}
		page.Groups = append(page.Groups, Group{Key: k, Buckets: b})
	}
	return page, nil
}
