package naming

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/period"
)

// allNamers returns a namer for every scheme, granularity (weeks starting
// each day) and grouping.
func allNamers(prefix string) []Namer {
	var ns []Namer
	for _, s := range []Scheme{Range, Date} {
		for u := period.Hour; u <= period.Quarter; u++ {
			starts := []time.Weekday{time.Sunday}
			if u == period.Week {
				starts = []time.Weekday{time.Sunday, time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday}
			}
			for _, d := range starts {
				for _, grouped := range []bool{false, true} {
					ns = append(ns, Namer{Prefix: prefix, Scheme: s, Granularity: period.Granularity{Unit: u, WeekStart: d}, WriteTimeGrouping: grouped})
				}
			}
		}
	}
	return ns
}

func namerString(n Namer) string {
	return fmt.Sprintf("%s/%s/grouped=%t", n.Scheme, n.Granularity, n.WriteTimeGrouping)
}

// walk returns count consecutive periods of g from the one containing t.
func walk(g period.Granularity, t time.Time, count int) []period.Period {
	ps := []period.Period{g.Of(t)}
	for len(ps) < count {
		ps = append(ps, g.Next(ps[len(ps)-1]))
	}
	return ps
}

func TestLexicalOrderIsTimeOrder(t *testing.T) {
	// Stretches of time where order could break: the epoch (the first
	// period may start before it), 2001-09-09 (Unix milliseconds reach 13
	// digits), new years, and the last years timetable stores.
	from := []string{"1970-01-01T00:00:00Z", "2001-09-08T00:00:00Z", "2016-12-25T00:00:00Z", "2099-12-01T00:00:00Z", "2262-01-01T00:00:00Z"}
	months := []period.Month{{Year: 2017, Month: time.April}, {Year: 2017, Month: time.October}, {Year: 2018, Month: time.January}}
	for _, n := range allNamers("tt_") {
		t.Run(namerString(n), func(t *testing.T) {
			for _, f := range from {
				ps := walk(n.Granularity, at(f), 30)
				if f == from[0] {
					// Across the epoch: one period earlier too.
					ps = append([]period.Period{n.Granularity.Prev(ps[0])}, ps...)
					if ps[0].Start.UnixMilli() < 0 && ps[1].Start.UnixMilli() < 0 {
						ps = ps[1:] // only the period holding the epoch may start before it
					}
				}
				// Within one write month, names sort as their periods.
				for _, m := range months {
					var names []string
					for _, p := range ps {
						r := Ref{Period: p}
						if n.WriteTimeGrouping {
							r.WriteMonth = m
						}
						names = append(names, n.Format(r))
					}
					require.True(t, slices.IsSorted(names), "%v", names)
					require.Len(t, slices.Compact(slices.Clone(names)), len(names))
				}
				// Across write months, the period still decides the order.
				if n.WriteTimeGrouping {
					for i := 1; i < len(ps); i++ {
						for _, a := range months {
							for _, b := range months {
								x, y := n.Format(Ref{Period: ps[i-1], WriteMonth: a}), n.Format(Ref{Period: ps[i], WriteMonth: b})
								require.Less(t, x, y)
							}
						}
					}
				}
			}
		})
	}
}

func TestRangeWriteMonthsSortAsStrings(t *testing.T) {
	// Documented, not desired: October's table of a period sorts before
	// April's.
	n := Namer{Scheme: Range, Granularity: week, WriteTimeGrouping: true}
	p := week.Of(at("2017-04-12T00:00:00Z"))
	oct := n.Format(Ref{Period: p, WriteMonth: period.Month{Year: 2017, Month: time.October}})
	apr := n.Format(Ref{Period: p, WriteMonth: period.Month{Year: 2017, Month: time.April}})
	require.Less(t, oct, apr)
}
