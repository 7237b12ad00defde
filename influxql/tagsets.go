package influxql

import (
	"context"
	"slices"
	"strings"

	"github.com/timetabledb/timetable/engine"
)

// # Which groups SLIMIT and SOFFSET keep
//
// InfluxDB answers the groups of a GROUP BY in the order of their tags'
// values (taken by the tag keys' names), but SLIMIT and SOFFSET cut them
// before, in the order of its tag sets' keys (InfluxDB 1.x
// tsdb.MakeTagsKey, sorted bytewise by the index's TagSets): the keys
// of the tags the group has, a value not empty, each followed by "|",
// then their values joined by "|"; a group of no tag has the empty key.
// So a group that lacks a tag sorts by the tags it has: of GROUP BY
// host, region, the groups (host a) and (host b) come before (host a,
// region eu), and those of no host last of those with a region. Within
// a measurement; each measurement of FROM is cut on its own.
//
// GROUP BY * groups by every tag key of the statement's measurements,
// as InfluxDB expands it from all of FROM: of several, each
// measurement's series have "" for the keys of the others.

// cutGroups is the groups that SLIMIT and SOFFSET keep, in the order of
// their tags' values, as InfluxDB answers them.
func cutGroups(groups []group, keys []string, offset, limit int) []group {
	if offset == 0 && limit == 0 {
		return groups
	}
	type keyed struct {
		key string
		i   int
	}
	order := make([]keyed, len(groups))
	for i, g := range groups {
		order[i] = keyed{key: tagSetKey(keys, g.tags), i: i}
	}
	slices.SortStableFunc(order, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
	order = cut(order, offset, limit)
	// Back in the order of the values: the indexes of the groups kept.
	slices.SortFunc(order, func(a, b keyed) int { return a.i - b.i })
	out := make([]group, len(order))
	for j, k := range order {
		out[j] = groups[k.i]
	}
	return out
}

// tagSetKey is InfluxDB's key of a group's tag set: the keys of its
// tags not empty, each followed by "|", then their values joined by
// "|". keys are sorted.
func tagSetKey(keys []string, tags map[string]string) string {
	var names, values []string
	for _, k := range keys {
		if v := tags[k]; v != "" {
			names = append(names, k)
			values = append(values, v)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return strings.Join(names, "|") + "|" + strings.Join(values, "|")
}

// statementTagKeys is every tag key of the tables, sorted: what
// GROUP BY * groups by.
func (x *executor) statementTagKeys(ctx context.Context, tables []engine.LogicalTable) ([]string, error) {
	var keys []string
	for _, t := range tables {
		all, err := x.allSeries(ctx, t.Name)
		if err != nil {
			return nil, err
		}
		keys = append(keys, tagKeys(all)...)
	}
	slices.Sort(keys)
	return slices.Compact(keys), nil
}
