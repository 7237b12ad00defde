package event

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FieldsJSON writes what AppendJSON writes of the same event, whatever
// the order the fields come in, event after event.
func TestFieldsJSONIsAppendJSON(t *testing.T) {
	events := []Event{
		{Time: testNow, Series: "car-17", ID: "x", Fields: map[string]any{
			"b": "quote \" back \\ tab\t \u2028 \xff", "a": json.Number("-0.5"), "ü": []any{true, nil, map[string]any{"z": []byte{1, 2}}},
			"A": map[string]any{}, "aa": false, "": "empty name",
		}},
		{Time: testNow.Add(1234), Fields: nil},
		{Time: testNow, ID: "only-id", Fields: map[string]any{"n": json.Number("1e999")}},
	}
	var f FieldsJSON
	for _, e := range events {
		want, err := e.AppendJSON([]byte("x"))
		require.NoError(t, err)
		for name, v := range e.Fields {
			f.Add(name, v)
		}
		got, err := f.AppendEvent([]byte("x"), e.Time, e.Series, e.ID)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
	}
	// A value AppendJSON refuses fails the event, and not the next.
	f.Add("x", json.Number("1,5"))
	_, err := f.AppendEvent(nil, testNow, "", "")
	require.ErrorContains(t, err, `invalid number "1,5"`)
	got, err := f.AppendEvent(nil, testNow, "", "")
	require.NoError(t, err)
	want, _ := Event{Time: testNow}.AppendJSON(nil)
	require.Equal(t, string(want), string(got))
}

// The one-pass check of JSON numbers accepts what encoding/json takes
// for a number, and nothing around it.
func TestIsJSONNumber(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "-0": true, "7": true, "-12.50": true, "0.001": true, "123456789012345678901234567890": true,
		"1e3": true, "1E+30": true, "-0.5e-7": true,
		"": false, "-": false, "01": false, "1.": false, ".5": false, "+1": false, "1,5": false, " 1": false, "1 ": false,
		"0x1": false, "--1": false, "1e": false, "1e+": false, "NaN": false,
	} {
		require.Equal(t, want, IsJSONNumber(s), "%q", s)
		require.Equal(t, want, json.Valid([]byte(s)) && s == strings.TrimSpace(s), "%q", s)
	}
}
