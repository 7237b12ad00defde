package naming

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/period"
)

var fuzzPrefixes = []string{"", "tt_events_", "ts-", "a.b", "1"}

// fuzzNamer turns fuzz bytes into a valid namer.
func fuzzNamer(prefix, scheme, unit, weekStart uint8, grouped bool) Namer {
	g := period.Granularity{Unit: period.Unit(unit%uint8(period.Quarter)) + period.Hour}
	if g.Unit == period.Week {
		g.WeekStart = time.Weekday(weekStart % 7)
	}
	return Namer{
		Prefix:            fuzzPrefixes[int(prefix)%len(fuzzPrefixes)],
		Scheme:            Scheme(scheme%2) + Range,
		Granularity:       g,
		WriteTimeGrouping: grouped,
	}
}

// namerSeeds returns fuzz bytes that give n (n's prefix must be one of
// fuzzPrefixes).
func namerSeeds(n Namer) (prefix, scheme, unit, weekStart uint8) {
	for i, p := range fuzzPrefixes {
		if p == n.Prefix {
			prefix = uint8(i)
		}
	}
	return prefix, uint8(n.Scheme - Range), uint8(n.Granularity.Unit - period.Hour), uint8(n.Granularity.WeekStart)
}

// FuzzParse checks that Parse never panics, and that every name it
// accepts is a valid table name that Format writes back exactly.
func FuzzParse(f *testing.F) {
	seeds := []struct {
		n    Namer
		name string
	}{
		{Namer{Scheme: Range, Granularity: week, WriteTimeGrouping: true}, "1491696000000_1492300799000_4_2017"},
		{Namer{Scheme: Range, Granularity: week, WriteTimeGrouping: true}, "1492300800000_1492905599000_3_2017"},
		{Namer{Scheme: Range, Granularity: week, WriteTimeGrouping: true}, "1491696000000_1492300799000_04_2017"},
		{Namer{Scheme: Range, Granularity: week, WriteTimeGrouping: true}, "1491696000000_1492300799000_4_2017x"},
		{Namer{Prefix: "tt_events_", Scheme: Range, Granularity: week}, "tt_events_1491696000000_1492300799000"},
		{Namer{Prefix: "tt_events_", Scheme: Range, Granularity: week}, "tt_events_-0000345600000_0000259199000"},
		{Namer{Prefix: "tt_events_", Scheme: Range, Granularity: hour}, "tt_events_-0000000000000_0000003599000"},
		{Namer{Prefix: "tt_events_", Scheme: Range, Granularity: hour}, "tt_events_+000000000000_0000003599000"},
		{Namer{Prefix: "ts-", Scheme: Date, Granularity: day}, "ts-2018-10-25"},
		{Namer{Prefix: "ts-", Scheme: Date, Granularity: day, WriteTimeGrouping: true}, "ts-2018-10-25_w2018-11"},
		{Namer{Prefix: "ts-", Scheme: Date, Granularity: sixHours}, "ts-2018-10-25-18"},
		{Namer{Prefix: "ts-", Scheme: Date, Granularity: sixHours}, "ts-2018-10-25-17"},
		{Namer{Prefix: "ts-", Scheme: Date, Granularity: week}, "ts-2017-04-10"},
		{Namer{Prefix: "ts-", Scheme: Date, Granularity: month}, "ts-2017-04"},
		{Namer{Prefix: "ts-", Scheme: Date, Granularity: quarter, WriteTimeGrouping: true}, "ts-2017-Q2_w2017-04"},
		{Namer{Prefix: "ts-", Scheme: Date, Granularity: quarter}, "ts-2017-Q5"},
		{Namer{Prefix: "a.b", Scheme: Date, Granularity: day}, "a.b0000-01-01"},
	}
	for _, s := range seeds {
		p, sc, u, w := namerSeeds(s.n)
		f.Add(s.name, p, sc, u, w, s.n.WriteTimeGrouping)
	}
	f.Fuzz(func(t *testing.T, name string, prefix, scheme, unit, weekStart uint8, grouped bool) {
		n := fuzzNamer(prefix, scheme, unit, weekStart, grouped)
		r, err := n.Parse(name)
		if err != nil {
			require.ErrorIs(t, err, ErrForeign)
			return
		}
		require.Equal(t, name, n.Format(r))
		require.NoError(t, ValidTableName(name))
		require.Empty(t, n.checkRef(r))
		require.Equal(t, grouped, !r.WriteMonth.IsZero())
	})
}

// FuzzRoundTrip checks that the table of any event time and write time,
// under any namer, has a valid name that parses back to it.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{
		"1970-01-01T00:00:00Z",
		"1970-01-03T23:59:59.999999999Z",
		"2001-09-09T01:46:40Z",
		"2016-12-31T23:59:59.999999999Z",
		"2017-04-09T00:00:00Z",
		"2020-02-29T12:00:00Z",
		"2262-04-11T23:47:16.854775807Z",
	} {
		ns := at(s).UnixNano()
		for sc := range uint8(2) {
			for u := range uint8(period.Quarter) {
				f.Add(ns, ns+int64(45*24*time.Hour), uint8(1), sc, u, uint8(4), true)
			}
		}
		f.Add(ns, ns, uint8(0), uint8(0), uint8(period.Week-1), uint8(0), false)
	}
	f.Fuzz(func(t *testing.T, eventNs, writeNs int64, prefix, scheme, unit, weekStart uint8, grouped bool) {
		// Every time timetable stores, and the years before the epoch
		// that int64 nanoseconds reach (from 1677).
		n := fuzzNamer(prefix, scheme, unit, weekStart, grouped)
		eventTime, writeTime := time.Unix(0, eventNs), time.Unix(0, writeNs)
		r := Ref{Period: n.Granularity.Of(eventTime)}
		if grouped {
			r.WriteMonth = period.MonthOf(writeTime)
		}
		require.Empty(t, n.checkRef(r))
		name := n.Format(r)
		require.NoError(t, ValidTableName(name))
		back, err := n.Parse(name)
		require.NoError(t, err, name)
		require.Equal(t, r, back)
		require.True(t, back.Period.Contains(eventTime))
	})
}
