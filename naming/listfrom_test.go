package naming

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/period"
)

// listed returns the names a ListTables call starting after the exclusive
// start would return, in the order it returns them.
func listed(names []string, after string) []string {
	sorted := slices.Sorted(slices.Values(names))
	i, found := slices.BinarySearch(sorted, after)
	if found {
		i++
	}
	return sorted[i:]
}

func TestListFrom(t *testing.T) {
	times := []string{
		"1970-01-01T00:00:00Z",
		"1970-01-02T13:00:00Z",
		"2001-09-09T01:46:40Z",
		"2016-12-31T23:59:59.999999999Z",
		"2017-01-01T00:00:00Z",
		"2017-04-12T08:30:00.5Z",
		"2020-02-29T18:00:00Z",
		"2262-04-11T23:47:16Z",
	}
	months := []period.Month{{Year: 2017, Month: time.March}, {Year: 2017, Month: time.April}, {Year: 2017, Month: time.October}}
	for _, prefix := range []string{"", "tt_events_"} {
		for _, n := range allNamers(prefix) {
			t.Run(prefix+namerString(n), func(t *testing.T) {
				for _, s := range times {
					tm := at(s)
					// The tables of ten periods either side of tm, every
					// write month, and another family's tables.
					ps := walk(n.Granularity, n.Granularity.Of(tm).Start.Add(-10*n.Granularity.Nominal()), 21)
					names := []string{"aaa", "tt_events", "tt_other_2017-04-09", "zzz"}
					byName := map[string]period.Period{}
					for _, p := range ps {
						if p.Start.UnixMilli() < 0 && p.End.UnixMilli() <= 0 {
							continue // no event is stored before 1970
						}
						for _, m := range months {
							r := Ref{Period: p}
							if n.WriteTimeGrouping {
								r.WriteMonth = m
							}
							name := n.Format(r)
							names = append(names, name)
							byName[name] = p
						}
					}
					slices.Sort(names)
					names = slices.Compact(names) // one name per period without grouping
					after := n.ListFrom(tm)
					if after != "" {
						require.NoError(t, ValidTableName(after))
					}
					got := listed(names, after)
					// Nothing that could hold tm or a later time is skipped.
					var skipped []string
					for name, p := range byName {
						if p.End.After(tm) && !slices.Contains(got, name) {
							skipped = append(skipped, name)
						}
					}
					require.Empty(t, skipped, "%s: after %q", s, after)
					// And the listing starts exactly at tm's period, except
					// for the epoch's period in range names, where it starts
					// at the family's first table.
					var first period.Period
					for _, name := range got {
						if p, ok := byName[name]; ok {
							first = p
							break
						}
					}
					if n.Scheme == Range && n.Granularity.Of(tm).Start.UnixMilli() < 0 {
						require.Equal(t, n.floor(), after)
						continue
					}
					require.Equal(t, n.Granularity.Of(tm), first, "%s: after %q", s, after)
				}
			})
		}
	}
}

func TestListFromOutsideTheOrderedRange(t *testing.T) {
	tests := []struct {
		n    Namer
		t    time.Time
		want string
	}{
		{Namer{Prefix: "tt_events_", Scheme: Range, Granularity: week}, at("1970-01-01T00:00:00Z"), "tt_events_"},
		{Namer{Prefix: "tt_events_", Scheme: Range, Granularity: hour}, at("1969-01-01T00:00:00Z"), "tt_events_"},
		{Namer{Prefix: "tt", Scheme: Range, Granularity: week}, at("1970-01-01T00:00:00Z"), ""},
		{Namer{Prefix: "tt_", Scheme: Range, Granularity: day}, at("2300-01-01T00:00:00Z"), "tt_"},
		{Namer{Prefix: "tt_", Scheme: Date, Granularity: day}, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), "tt_"},
		{Namer{Prefix: "tt_", Scheme: Date, Granularity: day}, time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), "tt_"},
		{Namer{Prefix: "tt_", Scheme: Date, Granularity: day, WriteTimeGrouping: true}, time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), "tt_0000-01-01"},
		// Inside it: the exact starts.
		{Namer{Prefix: "tt_", Scheme: Range, Granularity: week, WriteTimeGrouping: true}, at("2017-04-12T00:00:00Z"), "tt_1491696000000"},
		{Namer{Prefix: "tt_", Scheme: Range, Granularity: hour}, at("1970-01-01T00:59:00Z"), "tt_0000000000000"},
		{Namer{Prefix: "tt_", Scheme: Date, Granularity: day}, at("2017-01-01T00:00:00Z"), "tt_2016-12-31"},
		{Namer{Prefix: "tt_", Scheme: Date, Granularity: day, WriteTimeGrouping: true}, at("2017-01-01T00:00:00Z"), "tt_2017-01-01"},
		{Namer{Prefix: "tt_", Scheme: Date, Granularity: quarter}, at("2017-01-01T00:00:00Z"), "tt_2016-Q4"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, tc.n.ListFrom(tc.t), "%s %s", namerString(tc.n), tc.t)
	}
}
