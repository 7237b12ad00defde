package period

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestPeriodContains(t *testing.T) {
	p := Period{Start: at("2017-04-09T00:00:00Z"), End: at("2017-04-16T00:00:00Z")}
	tests := map[string]struct {
		t    time.Time
		want bool
	}{
		"start":                   {at("2017-04-09T00:00:00Z"), true},
		"nanosecond before":       {at("2017-04-08T23:59:59.999999999Z"), false},
		"middle":                  {at("2017-04-12T13:14:15.123456789Z"), true},
		"last nanosecond":         {at("2017-04-15T23:59:59.999999999Z"), true},
		"end":                     {at("2017-04-16T00:00:00Z"), false},
		"west of UTC, at start":   {at("2017-04-08T22:00:00-02:00"), true},
		"east of UTC, before end": {at("2017-04-16T01:00:00+02:00"), true},
		"east of UTC, at end":     {at("2017-04-16T02:00:00+02:00"), false},
	}
	for name, tc := range tests {
		require.Equal(t, tc.want, p.Contains(tc.t), name)
	}
}

func TestPeriodOverlaps(t *testing.T) {
	p := Period{Start: at("2017-04-09T00:00:00Z"), End: at("2017-04-16T00:00:00Z")}
	tests := map[string]struct {
		from, to string
		want     bool
	}{
		"inside":                    {"2017-04-10T00:00:00Z", "2017-04-11T00:00:00Z", true},
		"covers":                    {"2017-01-01T00:00:00Z", "2018-01-01T00:00:00Z", true},
		"ends at start":             {"2017-04-01T00:00:00Z", "2017-04-09T00:00:00Z", true},
		"ends a nanosecond early":   {"2017-04-01T00:00:00Z", "2017-04-08T23:59:59.999999999Z", false},
		"starts at end":             {"2017-04-16T00:00:00Z", "2017-04-20T00:00:00Z", false},
		"starts at last nanosecond": {"2017-04-15T23:59:59.999999999Z", "2017-04-20T00:00:00Z", true},
		"one instant at start":      {"2017-04-09T00:00:00Z", "2017-04-09T00:00:00Z", true},
		"one instant at end":        {"2017-04-16T00:00:00Z", "2017-04-16T00:00:00Z", false},
		"inverted":                  {"2017-04-12T00:00:00Z", "2017-04-10T00:00:00Z", false},
	}
	for name, tc := range tests {
		require.Equal(t, tc.want, p.Overlaps(at(tc.from), at(tc.to)), name)
	}
}

func TestPeriodHelpers(t *testing.T) {
	p := Period{Start: at("2020-02-01T00:00:00Z"), End: at("2020-03-01T00:00:00Z")}
	require.Equal(t, 29*24*time.Hour, p.Duration())
	require.Equal(t, "[2020-02-01T00:00:00Z, 2020-03-01T00:00:00Z)", p.String())
	require.False(t, p.IsZero())
	require.True(t, Period{}.IsZero())
	require.True(t, p.Equal(Period{Start: at("2020-02-01T01:00:00+01:00"), End: at("2020-03-01T00:00:00Z")}))
	require.False(t, p.Equal(Period{Start: p.Start, End: p.End.Add(1)}))
}
