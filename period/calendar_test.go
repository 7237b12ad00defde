package period

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var (
	hour        = Granularity{Unit: Hour}
	sixHours    = Granularity{Unit: SixHours}
	twelveHours = Granularity{Unit: TwelveHours}
	day         = Granularity{Unit: Day}
	week        = Granularity{Unit: Week}
	month       = Granularity{Unit: CalendarMonth}
	quarter     = Granularity{Unit: Quarter}
)

func TestOf(t *testing.T) {
	tests := []struct {
		name       string
		g          Granularity
		t          string
		start, end string
	}{
		// Leap day.
		{"leap day hour", hour, "2020-02-29T23:59:59.999999999Z", "2020-02-29T23:00:00Z", "2020-03-01T00:00:00Z"},
		{"leap day 6h", sixHours, "2020-02-29T17:59:59Z", "2020-02-29T12:00:00Z", "2020-02-29T18:00:00Z"},
		{"leap day 12h", twelveHours, "2020-02-29T12:00:00Z", "2020-02-29T12:00:00Z", "2020-03-01T00:00:00Z"},
		{"leap day day", day, "2020-02-29T05:00:00Z", "2020-02-29T00:00:00Z", "2020-03-01T00:00:00Z"},
		{"leap day week", week, "2020-02-29T05:00:00Z", "2020-02-23T00:00:00Z", "2020-03-01T00:00:00Z"},
		{"leap day month", month, "2020-02-29T05:00:00Z", "2020-02-01T00:00:00Z", "2020-03-01T00:00:00Z"},
		{"leap day quarter", quarter, "2020-02-29T05:00:00Z", "2020-01-01T00:00:00Z", "2020-04-01T00:00:00Z"},
		{"february 2019", month, "2019-02-28T23:59:59Z", "2019-02-01T00:00:00Z", "2019-03-01T00:00:00Z"},
		// New year: the last nanosecond of 2016 and the first of 2017.
		{"2016 last hour", hour, "2016-12-31T23:59:59.999999999Z", "2016-12-31T23:00:00Z", "2017-01-01T00:00:00Z"},
		{"2017 first hour", hour, "2017-01-01T00:00:00Z", "2017-01-01T00:00:00Z", "2017-01-01T01:00:00Z"},
		{"2016 last 6h", sixHours, "2016-12-31T23:59:59.999999999Z", "2016-12-31T18:00:00Z", "2017-01-01T00:00:00Z"},
		{"2016 last 12h", twelveHours, "2016-12-31T23:59:59.999999999Z", "2016-12-31T12:00:00Z", "2017-01-01T00:00:00Z"},
		{"2016 last day", day, "2016-12-31T23:59:59.999999999Z", "2016-12-31T00:00:00Z", "2017-01-01T00:00:00Z"},
		{"2017 first day", day, "2017-01-01T00:00:00Z", "2017-01-01T00:00:00Z", "2017-01-02T00:00:00Z"},
		{"week across new year", week, "2016-12-31T23:59:59Z", "2016-12-25T00:00:00Z", "2017-01-01T00:00:00Z"},
		{"2017 first week", week, "2017-01-01T00:00:00Z", "2017-01-01T00:00:00Z", "2017-01-08T00:00:00Z"},
		{"2016 last month", month, "2016-12-31T23:59:59.999999999Z", "2016-12-01T00:00:00Z", "2017-01-01T00:00:00Z"},
		{"2016 last quarter", quarter, "2016-12-31T23:59:59.999999999Z", "2016-10-01T00:00:00Z", "2017-01-01T00:00:00Z"},
		{"2017 first quarter", quarter, "2017-01-01T00:00:00Z", "2017-01-01T00:00:00Z", "2017-04-01T00:00:00Z"},
		{"q2", quarter, "2017-06-30T23:00:00Z", "2017-04-01T00:00:00Z", "2017-07-01T00:00:00Z"},
		{"q3", quarter, "2017-07-01T00:00:00Z", "2017-07-01T00:00:00Z", "2017-10-01T00:00:00Z"},
		// The Unix epoch, a Thursday: the Sunday week containing it starts
		// in 1969.
		{"epoch hour", hour, "1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "1970-01-01T01:00:00Z"},
		{"epoch day", day, "1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "1970-01-02T00:00:00Z"},
		{"epoch week", week, "1970-01-01T00:00:00Z", "1969-12-28T00:00:00Z", "1970-01-04T00:00:00Z"},
		{"before epoch", hour, "1969-12-31T23:30:00Z", "1969-12-31T23:00:00Z", "1970-01-01T00:00:00Z"},
		{"epoch month", month, "1970-01-31T23:59:59Z", "1970-01-01T00:00:00Z", "1970-02-01T00:00:00Z"},
		// Fineo's example weeks.
		{"fineo week 1", week, "2017-04-12T10:00:00Z", "2017-04-09T00:00:00Z", "2017-04-16T00:00:00Z"},
		{"fineo week 2", week, "2017-04-16T00:00:00Z", "2017-04-16T00:00:00Z", "2017-04-23T00:00:00Z"},
		// Locations other than UTC are converted first.
		{"east of UTC", day, "2017-04-10T01:00:00+02:00", "2017-04-09T00:00:00Z", "2017-04-10T00:00:00Z"},
		{"west of UTC", month, "2017-03-31T22:00:00-05:00", "2017-04-01T00:00:00Z", "2017-05-01T00:00:00Z"},
		{"half-hour zone", hour, "2017-04-10T05:59:00+05:30", "2017-04-10T00:00:00Z", "2017-04-10T01:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.g.Of(at(tc.t))
			require.Equal(t, Period{Start: at(tc.start), End: at(tc.end)}, p)
			require.Equal(t, time.UTC, p.Start.Location())
			require.Equal(t, time.UTC, p.End.Location())
			require.True(t, p.Contains(at(tc.t)))
		})
	}
}

func TestWeekStarts(t *testing.T) {
	// 1970-01-01 was a Thursday. For every week start, the week containing
	// noon on that day, and the week containing the last nanosecond before
	// that day's midnight.
	tests := []struct {
		start time.Weekday
		noon  string // the start of the week containing 1970-01-01T12:00Z
		eve   string // the start of the week containing 1969-12-31T23:59:59.999999999Z
	}{
		{time.Sunday, "1969-12-28T00:00:00Z", "1969-12-28T00:00:00Z"},
		{time.Monday, "1969-12-29T00:00:00Z", "1969-12-29T00:00:00Z"},
		{time.Tuesday, "1969-12-30T00:00:00Z", "1969-12-30T00:00:00Z"},
		{time.Wednesday, "1969-12-31T00:00:00Z", "1969-12-31T00:00:00Z"},
		{time.Thursday, "1970-01-01T00:00:00Z", "1969-12-25T00:00:00Z"},
		{time.Friday, "1969-12-26T00:00:00Z", "1969-12-26T00:00:00Z"},
		{time.Saturday, "1969-12-27T00:00:00Z", "1969-12-27T00:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.start.String(), func(t *testing.T) {
			g := Granularity{Unit: Week, WeekStart: tc.start}
			p := g.Of(at("1970-01-01T12:00:00Z"))
			require.Equal(t, at(tc.noon), p.Start)
			require.Equal(t, at(tc.noon).AddDate(0, 0, 7), p.End)
			require.Equal(t, tc.start, p.Start.Weekday())
			require.Equal(t, at(tc.eve), g.Of(at("1969-12-31T23:59:59.999999999Z")).Start)
			// Every day of a week lands in that week.
			for d := range 7 {
				require.Equal(t, p, g.Of(p.Start.AddDate(0, 0, d).Add(13*time.Hour)))
			}
			require.True(t, g.Aligned(p.Start))
			require.False(t, g.Aligned(p.Start.AddDate(0, 0, 1)))
		})
	}
}

