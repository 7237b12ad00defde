package naming

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/period"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

var (
	hour        = period.Granularity{Unit: period.Hour}
	sixHours    = period.Granularity{Unit: period.SixHours}
	twelveHours = period.Granularity{Unit: period.TwelveHours}
	day         = period.Granularity{Unit: period.Day}
	week        = period.Granularity{Unit: period.Week}
	mondayWeek  = period.Granularity{Unit: period.Week, WeekStart: time.Monday}
	month       = period.Granularity{Unit: period.CalendarMonth}
	quarter     = period.Granularity{Unit: period.Quarter}
)

func ref(g period.Granularity, t string, writeMonth string) Ref {
	r := Ref{Period: g.Of(at(t))}
	if writeMonth != "" {
		m, err := period.ParseMonth(writeMonth)
		if err != nil {
			panic(err)
		}
		r.WriteMonth = m
	}
	return r
}

func TestFineoNames(t *testing.T) {
	// The names in Fineo's post: weekly periods starting Sunday, grouped
	// by write month.
	tests := []struct {
		r    Ref
		want string
	}{
		{ref(week, "2017-04-12T08:00:00Z", "2017-04"), "1491696000000_1492300799000_4_2017"},
		{ref(week, "2017-04-16T00:00:00Z", "2017-04"), "1492300800000_1492905599000_4_2017"},
		{ref(week, "2017-04-22T23:59:59.999Z", "2017-03"), "1492300800000_1492905599000_3_2017"},
	}
	for _, prefix := range []string{"", "tt_events_"} {
		n := Namer{Prefix: prefix, Scheme: Range, Granularity: week, WriteTimeGrouping: true}
		require.NoError(t, n.Validate())
		for _, tc := range tests {
			name := n.Format(tc.r)
			require.Equal(t, prefix+tc.want, name)
			back, err := n.Parse(name)
			require.NoError(t, err)
			require.Equal(t, tc.r, back)
		}
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		name string
		n    Namer
		r    Ref
		want string
	}{
		{"range week", Namer{Prefix: "tt_", Scheme: Range, Granularity: week}, ref(week, "2017-04-12T00:00:00Z", ""), "tt_1491696000000_1492300799000"},
		{"range hour at epoch", Namer{Prefix: "tt_", Scheme: Range, Granularity: hour}, ref(hour, "1970-01-01T00:30:00Z", ""), "tt_0000000000000_0000003599000"},
		{"range day before 2001-09-09", Namer{Scheme: Range, Granularity: day}, ref(day, "2001-09-08T12:00:00Z", ""), "0999907200000_0999993599000"},
		{"range day after 2001-09-09", Namer{Scheme: Range, Granularity: day}, ref(day, "2001-09-09T12:00:00Z", ""), "0999993600000_1000079999000"},
		{"range epoch week", Namer{Prefix: "tt_", Scheme: Range, Granularity: week, WriteTimeGrouping: true}, ref(week, "1970-01-01T00:00:00Z", "1970-01"), "tt_-0000345600000_0000259199000_1_1970"},
		{"range october", Namer{Prefix: "tt_", Scheme: Range, Granularity: month, WriteTimeGrouping: true}, ref(month, "2017-04-01T00:00:00Z", "2017-10"), "tt_1491004800000_1493596799000_10_2017"},
		{"range quarter", Namer{Prefix: "q.", Scheme: Range, Granularity: quarter}, ref(quarter, "2017-05-01T00:00:00Z", ""), "q.1491004800000_1498867199000"},
		{"date day (AWS blog)", Namer{Prefix: "timeseries_", Scheme: Date, Granularity: day}, ref(day, "2018-10-25T13:00:00Z", ""), "timeseries_2018-10-25"},
		{"date day grouped", Namer{Prefix: "timeseries_", Scheme: Date, Granularity: day, WriteTimeGrouping: true}, ref(day, "2018-10-25T13:00:00Z", "2018-11"), "timeseries_2018-10-25_w2018-11"},
		{"date week", Namer{Prefix: "ts-", Scheme: Date, Granularity: week}, ref(week, "2017-04-12T00:00:00Z", ""), "ts-2017-04-09"},
		{"date monday week", Namer{Prefix: "ts-", Scheme: Date, Granularity: mondayWeek}, ref(mondayWeek, "2017-04-12T00:00:00Z", ""), "ts-2017-04-10"},
		{"date epoch week", Namer{Prefix: "ts-", Scheme: Date, Granularity: week}, ref(week, "1970-01-01T00:00:00Z", ""), "ts-1969-12-28"},
		{"date hour", Namer{Prefix: "ts-", Scheme: Date, Granularity: hour}, ref(hour, "2020-02-29T23:59:00Z", ""), "ts-2020-02-29-23"},
		{"date 6h", Namer{Prefix: "ts-", Scheme: Date, Granularity: sixHours}, ref(sixHours, "2020-02-29T23:59:00Z", ""), "ts-2020-02-29-18"},
		{"date 12h", Namer{Prefix: "ts-", Scheme: Date, Granularity: twelveHours}, ref(twelveHours, "2020-02-29T11:59:00Z", ""), "ts-2020-02-29-00"},
		{"date month", Namer{Prefix: "ts-", Scheme: Date, Granularity: month, WriteTimeGrouping: true}, ref(month, "2016-12-31T23:59:59Z", "2017-01"), "ts-2016-12_w2017-01"},
		{"date quarter", Namer{Prefix: "ts-", Scheme: Date, Granularity: quarter}, ref(quarter, "2016-12-31T23:59:59Z", ""), "ts-2016-Q4"},
		{"date quarter grouped", Namer{Prefix: "ts-", Scheme: Date, Granularity: quarter, WriteTimeGrouping: true}, ref(quarter, "2017-01-01T00:00:00Z", "2017-02"), "ts-2017-Q1_w2017-02"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, tc.n.Validate())
			require.Empty(t, tc.n.checkRef(tc.r))
			name := tc.n.Format(tc.r)
			require.Equal(t, tc.want, name)
			require.NoError(t, ValidTableName(name))
			back, err := tc.n.Parse(name)
			require.NoError(t, err)
			require.Equal(t, tc.r, back)
		})
	}
}

