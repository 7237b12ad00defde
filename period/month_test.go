package period

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestMonthOf(t *testing.T) {
	tests := map[string]struct {
		t    time.Time
		want Month
	}{
		"epoch":               {at("1970-01-01T00:00:00Z"), Month{1970, time.January}},
		"last nanosecond":     {at("2016-12-31T23:59:59.999999999Z"), Month{2016, time.December}},
		"new year":            {at("2017-01-01T00:00:00Z"), Month{2017, time.January}},
		"leap day":            {at("2020-02-29T12:00:00Z"), Month{2020, time.February}},
		"west of UTC, in UTC": {at("2017-04-30T23:00:00-02:00"), Month{2017, time.May}},
	}
	for name, tc := range tests {
		require.Equal(t, tc.want, MonthOf(tc.t), name)
	}
}

func TestMonthBoundaries(t *testing.T) {
	tests := []struct {
		m          Month
		start, end string
		next, prev Month
	}{
		{Month{2020, time.February}, "2020-02-01T00:00:00Z", "2020-03-01T00:00:00Z", Month{2020, time.March}, Month{2020, time.January}},
		{Month{2016, time.December}, "2016-12-01T00:00:00Z", "2017-01-01T00:00:00Z", Month{2017, time.January}, Month{2016, time.November}},
		{Month{1970, time.January}, "1970-01-01T00:00:00Z", "1970-02-01T00:00:00Z", Month{1970, time.February}, Month{1969, time.December}},
	}
	for _, tc := range tests {
		require.Equal(t, at(tc.start), tc.m.Start(), tc.m)
		require.Equal(t, at(tc.end), tc.m.End(), tc.m)
		require.Equal(t, Period{at(tc.start), at(tc.end)}, tc.m.Period(), tc.m)
		require.Equal(t, tc.next, tc.m.Next(), tc.m)
		require.Equal(t, tc.prev, tc.m.Prev(), tc.m)
		require.Equal(t, tc.m, tc.m.Next().Prev(), tc.m)
	}
}

func TestParseMonth(t *testing.T) {
	good := map[string]Month{
		"2017-04": {2017, time.April},
		"2017-12": {2017, time.December},
		"0999-01": {999, time.January},
		"1970-01": {1970, time.January},
	}
	for s, want := range good {
		m, err := ParseMonth(s)
		require.NoError(t, err, s)
		require.Equal(t, want, m)
		require.Equal(t, s, m.String())
	}
	for _, s := range []string{"", "2017-4", "2017-00", "2017-13", "17-04", "2017/04", "2017-04-01", "+017-04", "2017-+4", "2017-0a", " 2017-04", "20170-04"} {
		_, err := ParseMonth(s)
		require.ErrorIs(t, err, ErrInvalidMonth, s)
	}
}

func TestMonthCompare(t *testing.T) {
	a, b, c := Month{2016, time.December}, Month{2017, time.January}, Month{2017, time.April}
	require.Equal(t, -1, a.Compare(b))
	require.Equal(t, 1, c.Compare(b))
	require.Equal(t, 0, b.Compare(Month{2017, time.January}))
	require.True(t, a.Before(b))
	require.False(t, b.Before(b))
	require.True(t, c.After(b))
	require.False(t, a.After(c))
	require.True(t, Month{}.IsZero())
	require.False(t, b.IsZero())
	require.Equal(t, "2017-04", c.String())
}
