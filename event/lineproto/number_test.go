package lineproto_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/event/lineproto"
)

// A number in line protocol is taken as the JSON path takes it, or the
// line is refused: never read by Go's rules into another value.
func TestNumbersFollowTheJSONPath(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  json.Number // "" when refused
		says  string
	}{
		{"21.5", "21.5", ""},
		{"-0.0", "0", ""},
		{"1.5E-3", "0.0015", ""},
		{"3i", "3", ""},
		{"-3i", "-3", ""},
		{"3u", "3", ""},
		{".5", "0.5", ""},
		{"-.5", "-0.5", ""},
		{"1.", "1", ""},
		{"1.e3", "1000", ""},
		{"1_0", "", "number 1_0: not a JSON number"},
		{"1_0i", "", ""},
		{"0x1p4", "", "number 0x1p4"},
		{"0x10i", "", ""},
		{"1e-400", "", "magnitude below 1E-130"},
		{"1e400", "", ""},
		{"007i", "7", ""},
		{"-00.50", "-0.5", ""},
		{"+1", "", ""},
	} {
		t.Run(tc.value, func(t *testing.T) {
			tables, err := lineproto.Decode([]byte("m v="+tc.value+" 1795262400000000000"), lineproto.Options{Now: now})
			if tc.want == "" {
				var le *lineproto.Error
				require.ErrorAs(t, err, &le, "%v", tables)
				if tc.says != "" {
					require.Contains(t, le.Problems[0].Reason, tc.says)
				}
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, tables[0].Events.Events()[0].Fields["v"])
		})
	}
}

// FuzzNumber holds line protocol's numbers to the JSON path's rules: a
// number the JSON path takes, line protocol takes as the same value; a
// number line protocol takes is one the JSON path takes once written in
// JSON's grammar, with the same value (never 1_0 as 10, 0x1p4 as 16,
// 1e-400 as 0).
func FuzzNumber(f *testing.F) {
	for _, s := range []string{"1", "21.5", "-0.0", "1_0", "0x1p4", "1e-400", "1e400", ".5", "1.", "007", "1E5", "+1", "1e-130", "9.9999999999999999999999999999999999999E+125"} {
		f.Add(s, "")
		f.Add(s, "i")
	}
	f.Fuzz(func(t *testing.T, s, suffix string) {
		if suffix != "" && suffix != "i" && suffix != "u" {
			return
		}
		if strings.ContainsAny(s, " ,=\\\"\n\r\t#") || s == "" {
			return // not one field's value
		}
		tables, lpErr := lineproto.Decode([]byte("m v="+s+suffix+" 1795262400000000000"), lineproto.Options{Now: now})
		var jsonValue any
		jb, jsonErr := event.DecodeJSON([]byte(`[{"time":"2026-11-21T00:00:00Z","fields":{"v":`+s+`}}]`), event.Limits{}, now)
		if jsonErr == nil {
			jsonValue = jb.Event(0).Fields["v"]
		}
		if lpErr != nil {
			if jsonErr == nil && suffix == "" && (strings.ContainsAny(s, ".eE") || strings.HasPrefix(s, "-")) {
				t.Fatalf("the JSON path takes %s as %v, line protocol refuses it: %v", s, jsonValue, lpErr)
			}
			return
		}
		got, ok := tables[0].Events.Event(0).Fields["v"].(json.Number)
		if !ok {
			return // a bool or a string
		}
		if jsonErr == nil {
			require.Equal(t, jsonValue, got, "%s%s", s, suffix)
			return
		}
		// Taken by line protocol alone: an InfluxDB decimal form, whose
		// value the JSON path takes in JSON's grammar.
		jb, err := event.DecodeJSON([]byte(`[{"time":"2026-11-21T00:00:00Z","fields":{"v":`+string(got)+`}}]`), event.Limits{}, now)
		require.NoError(t, err, "%s%s stored as %s", s, suffix, got)
		want, _, err := apd.NewFromString(strings.TrimLeft(strings.TrimPrefix(s, "-"), "0"))
		if err != nil {
			// .5 and 1. are not apd's either: compare through the stored form.
			return
		}
		stored, _, err := apd.NewFromString(strings.TrimPrefix(string(got), "-"))
		require.NoError(t, err)
		require.Zero(t, want.Cmp(stored), "%s%s stored as %s", s, suffix, got)
		_ = jb
	})
}