func TestParseRejectsForeignNames(t *testing.T) {
	fineo := Namer{Prefix: "tt_events_", Scheme: Range, Granularity: week, WriteTimeGrouping: true}
	fineoFlat := Namer{Prefix: "tt_events_", Scheme: Range, Granularity: week}
	hourly := Namer{Prefix: "h_", Scheme: Range, Granularity: hour}
	daily := Namer{Prefix: "ts_", Scheme: Date, Granularity: day}
	dailyW := Namer{Prefix: "ts_", Scheme: Date, Granularity: day, WriteTimeGrouping: true}
	weekly := Namer{Prefix: "ts_", Scheme: Date, Granularity: week}
	monday := Namer{Prefix: "ts_", Scheme: Date, Granularity: mondayWeek}
	six := Namer{Prefix: "ts_", Scheme: Date, Granularity: sixHours}
	monthly := Namer{Prefix: "ts_", Scheme: Date, Granularity: month}
	quarterly := Namer{Prefix: "ts_", Scheme: Date, Granularity: quarter}

	tests := []struct {
		why  string
		n    Namer
		name string
	}{
		{"other prefix", fineo, "tt_other_1491696000000_1492300799000_4_2017"},
		{"no prefix", fineo, "1491696000000_1492300799000_4_2017"},
		{"longer prefix", fineo, "tt_events_x1491696000000_1492300799000_4_2017"},
		{"12-digit start", fineo, "tt_events_149169600000_1492300799000_4_2017"},
		{"14-digit start", fineo, "tt_events_01491696000000_1492300799000_4_2017"},
		{"12-digit end", fineo, "tt_events_1491696000000_149230079900_4_2017"},
		{"end is the next start", fineo, "tt_events_1491696000000_1492300800000_4_2017"},
		{"end a second early", fineo, "tt_events_1491696000000_1492300798000_4_2017"},
		{"end of another period", fineo, "tt_events_1491696000000_1492905599000_4_2017"},
		{"start on a Monday", fineo, "tt_events_1491782400000_1492387199000_4_2017"},
		{"start not at midnight", fineo, "tt_events_1491696000001_1492300799001_4_2017"},
		{"month 0", fineo, "tt_events_1491696000000_1492300799000_0_2017"},
		{"month 13", fineo, "tt_events_1491696000000_1492300799000_13_2017"},
		{"month 04", fineo, "tt_events_1491696000000_1492300799000_04_2017"},
		{"month +4", fineo, "tt_events_1491696000000_1492300799000_+4_2017"},
		{"month -4", fineo, "tt_events_1491696000000_1492300799000_-4_2017"},
		{"year 02017", fineo, "tt_events_1491696000000_1492300799000_4_02017"},
		{"year 12017", fineo, "tt_events_1491696000000_1492300799000_4_12017"},
		{"empty year", fineo, "tt_events_1491696000000_1492300799000_4_"},
		{"plus start", fineo, "tt_events_+491696000000_1492300799000_4_2017"},
		{"trailing junk", fineo, "tt_events_1491696000000_1492300799000_4_2017x"},
		{"trailing underscore", fineo, "tt_events_1491696000000_1492300799000_4_2017_"},
		{"trailing dot", fineo, "tt_events_1491696000000_1492300799000_4_2017."},
		{"write month missing", fineo, "tt_events_1491696000000_1492300799000"},
		{"write year missing", fineo, "tt_events_1491696000000_1492300799000_4"},
		{"write month present", fineoFlat, "tt_events_1491696000000_1492300799000_4_2017"},
		{"negative zero", hourly, "h_-0000000000000_0000003599000"},
		{"epoch hour, end of an hour before", hourly, "h_0000000000000_-0000000001000"},
		{"date suffix without grouping", daily, "ts_2018-10-25_w2018-10"},
		{"date short day", daily, "ts_2018-10-5"},
		{"date short year", daily, "ts_18-10-25"},
		{"date trailing junk", daily, "ts_2018-10-25x"},
		{"date month 13", daily, "ts_2018-13-01"},
		{"date February 30", daily, "ts_2018-02-30"},
		{"date with an hour", daily, "ts_2018-10-25-00"},
		{"date other prefix", daily, "tx_2018-10-25"},
		{"date plus year", daily, "ts_+018-10-25"},
		{"week on a Monday", weekly, "ts_2017-04-10"},
		{"monday week on a Sunday", monday, "ts_2017-04-09"},
		{"6h at 05", six, "ts_2017-04-09-05"},
		{"6h hour 24", six, "ts_2017-04-09-24"},
		{"6h without hour", six, "ts_2017-04-09"},
		{"month with a day", monthly, "ts_2017-04-01"},
		{"month one digit", monthly, "ts_2017-4"},
		{"quarter 0", quarterly, "ts_2017-Q0"},
		{"quarter 5", quarterly, "ts_2017-Q5"},
		{"quarter lower case", quarterly, "ts_2017-q2"},
		{"quarter 02", quarterly, "ts_2017-Q02"},
		{"quarter as month", quarterly, "ts_2017-04"},
		{"grouped: missing", dailyW, "ts_2018-10-25"},
		{"grouped: one-digit month", dailyW, "ts_2018-10-25_w2018-1"},
		{"grouped: no w", dailyW, "ts_2018-10-25_2018-10"},
		{"grouped: twice", dailyW, "ts_2018-10-25_w2018-10_w2018-10"},
		{"grouped: month 00", dailyW, "ts_2018-10-25_w2018-00"},
		{"grouped: upper W", dailyW, "ts_2018-10-25_W2018-10"},
	}
	for _, tc := range tests {
		t.Run(tc.why, func(t *testing.T) {
			_, err := tc.n.Parse(tc.name)
			require.ErrorIs(t, err, ErrForeign)
		})
	}
	// The same namers accept the names next to the near misses.
	for n, name := range map[*Namer]string{
		&fineo: "tt_events_1491696000000_1492300799000_4_2017", &fineoFlat: "tt_events_1491696000000_1492300799000",
		&hourly: "h_0000000000000_0000003599000", &daily: "ts_2018-10-25", &dailyW: "ts_2018-10-25_w2018-10",
		&weekly: "ts_2017-04-09", &monday: "ts_2017-04-10", &six: "ts_2017-04-09-06", &monthly: "ts_2017-04",
		&quarterly: "ts_2017-Q2",
	} {
		_, err := n.Parse(name)
		require.NoError(t, err, name)
	}
}

