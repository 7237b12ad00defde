package event

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestValidate(t *testing.T) {
	at := time.Date(2017, 4, 10, 14, 0, 0, 5, time.FixedZone("CEST", 2*3600))
	tests := []struct {
		name   string
		ev     Event
		lim    Limits
		reason string
		want   *Event
	}{
		{name: "normalized", ev: Event{Time: at, Series: "car", Fields: map[string]any{
			"i": 42, "i8": int8(-8), "u64": uint64(math.MaxUint64), "f": 88.50, "f32": float32(0.1),
			"n": json.Number("1.50"), "s": "x", "b": []byte{1}, "t": true, "z": nil,
			"l": []any{1.0, json.Number("2e0")}, "m": map[string]any{"k": int64(7)},
		}}, want: &Event{Time: time.Date(2017, 4, 10, 12, 0, 0, 5, time.UTC), Series: "car", Fields: map[string]any{
			"i": json.Number("42"), "i8": json.Number("-8"), "u64": json.Number("18446744073709551615"),
			"f": json.Number("88.5"), "f32": json.Number("0.1"),
			"n": json.Number("1.5"), "s": "x", "b": []byte{1}, "t": true, "z": nil,
			"l": []any{json.Number("1"), json.Number("2")}, "m": map[string]any{"k": json.Number("7")},
		}}},
		{name: "no fields", ev: Event{Time: at}, want: &Event{Time: at.UTC()}},
		{name: "zero time", ev: Event{}, reason: "time: missing"},
		{name: "before epoch", ev: Event{Time: time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC)}, reason: "time 1969-12-31T23:59:59Z is before 1970-01-01T00:00:00Z"},
		{name: "future", ev: Event{Time: testNow.Add(25 * time.Hour)}, reason: "time 2017-04-12T01:00:00Z is more than 24h0m0s in the future"},
		{name: "series control", ev: Event{Time: at, Series: "a\x00"}, reason: "series: control character U+0000 at byte 1"},
		{name: "series invalid UTF-8", ev: Event{Time: at, Series: "a\xff"}, reason: "series: invalid UTF-8"},
		{name: "id too long", ev: Event{Time: at, ID: strings.Repeat("x", 129)}, reason: "id: 129 bytes, limit 128"},
		{name: "too many fields", ev: Event{Time: at, Fields: map[string]any{"a": 1, "b": 2}}, lim: Limits{MaxFields: 1}, reason: "fields: 2 fields, limit 1"},
		{name: "reserved name", ev: Event{Time: at, Fields: map[string]any{"tt_ttl": 1}}, reason: `fields: name "tt_ttl" is reserved`},
		{name: "invalid UTF-8 name", ev: Event{Time: at, Fields: map[string]any{"\xff": 1}}, reason: "fields: name with invalid UTF-8"},
		{name: "invalid UTF-8 value", ev: Event{Time: at, Fields: map[string]any{"s": []any{"ok", "\xff"}}}, reason: "fields.s[1]: invalid UTF-8"},
		{name: "invalid UTF-8 nested key", ev: Event{Time: at, Fields: map[string]any{"m": map[string]any{"\xff": 1}}}, reason: "fields.m: key with invalid UTF-8"},
		{name: "NaN", ev: Event{Time: at, Fields: map[string]any{"x": math.NaN()}}, reason: "fields.x: not finite"},
		{name: "infinity", ev: Event{Time: at, Fields: map[string]any{"x": math.Inf(-1)}}, reason: "fields.x: not finite"},
		{name: "float out of range", ev: Event{Time: at, Fields: map[string]any{"x": 1e300}}, reason: "fields.x: number out of DynamoDB's range: magnitude above 9.9999999999999999999999999999999999999E+125"},
		{name: "float too small", ev: Event{Time: at, Fields: map[string]any{"x": 5e-324}}, reason: "fields.x: number out of DynamoDB's range: magnitude below 1E-130"},
		{name: "bad json.Number", ev: Event{Time: at, Fields: map[string]any{"x": json.Number("1,5")}}, reason: "fields.x: not a JSON number"},
		{name: "unsupported type", ev: Event{Time: at, Fields: map[string]any{"x": map[string]int{"a": 1}}}, reason: "fields.x: unsupported type map[string]int"},
		{name: "too deep", ev: Event{Time: at, Fields: map[string]any{"x": []any{[]any{[]any{}}}}}, lim: Limits{MaxDepth: 2}, reason: "fields.x[0]: nested deeper than 2 levels"},
		{name: "empty nested key", ev: Event{Time: at, Fields: map[string]any{"x": map[string]any{"": 1}}}, reason: "fields.x: empty key"},
		{name: "reason of the smallest name", ev: Event{Time: at, Fields: map[string]any{"z": math.NaN(), "b": math.NaN(), "k": "\xff", "a": 1}}, reason: "fields.b: not finite"},
		{name: "nested reason of the smallest key", ev: Event{Time: at, Fields: map[string]any{"m": map[string]any{"z": math.NaN(), "c": math.NaN()}}}, reason: "fields.m.c: not finite"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 5 { // map order must not change the outcome
				e := tt.ev
				if tt.ev.Fields != nil {
					e.Fields = deepCopy(tt.ev.Fields).(map[string]any)
				}
				err := Validate(&e, tt.lim, testNow)
				if tt.reason != "" {
					require.ErrorIs(t, err, ErrInvalidEvent)
					require.Equal(t, "timetable: invalid event: "+tt.reason, err.Error())
					var ve *ValidationError
					require.ErrorAs(t, err, &ve)
					require.Equal(t, tt.reason, ve.Reason)
					continue
				}
				require.NoError(t, err)
				require.Equal(t, *tt.want, e)
			}
		})
	}
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = deepCopy(e)
		}
		return l
	default:
		return v
	}
}