func TestNextPrev(t *testing.T) {
	tests := []struct {
		name string
		g    Granularity
		from string
		walk []string // the starts of the periods that follow
	}{
		{"hours across new year", hour, "2016-12-31T22:10:00Z", []string{"2016-12-31T23:00:00Z", "2017-01-01T00:00:00Z", "2017-01-01T01:00:00Z"}},
		{"6h across leap day", sixHours, "2020-02-29T13:00:00Z", []string{"2020-02-29T18:00:00Z", "2020-03-01T00:00:00Z", "2020-03-01T06:00:00Z"}},
		{"12h", twelveHours, "2020-02-28T13:00:00Z", []string{"2020-02-29T00:00:00Z", "2020-02-29T12:00:00Z", "2020-03-01T00:00:00Z"}},
		{"days across leap day", day, "2020-02-28T13:00:00Z", []string{"2020-02-29T00:00:00Z", "2020-03-01T00:00:00Z"}},
		{"monday weeks", Granularity{Unit: Week, WeekStart: time.Monday}, "2016-12-31T00:00:00Z", []string{"2017-01-02T00:00:00Z", "2017-01-09T00:00:00Z"}},
		{"months", month, "2019-12-15T00:00:00Z", []string{"2020-01-01T00:00:00Z", "2020-02-01T00:00:00Z", "2020-03-01T00:00:00Z", "2020-04-01T00:00:00Z"}},
		{"quarters", quarter, "2016-11-15T00:00:00Z", []string{"2017-01-01T00:00:00Z", "2017-04-01T00:00:00Z", "2017-07-01T00:00:00Z", "2017-10-01T00:00:00Z", "2018-01-01T00:00:00Z"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.g.Of(at(tc.from))
			for _, s := range tc.walk {
				next := tc.g.Next(p)
				require.Equal(t, at(s), next.Start)
				require.Equal(t, p.End, next.Start)
				require.Equal(t, p, tc.g.Prev(next))
				p = next
			}
		})
	}
}