func TestNamerValidate(t *testing.T) {
	tests := map[string]struct {
		n     Namer
		valid bool
	}{
		"default family":      {Namer{Prefix: "tt_events_", Scheme: Range, Granularity: week, WriteTimeGrouping: true}, true},
		"empty prefix":        {Namer{Scheme: Date, Granularity: quarter}, true},
		"zero":                {Namer{}, false},
		"no scheme":           {Namer{Prefix: "tt_", Granularity: week}, false},
		"no granularity":      {Namer{Prefix: "tt_", Scheme: Range}, false},
		"bad week start":      {Namer{Prefix: "tt_", Scheme: Range, Granularity: period.Granularity{Unit: period.Day, WeekStart: time.Monday}}, false},
		"space in prefix":     {Namer{Prefix: "tt events_", Scheme: Range, Granularity: week}, false},
		"colon in prefix":     {Namer{Prefix: "tt:", Scheme: Date, Granularity: week}, false},
		"longest range fits":  {Namer{Prefix: strings.Repeat("p", 255-37), Scheme: Range, Granularity: week, WriteTimeGrouping: true}, true},
		"range too long":      {Namer{Prefix: strings.Repeat("p", 255-36), Scheme: Range, Granularity: week, WriteTimeGrouping: true}, false},
		"longest hourly fits": {Namer{Prefix: strings.Repeat("p", 255-22), Scheme: Date, Granularity: hour, WriteTimeGrouping: true}, true},
		"hourly too long":     {Namer{Prefix: strings.Repeat("p", 255-21), Scheme: Date, Granularity: hour, WriteTimeGrouping: true}, false},
		"longest monthly":     {Namer{Prefix: strings.Repeat("p", 255-7), Scheme: Date, Granularity: month}, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tc.n.Validate()
			if tc.valid {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidNamer)
			_, err = tc.n.Parse(tc.n.Prefix + "2017-04-09")
			require.ErrorIs(t, err, ErrInvalidNamer)
		})
	}
	_, err := Namer{Prefix: "tt_", Scheme: Range, Granularity: period.Granularity{Unit: period.Day, WeekStart: time.Monday}}.Parse("x")
	require.ErrorIs(t, err, period.ErrInvalidGranularity)
}