func TestValidateInvalidLimits(t *testing.T) {
	e := Event{Time: testNow}
	require.ErrorIs(t, Validate(&e, Limits{MaxDepth: 33}, testNow), ErrInvalidLimits)
}

func TestLimits(t *testing.T) {
	require.Equal(t, Limits{MaxFields: 1000, MaxDepth: 32, MaxFieldName: 255, MaxSeries: 512, MaxID: 128, MaxFutureSkew: 24 * time.Hour},
		Limits{}.WithDefaults())
	require.Equal(t, Limits{MaxFields: 5, MaxDepth: 32, MaxFieldName: 255, MaxSeries: 512, MaxID: 128, MaxFutureSkew: time.Minute},
		Limits{MaxFields: 5, MaxFutureSkew: time.Minute}.WithDefaults())

	tests := []struct {
		name string
		lim  Limits
		msg  string
	}{
		{"zero", Limits{}, ""},
		{"all set", Limits{MaxFields: 1, MaxDepth: 32, MaxFieldName: 1, MaxSeries: 1, MaxID: 1, MaxFutureSkew: 1}, ""},
		{"negative fields", Limits{MaxFields: -1}, "MaxFields is negative"},
		{"negative depth", Limits{MaxDepth: -1}, "MaxDepth is negative"},
		{"negative name", Limits{MaxFieldName: -1}, "MaxFieldName is negative"},
		{"negative series", Limits{MaxSeries: -1}, "MaxSeries is negative"},
		{"negative id", Limits{MaxID: -1}, "MaxID is negative"},
		{"negative skew", Limits{MaxFutureSkew: -time.Second}, "MaxFutureSkew is negative"},
		{"depth beyond DynamoDB", Limits{MaxDepth: 33}, "MaxDepth 33 exceeds DynamoDB's 32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.lim.Validate()
			if tt.msg == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidLimits)
			require.Equal(t, "timetable: invalid event limits: "+tt.msg, err.Error())
		})
	}
}
