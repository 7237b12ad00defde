package api

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A bucket's AppendJSON writes the very bytes encoding/json writes for
// its bucketJSON, whatever its names and values hold.
func TestBucketAppendJSONIsEncodingJSON(t *testing.T) {
	start := time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC)
	for _, b := range []Bucket{
		{Start: start, End: start.Add(time.Hour)},
		{Start: start, End: start.Add(time.Hour), Values: map[string]map[string]any{}},
		{Start: start.In(time.FixedZone("x", 3600)), End: start.Add(90*time.Minute + time.Nanosecond), Partial: true, Events: -3,
			Values: map[string]map[string]any{
				"speed":         {"count": int64(3), "sum": json.Number("12345678901234567890.123456789"), "avg": json.Number("-1.5e-7"), "first": "D<&>\u2028\x01\b\f\"\\\xff", "last": nil},
				"a<b>&c":        {"first": true, "last": map[string]any{"a": json.Number("1")}, "min": json.Number("0")},
				"\x00é\n":       nil,
				"odd numbers":   {"a": json.Number(""), "f": json.Number("1E+2"), "g": json.Number("-0.0e-0")},
				"other values":  {"a": 1.5, "b": []any{"x", json.Number("2")}, "c": []byte("bytes"), "d": int64(-9)},
				"Zebra, zebra!": {"count": int64(0)},
				"<":             {"count": int64(1)},
				">":             {"&": int64(2)},
			}},
	} {
		want, err := json.Marshal(bucketJSON{b.Start.Format(time.RFC3339Nano), b.End.Format(time.RFC3339Nano), b.Partial, b.Events, b.Values})
		require.NoError(t, err)
		got, err := b.AppendJSON([]byte("prefix"))
		require.NoError(t, err)
		require.Equal(t, "prefix"+string(want), string(got))
		marshalled, err := json.Marshal(b)
		require.NoError(t, err)
		require.Equal(t, string(want), string(marshalled))
	}
}

// A number encoding/json would refuse is refused.
func TestBucketAppendJSONBadNumber(t *testing.T) {
	for _, n := range []json.Number{"01", "1.", "1e", "-", "+1", ".5", "1..2", "NaN", " 1"} {
		b := Bucket{Values: map[string]map[string]any{"x": {"sum": n}}}
		_, wantErr := json.Marshal(bucketJSON{Values: b.Values})
		require.Error(t, wantErr, n)
		_, err := b.AppendJSON(nil)
		require.Error(t, err, n)
	}
}

// appendTime writes what time.RFC3339Nano does, in UTC and in any zone,
// of any year and any fraction of a second.
func TestAppendTimeIsRFC3339Nano(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("x", 5400), time.FixedZone("y", -3600)}
	for _, at := range []time.Time{
		time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC),
		time.Date(1970, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(2024, 2, 29, 23, 59, 59, 999999999, time.UTC),
		time.Date(2017, 12, 31, 1, 2, 3, 120000000, time.UTC),
		time.Date(2017, 1, 2, 3, 4, 5, 100, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 500, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(0, 1497517200123456789).UTC(),
	} {
		for _, z := range zones {
			z := at.In(z)
			require.Equal(t, z.Format(time.RFC3339Nano), string(appendTime([]byte("x"), z))[1:], "%v", z)
		}
	}
}
