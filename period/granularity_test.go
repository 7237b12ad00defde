package period

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseGranularity(t *testing.T) {
	tests := map[string]struct {
		in   string
		want Granularity
		err  bool
	}{
		"hour":           {in: "hour", want: Granularity{Unit: Hour}},
		"6h":             {in: "6h", want: Granularity{Unit: SixHours}},
		"12h":            {in: "12h", want: Granularity{Unit: TwelveHours}},
		"day":            {in: "day", want: Granularity{Unit: Day}},
		"week":           {in: "week", want: Granularity{Unit: Week, WeekStart: time.Sunday}},
		"month":          {in: "month", want: Granularity{Unit: CalendarMonth}},
		"quarter":        {in: "quarter", want: Granularity{Unit: Quarter}},
		"upper case":     {in: " Week ", want: Granularity{Unit: Week}},
		"week monday":    {in: "week:monday", want: Granularity{Unit: Week, WeekStart: time.Monday}},
		"week Saturday":  {in: "WEEK:Saturday", want: Granularity{Unit: Week, WeekStart: time.Saturday}},
		"empty":          {in: "", err: true},
		"weekly":         {in: "weekly", err: true},
		"2h":             {in: "2h", err: true},
		"day with start": {in: "day:monday", err: true},
		"bad weekday":    {in: "week:funday", err: true},
		"short weekday":  {in: "week:mon", err: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g, err := ParseGranularity(tc.in)
			if tc.err {
				require.ErrorIs(t, err, ErrInvalidGranularity)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, g)
			require.NoError(t, g.Validate())
		})
	}
}

func TestGranularityStringRoundTrips(t *testing.T) {
	for _, g := range allGranularities() {
		back, err := ParseGranularity(g.String())
		require.NoError(t, err, g.String())
		require.Equal(t, g, back)
	}
	require.Equal(t, "week", Granularity{Unit: Week}.String())
	require.Equal(t, "week:thursday", Granularity{Unit: Week, WeekStart: time.Thursday}.String())
	require.Equal(t, "6h", Granularity{Unit: SixHours}.String())
	require.Equal(t, "Unit(0)", Granularity{}.String())
}

func TestGranularityValidate(t *testing.T) {
	tests := map[string]struct {
		g     Granularity
		valid bool
	}{
		"zero":                {g: Granularity{}},
		"unit past quarter":   {g: Granularity{Unit: Quarter + 1}},
		"negative unit":       {g: Granularity{Unit: -1}},
		"week saturday":       {g: Granularity{Unit: Week, WeekStart: time.Saturday}, valid: true},
		"week day 7":          {g: Granularity{Unit: Week, WeekStart: 7}},
		"week day -1":         {g: Granularity{Unit: Week, WeekStart: -1}},
		"day with week start": {g: Granularity{Unit: Day, WeekStart: time.Monday}},
		"month":               {g: Granularity{Unit: CalendarMonth}, valid: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tc.g.Validate()
			if tc.valid {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrInvalidGranularity)
			}
		})
	}
}

func TestInvalidGranularityPanics(t *testing.T) {
	require.PanicsWithValue(t,
		"period: timetable: invalid granularity: unit 0 is not one of hour, 6h, 12h, day, week, month, quarter",
		func() { Granularity{}.Of(time.Unix(0, 0)) })
	require.Panics(t, func() { Granularity{Unit: Day, WeekStart: time.Monday}.Nominal() })
}

func TestNominal(t *testing.T) {
	tests := []struct {
		unit Unit
		want time.Duration
	}{
		{Hour, time.Hour},
		{SixHours, 6 * time.Hour},
		{TwelveHours, 12 * time.Hour},
		{Day, 24 * time.Hour},
		{Week, 168 * time.Hour},
		{CalendarMonth, 2629746 * time.Second},
		{Quarter, 3 * 2629746 * time.Second},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, Granularity{Unit: tc.unit}.Nominal(), tc.unit.String())
	}
	// Twelve nominal months are one mean Gregorian year, 365.2425 days.
	year := 12 * Granularity{Unit: CalendarMonth}.Nominal()
	require.Equal(t, time.Duration(365.2425*24*float64(time.Hour)), year)
	require.Equal(t, year, 4*Granularity{Unit: Quarter}.Nominal())
}

// allGranularities returns every valid granularity: each unit, and weeks
// starting on each day.
func allGranularities() []Granularity {
	var gs []Granularity
	for u := Hour; u <= Quarter; u++ {
		if u != Week {
			gs = append(gs, Granularity{Unit: u})
			continue
		}
		for d := time.Sunday; d <= time.Saturday; d++ {
			gs = append(gs, Granularity{Unit: Week, WeekStart: d})
		}
	}
	return gs
}
