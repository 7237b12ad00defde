package event

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2017-04-10T12:00:00Z", time.Date(2017, 4, 10, 12, 0, 0, 0, time.UTC), true},
		{"2017-04-10T12:00:00.1Z", time.Date(2017, 4, 10, 12, 0, 0, 1e8, time.UTC), true},
		{"2017-04-10T12:00:00.123456789Z", time.Date(2017, 4, 10, 12, 0, 0, 123456789, time.UTC), true},
		{"2017-04-10T12:00:00-07:00", time.Date(2017, 4, 10, 19, 0, 0, 0, time.UTC), true},
		{"2017-04-10T00:30:00+01:00", time.Date(2017, 4, 9, 23, 30, 0, 0, time.UTC), true},
		{"2016-02-29T00:00:00Z", time.Date(2016, 2, 29, 0, 0, 0, 0, time.UTC), true},
		{"2000-02-29T00:00:00Z", time.Date(2000, 2, 29, 0, 0, 0, 0, time.UTC), true},
		{"1491825600123", time.Date(2017, 4, 10, 12, 0, 0, 123e6, time.UTC), true},
		{"-1000", time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC), true},
		{"2017-02-29T00:00:00Z", time.Time{}, false},
		{"1900-02-29T00:00:00Z", time.Time{}, false},
		{"2017-04-31T00:00:00Z", time.Time{}, false},
		{"2017-13-01T00:00:00Z", time.Time{}, false},
		{"2017-04-10T12:60:00Z", time.Time{}, false},
		{"2017-04-10T12:00:60Z", time.Time{}, false},
		{"2017-04-10T12:00:00.Z", time.Time{}, false},
		{"2017-04-10T12:00:00.1234567890Z", time.Time{}, false},
		{"2017-04-10T12:00:00+24:00", time.Time{}, false},
		{"2017-04-10T12:00:00+0100", time.Time{}, false},
		{"2017-04-10T12:00:00Z ", time.Time{}, false},
		{"2017-4-10T12:00:00Z", time.Time{}, false},
		{"1491825600123.0", time.Time{}, false},
		{"", time.Time{}, false},
		{"now", time.Time{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTime(tt.in)
			if !tt.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.Equal(t, time.UTC, got.Location())
		})
	}
}

func TestParseTimeAt(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 5, time.FixedZone("CET", 3600))
	for in, want := range map[string]time.Time{
		"now":                  now.UTC(),
		"now-1h":               now.UTC().Add(-time.Hour),
		"now+15m":              now.UTC().Add(15 * time.Minute),
		"now-7d":               now.UTC().AddDate(0, 0, -7),
		"now-2w":               now.UTC().AddDate(0, 0, -14),
		"now-1h30m":            now.UTC().Add(-90 * time.Minute),
		"2017-04-10T12:00:00Z": time.Date(2017, 4, 10, 12, 0, 0, 0, time.UTC),
		"0":                    time.Unix(0, 0).UTC(),
	} {
		got, err := ParseTimeAt(in, now)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
		require.Equal(t, time.UTC, got.Location(), in)
		require.Equal(t, in[0] == 'n', IsRelativeTime(in), in)
	}
	for _, in := range []string{"now-", "now1h", "now - 1h", "now-1h ", "now--1h", "now-+1h", "now-1x", "now-1mo", "nowish", "Now", "yesterday"} {
		_, err := ParseTimeAt(in, now)
		require.Error(t, err, in)
	}
}

// rfc3339 is RFC 3339's date-time grammar (section 5.6) with the
// fraction bounded to nanoseconds.
var rfc3339 = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?([Zz]|[+-][0-9]{2}:[0-9]{2})$`)

// FuzzParseRFC3339 holds the hand parser to RFC 3339's grammar and, within
// it, to the standard library's parser (which is looser: it takes one-digit
// hours and offsets such as +24:00).
func FuzzParseRFC3339(f *testing.F) {
	for _, s := range []string{"2017-04-10T12:00:00Z", "2017-04-10T12:00:00.123456789+05:30", "2016-02-29t23:59:59.5z", "0000-01-01T00:00:00-23:59", "2017-02-29T00:00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseRFC3339(s)
		if !rfc3339.MatchString(s) {
			require.False(t, ok, "%q accepted", s)
			return
		}
		// The standard library wants an uppercase T and Z.
		upper := strings.ToUpper(s)
		want, err := time.Parse(time.RFC3339Nano, upper)
		if n := len(upper); err == nil && !ok && upper[n-1] != 'Z' &&
			(upper[n-5:n-3] > "23" || upper[n-2:] > "59") {
			return // the standard library takes offsets such as +24:00 and +00:60
		}
		require.Equal(t, err == nil, ok, "%q: %v", s, err)
		if ok {
			require.True(t, want.Equal(got), "%s: %v != %v", s, got, want)
			require.Equal(t, time.UTC, got.Location())
		}
	})
}
