package engine_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
)

// A bucket read back from its JSON is the bucket, numbers kept to the
// digit as json.Number, and writes the same JSON again.
func TestBucketJSONRoundTrip(t *testing.T) {
	start := time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC)
	b := engine.Bucket{
		Start: start, End: start.Add(90 * time.Minute).Add(time.Nanosecond), Partial: true, Events: 3,
		Values: map[string]map[string]any{
			"speed": {"count": int64(3), "sum": json.Number("12345678901234567890.123456789"), "first": "D"},
			"ok":    {"last": true, "first": map[string]any{"a": json.Number("1")}},
		},
	}
	out, err := json.Marshal(b)
	require.NoError(t, err)
	var back engine.Bucket
	require.NoError(t, json.Unmarshal(out, &back))
	require.True(t, back.Start.Equal(b.Start) && back.End.Equal(b.End))
	require.Equal(t, json.Number("12345678901234567890.123456789"), back.Values["speed"]["sum"])
	require.Equal(t, json.Number("3"), back.Values["speed"]["count"])
	again, err := json.Marshal(back)
	require.NoError(t, err)
	require.JSONEq(t, string(out), string(again))
	require.Equal(t, string(out), string(again))

	require.Error(t, json.Unmarshal([]byte(`{"start": "June", "end": "2017-06-15T10:00:00Z", "events": 0, "values": null}`), &back))
}
