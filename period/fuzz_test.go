package period

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fuzzTime turns fuzz input into a time within about 2,000 years of the
// epoch, at nanosecond precision.
func fuzzTime(sec, nsec int64) time.Time {
	const span = 1 << 36 // seconds, about 2,177 years
	return time.Unix(sec%span, nsec%int64(time.Second)).UTC()
}

// fuzzGranularity turns two fuzz bytes into a valid granularity.
func fuzzGranularity(unit, weekStart uint8) Granularity {
	g := Granularity{Unit: Unit(unit%uint8(Quarter)) + Hour}
	if g.Unit == Week {
		g.WeekStart = time.Weekday(weekStart % 7)
	}
	return g
}

// lengthBounds returns the shortest and longest period of g.
func lengthBounds(g Granularity) (lo, hi time.Duration) {
	const d = 24 * time.Hour
	switch g.Unit {
	case CalendarMonth:
		return 28 * d, 31 * d
	case Quarter:
		return 90 * d, 92 * d
	default:
		return g.Nominal(), g.Nominal()
	}
}

func addSeeds(f *testing.F) {
	for _, s := range []string{
		"1970-01-01T00:00:00Z",
		"1969-12-31T23:59:59.999999999Z",
		"2016-12-31T23:59:59.999999999Z",
		"2017-01-01T00:00:00Z",
		"2017-04-09T00:00:00Z",
		"2020-02-29T23:59:59.5Z",
		"2000-02-29T12:00:00Z",
		"1900-03-01T00:00:00Z",
		"0001-01-01T00:00:00Z",
		"2262-04-11T23:47:16.854775807Z",
	} {
		t := at(s)
		for u := range uint8(Quarter) {
			f.Add(t.Unix(), int64(t.Nanosecond()), u, uint8(t.Weekday()), int64(3600))
		}
	}
}

// FuzzOf checks that periods tile time: every instant lies in exactly one
// period, the period that Of returns, and periods are contiguous.
func FuzzOf(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, sec, nsec int64, unit, weekStart uint8, _ int64) {
		tm, g := fuzzTime(sec, nsec), fuzzGranularity(unit, weekStart)
		p := g.Of(tm)
		require.True(t, p.Contains(tm), "%s does not contain %s", p, tm)
		require.True(t, g.Aligned(p.Start))
		require.Equal(t, time.UTC, p.Start.Location())
		require.Equal(t, p, g.Of(p.Start), "a period's start")
		require.Equal(t, p, g.Of(p.End.Add(-time.Nanosecond)), "a period's last nanosecond")
		require.Equal(t, p, g.Of(tm.In(time.FixedZone("x", -7*3600))), "another location")
		lo, hi := lengthBounds(g)
		require.GreaterOrEqual(t, p.Duration(), lo)
		require.LessOrEqual(t, p.Duration(), hi)
		if g.Unit == Week {
			require.Equal(t, g.WeekStart, p.Start.Weekday())
		}

		next, prev := g.Next(p), g.Prev(p)
		require.Equal(t, p.End, next.Start)
		require.Equal(t, p.Start, prev.End)
		require.Equal(t, p, g.Prev(next))
		require.Equal(t, p, g.Next(prev))
		// Exactly one period: the neighbours do not contain tm.
		require.False(t, next.Contains(tm))
		require.False(t, prev.Contains(tm))
	})
}

// FuzzOverlapping checks that Overlapping returns exactly the periods that
// contain an instant of [from, to]: contiguous, in order, none missing at
// either edge.
func FuzzOverlapping(f *testing.F) {
	addSeeds(f)
	f.Add(int64(0), int64(0), uint8(0), uint8(0), int64(-1))
	f.Add(int64(1491696000), int64(0), uint8(Week-1), uint8(0), int64(604800))
	f.Fuzz(func(t *testing.T, sec, nsec int64, unit, weekStart uint8, span int64) {
		from, g := fuzzTime(sec, nsec), fuzzGranularity(unit, weekStart)
		// Up to about 200 periods, or a little before from.
		span %= 200 * int64(g.Nominal())
		to := from.Add(time.Duration(span))
		ps := g.Overlapping(from, to)
		if to.Before(from) {
			require.Empty(t, ps)
			return
		}
		require.NotEmpty(t, ps)
		require.Equal(t, g.Of(from), ps[0])
		require.Equal(t, g.Of(to), ps[len(ps)-1])
		for i, p := range ps {
			require.True(t, p.Overlaps(from, to))
			if i > 0 {
				require.Equal(t, ps[i-1].End, p.Start)
				require.Equal(t, g.Next(ps[i-1]), p)
			}
		}
		require.False(t, g.Prev(ps[0]).Overlaps(from, to))
		require.False(t, g.Next(ps[len(ps)-1]).Overlaps(from, to))
	})
}

// FuzzMonth checks that months tile time and print and parse back.
func FuzzMonth(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, sec, nsec int64, _, _ uint8, _ int64) {
		tm := fuzzTime(sec, nsec)
		m := MonthOf(tm)
		require.True(t, m.Period().Contains(tm))
		require.Equal(t, m.End(), m.Next().Start())
		require.Equal(t, m, m.Next().Prev())
		require.True(t, m.Before(m.Next()))
		require.Equal(t, Granularity{Unit: CalendarMonth}.Of(tm), m.Period())
		if m.Year >= 0 && m.Year <= 9999 {
			back, err := ParseMonth(m.String())
			require.NoError(t, err)
			require.Equal(t, m, back)
		}
	})
}