func TestLongestNamesAreValid(t *testing.T) {
	// The longest body Validate assumes is the longest Format produces.
	for _, g := range []period.Granularity{hour, day, week, month, quarter} {
		for _, s := range []Scheme{Range, Date} {
			n := Namer{Prefix: strings.Repeat("p", 255-Namer{Scheme: s, Granularity: g, WriteTimeGrouping: true}.longestBody()), Scheme: s, Granularity: g, WriteTimeGrouping: true}
			require.NoError(t, n.Validate())
			// Periods before the epoch give the longest range names
			// (both numbers negative for hours); December of a four-digit
			// year the longest write month.
			r := ref(g, "1969-12-31T22:00:00Z", "2017-12")
			if s == Date {
				r = ref(g, "2017-12-31T23:00:00Z", "2017-12")
			}
			name := n.Format(r)
			require.NoError(t, ValidTableName(name), "%s %s", s, g)
			if g == hour || s == Date {
				require.Len(t, name, 255, "%s %s", s, g)
			}
		}
	}
}

func TestCheckRef(t *testing.T) {
	n := Namer{Prefix: "tt_", Scheme: Range, Granularity: week, WriteTimeGrouping: true}
	d := Namer{Prefix: "tt_", Scheme: Date, Granularity: day}
	good := ref(week, "2017-04-12T00:00:00Z", "2017-04")
	tests := []struct {
		why string
		n   Namer
		r   Ref
	}{
		{"zero ref", n, Ref{}},
		{"no write month", n, Ref{Period: good.Period}},
		{"write month without grouping", d, ref(day, "2017-04-12T00:00:00Z", "2017-04")},
		{"month 13", n, Ref{Period: good.Period, WriteMonth: period.Month{Year: 2017, Month: 13}}},
		{"year 10000", n, Ref{Period: good.Period, WriteMonth: period.Month{Year: 10000, Month: 1}}},
		{"not a week", n, Ref{Period: period.Period{Start: good.Period.Start, End: good.Period.End.Add(time.Hour)}, WriteMonth: good.WriteMonth}},
		{"monday week", n, Ref{Period: mondayWeek.Of(at("2017-04-12T00:00:00Z")), WriteMonth: good.WriteMonth}},
		{"not UTC", n, Ref{Period: period.Period{Start: good.Period.Start.Local(), End: good.Period.End.In(time.FixedZone("x", 3600))}, WriteMonth: good.WriteMonth}},
		{"after 2286", n, ref(week, "2290-01-01T00:00:00Z", "2017-04")},
		{"date year 10000", d, Ref{Period: day.Of(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))}},
		{"date year -1", d, Ref{Period: day.Of(time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC))}},
	}
	require.Empty(t, n.checkRef(good))
	for _, tc := range tests {
		t.Run(tc.why, func(t *testing.T) {
			require.NotEmpty(t, tc.n.checkRef(tc.r))
			// What checkRef refuses does not parse back to itself.
			back, err := tc.n.Parse(tc.n.Format(tc.r))
			if err == nil {
				require.NotEqual(t, tc.r, back)
			}
		})
	}
}