func TestOverlapping(t *testing.T) {
	starts := func(ps []Period) []string {
		var s []string
		for _, p := range ps {
			s = append(s, p.Start.Format(time.RFC3339))
		}
		return s
	}
	tests := []struct {
		name     string
		g        Granularity
		from, to string
		want     []string
	}{
		{"inverted", day, "2017-04-10T00:00:00Z", "2017-04-09T23:59:59Z", nil},
		{"one instant", day, "2017-04-10T05:00:00Z", "2017-04-10T05:00:00Z", []string{"2017-04-10T00:00:00Z"}},
		{"instant on a boundary", day, "2017-04-10T00:00:00Z", "2017-04-10T00:00:00Z", []string{"2017-04-10T00:00:00Z"}},
		{"to on the next boundary", day, "2017-04-10T00:00:00Z", "2017-04-11T00:00:00Z", []string{"2017-04-10T00:00:00Z", "2017-04-11T00:00:00Z"}},
		{"to a nanosecond before", day, "2017-04-10T00:00:00Z", "2017-04-10T23:59:59.999999999Z", []string{"2017-04-10T00:00:00Z"}},
		{"from the last nanosecond", day, "2017-04-09T23:59:59.999999999Z", "2017-04-10T00:00:00Z", []string{"2017-04-09T00:00:00Z", "2017-04-10T00:00:00Z"}},
		{"fineo weeks", week, "2017-04-12T00:00:00Z", "2017-04-20T00:00:00Z", []string{"2017-04-09T00:00:00Z", "2017-04-16T00:00:00Z"}},
		{"epoch week", week, "1970-01-01T00:00:00Z", "1970-01-04T00:00:00Z", []string{"1969-12-28T00:00:00Z", "1970-01-04T00:00:00Z"}},
		{"year of quarters", quarter, "2016-12-31T23:59:59Z", "2017-12-31T00:00:00Z", []string{"2016-10-01T00:00:00Z", "2017-01-01T00:00:00Z", "2017-04-01T00:00:00Z", "2017-07-01T00:00:00Z", "2017-10-01T00:00:00Z"}},
		{"months over leap day", month, "2020-02-29T00:00:00Z", "2020-03-01T00:00:00Z", []string{"2020-02-01T00:00:00Z", "2020-03-01T00:00:00Z"}},
		{"6h", sixHours, "2017-04-10T05:00:00Z", "2017-04-10T18:00:00Z", []string{"2017-04-10T00:00:00Z", "2017-04-10T06:00:00Z", "2017-04-10T12:00:00Z", "2017-04-10T18:00:00Z"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, starts(tc.g.Overlapping(at(tc.from), at(tc.to))))
		})
	}
}

func TestAligned(t *testing.T) {
	tests := []struct {
		g    Granularity
		t    string
		want bool
	}{
		{hour, "2017-04-10T05:00:00Z", true},
		{hour, "2017-04-10T05:00:00.000000001Z", false},
		{sixHours, "2017-04-10T06:00:00Z", true},
		{sixHours, "2017-04-10T05:00:00Z", false},
		{twelveHours, "2017-04-10T06:00:00Z", false},
		{twelveHours, "2017-04-10T12:00:00Z", true},
		{day, "2017-04-10T00:00:00Z", true},
		{day, "2017-04-10T02:00:00+02:00", true},
		{week, "2017-04-09T00:00:00Z", true},
		{week, "2017-04-10T00:00:00Z", false},
		{month, "2020-02-01T00:00:00Z", true},
		{month, "2020-02-29T00:00:00Z", false},
		{quarter, "2020-04-01T00:00:00Z", true},
		{quarter, "2020-02-01T00:00:00Z", false},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, tc.g.Aligned(at(tc.t)), "%s %s", tc.g, tc.t)
	}
}
