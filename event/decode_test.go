package event

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

var testNow = time.Date(2017, 4, 11, 0, 0, 0, 0, time.UTC)

// okTime is a valid time to build test events around.
const okTime = `"2017-04-10T12:00:00Z"`

func ev(fields string) string { return `{"time":` + okTime + `,"fields":` + fields + `}` }

// nested returns n arrays nested around 1.
func nested(n int) string { return strings.Repeat("[", n) + "1" + strings.Repeat("]", n) }

func TestDecodeNDJSONRules(t *testing.T) {
	longName := strings.Repeat("n", 256)
	manyFields := func(n int) string {
		var b strings.Builder
		b.WriteString("{")
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"f` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + itoa(i) + `":1`)
		}
		b.WriteString("}")
		return b.String()
	}
	tests := []struct {
		name   string
		line   string
		lim    Limits
		reason string // "" when the event is accepted
		check  func(t *testing.T, e Event)
	}{
		{name: "full event", line: `{"time":"2017-04-10T12:00:00.123456Z","series":"car-17","id":"abc","fields":{"speed":88.50,"gear":"D","ok":true,"none":null,"pos":{"lat":48.8566},"tags":["a",1e0]}}`,
			check: func(t *testing.T, e Event) {
				require.Equal(t, Event{
					Time:   time.Date(2017, 4, 10, 12, 0, 0, 123456000, time.UTC),
					Series: "car-17",
					ID:     "abc",
					Fields: map[string]any{
						"speed": json.Number("88.5"), "gear": "D", "ok": true, "none": nil,
						"pos":  map[string]any{"lat": json.Number("48.8566")},
						"tags": []any{"a", json.Number("1")},
					},
				}, e)
			}},
		{name: "bare occurrence without fields", line: `{"time":` + okTime + `}`,
			check: func(t *testing.T, e Event) { require.Nil(t, e.Fields) }},
		{name: "null fields", line: `{"time":` + okTime + `,"fields":null}`,
			check: func(t *testing.T, e Event) { require.Nil(t, e.Fields) }},
		{name: "empty fields", line: ev(`{}`),
			check: func(t *testing.T, e Event) { require.Nil(t, e.Fields) }},
		{name: "empty nested values kept", line: ev(`{"m":{},"l":[]}`),
			check: func(t *testing.T, e Event) {
				require.Equal(t, map[string]any{"m": map[string]any{}, "l": []any{}}, e.Fields)
			}},
		{name: "whitespace everywhere", line: " \t{ \"time\" : " + okTime + " , \"fields\" : { \"a\" : [ 1 , 2 ] } } \r",
			check: func(t *testing.T, e Event) {
				require.Equal(t, map[string]any{"a": []any{json.Number("1"), json.Number("2")}}, e.Fields)
			}},
		{name: "escapes decoded", line: ev(`{"s":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00"}`),
			check: func(t *testing.T, e Event) { require.Equal(t, "a\"b\\c/d\b\f\n\r\té😀", e.Fields["s"]) }},
		{name: "escaped key", line: ev(`{"g\u0065ar":"D"}`),
			check: func(t *testing.T, e Event) { require.Equal(t, "D", e.Fields["gear"]) }},
		{name: "null series and id", line: `{"time":` + okTime + `,"series":null,"id":null}`,
			check: func(t *testing.T, e Event) { require.Equal(t, "", e.Series+e.ID) }},

		// time
		{name: "time offset to UTC", line: `{"time":"2017-04-10T14:30:00.5+02:30"}`,
			check: func(t *testing.T, e Event) {
				require.Equal(t, time.Date(2017, 4, 10, 12, 0, 0, 5e8, time.UTC), e.Time)
			}},
		{name: "time nanoseconds", line: `{"time":"2017-04-10T12:00:00.123456789Z"}`,
			check: func(t *testing.T, e Event) { require.Equal(t, 123456789, e.Time.Nanosecond()) }},
		{name: "time lowercase t and z", line: `{"time":"2017-04-10t12:00:00z"}`,
			check: func(t *testing.T, e Event) { require.Equal(t, time.Date(2017, 4, 10, 12, 0, 0, 0, time.UTC), e.Time) }},
		{name: "time Unix milliseconds", line: `{"time":1491825600123}`,
			check: func(t *testing.T, e Event) {
				require.Equal(t, time.Date(2017, 4, 10, 12, 0, 0, 123e6, time.UTC), e.Time)
			}},
		{name: "time epoch", line: `{"time":"1970-01-01T00:00:00Z"}`,
			check: func(t *testing.T, e Event) { require.Equal(t, epoch, e.Time) }},
		{name: "time in seconds refused", line: `{"time":1795262401}`,
			reason: "time: 1795262401 is before 2001 as Unix milliseconds (1970-01-21T18:41:02.401Z), so it is taken for Unix seconds or a mistake: send milliseconds, or say precision=s for seconds (precision=ms keeps it as milliseconds)"},
		{name: "time zero refused", line: `{"time":0}`, reason: "time: 0 is before 2001 as Unix milliseconds (1970-01-01T00:00:00Z), so it is taken for Unix seconds or a mistake: send milliseconds, or say precision=s for seconds (precision=ms keeps it as milliseconds)"},
		{name: "time 2001 as milliseconds", line: `{"time":978307200000}`,
			check: func(t *testing.T, e Event) { require.Equal(t, time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), e.Time) }},
		{name: "time at the skew", line: `{"time":"2017-04-12T00:00:00Z"}`},
		{name: "time missing", line: `{"fields":{"a":1}}`, reason: "time: missing"},
		{name: "time not RFC 3339", line: `{"time":"2017-04-10 12:00:00Z"}`, reason: reasonTime},
		{name: "time date only", line: `{"time":"2017-04-10"}`, reason: reasonTime},
		{name: "time 10 fraction digits", line: `{"time":"2017-04-10T12:00:00.1234567891Z"}`, reason: reasonTime},
		{name: "time no offset", line: `{"time":"2017-04-10T12:00:00"}`, reason: reasonTime},
		{name: "time February 30", line: `{"time":"2017-02-30T12:00:00Z"}`, reason: reasonTime},
		{name: "time hour 24", line: `{"time":"2017-04-10T24:00:00Z"}`, reason: reasonTime},
		{name: "time string of digits", line: `{"time":"1491825600123"}`, reason: reasonTimeDigits},
		{name: "time float", line: `{"time":1491825600123.5}`, reason: reasonTimeFloat},
		{name: "time exponent", line: `{"time":1.4918256e12}`, reason: reasonTimeFloat},
		{name: "time boolean", line: `{"time":true}`, reason: reasonTime},
		{name: "time object", line: `{"time":{"ms":1}}`, reason: reasonTime},
		{name: "time null", line: `{"time":null}`, reason: reasonTime},
		{name: "time overflows", line: `{"time":99999999999999999999}`, reason: reasonTimeRange},
		{name: "time before epoch", line: `{"time":-1}`, reason: "time 1969-12-31T23:59:59.999Z is before 1970-01-01T00:00:00Z"},
		{name: "time before epoch RFC 3339", line: `{"time":"1969-12-31T23:00:00-02:00"}`,
			check: func(t *testing.T, e Event) { require.Equal(t, time.Date(1970, 1, 1, 1, 0, 0, 0, time.UTC), e.Time) }},
		{name: "time in the future", line: `{"time":"2031-01-01T00:00:00Z"}`, reason: "time 2031-01-01T00:00:00Z is more than 24h0m0s in the future"},
		{name: "time just past the skew", line: `{"time":"2017-04-12T00:00:00.000000001Z"}`, reason: "time 2017-04-12T00:00:00.000000001Z is more than 24h0m0s in the future"},
		{name: "time custom skew", line: `{"time":"2017-04-11T00:00:01Z"}`, lim: Limits{MaxFutureSkew: time.Second}},
		{name: "time past what nanoseconds hold", line: `{"time":"2300-01-01T00:00:00Z"}`, lim: Limits{MaxFutureSkew: 290 * 365 * 24 * time.Hour},
			reason: "time 2300-01-01T00:00:00Z is after 2262-04-11T23:47:16.854775807Z, the last time timetable can store"},
		{name: "time custom skew exceeded", line: `{"time":"2017-04-11T00:00:02Z"}`, lim: Limits{MaxFutureSkew: time.Second}, reason: "time 2017-04-11T00:00:02Z is more than 1s in the future"},

		// top-level keys
		{name: "unknown key", line: `{"tim":` + okTime + `}`, reason: `unknown key "tim"`},
		{name: "unknown key after time", line: `{"time":` + okTime + `,"extra":{"deep":[1,2,{"x":null}]}}`, reason: `unknown key "extra"`},
		{name: "duplicate key", line: `{"time":` + okTime + `,"time":` + okTime + `}`, reason: `duplicate key "time"`},

		// series and id
		{name: "series not a string", line: `{"time":` + okTime + `,"series":17}`, reason: "series: not a string"},
		{name: "series control character", line: `{"time":` + okTime + `,"series":"car\u0001"}`, reason: "series: control character U+0001 at byte 3"},
		{name: "series C1 control character", line: `{"time":` + okTime + `,"series":"caré\u0085"}`, reason: "series: control character U+0085 at byte 5"},
		{name: "series DEL", line: `{"time":` + okTime + `,"series":"\u007f"}`, reason: "series: control character U+007F at byte 0"},
		{name: "series at its limit", line: `{"time":` + okTime + `,"series":"` + strings.Repeat("s", 512) + `"}`},
		{name: "series too long", line: `{"time":` + okTime + `,"series":"` + strings.Repeat("s", 513) + `"}`, reason: "series: 513 bytes, limit 512"},
		{name: "series unicode", line: `{"time":` + okTime + `,"series":"véhicule-17"}`,
			check: func(t *testing.T, e Event) { require.Equal(t, "véhicule-17", e.Series) }},
		{name: "id empty", line: `{"time":` + okTime + `,"id":""}`, reason: "id: empty; leave it out to get an idempotent id"},
		{name: "id not a string", line: `{"time":` + okTime + `,"id":[]}`, reason: "id: not a string"},
		{name: "id too long", line: `{"time":` + okTime + `,"id":"` + strings.Repeat("i", 129) + `"}`, reason: "id: 129 bytes, limit 128"},
		{name: "id custom limit", line: `{"time":` + okTime + `,"id":"abcd"}`, lim: Limits{MaxID: 3}, reason: "id: 4 bytes, limit 3"},
		{name: "id newline", line: `{"time":` + okTime + `,"id":"a\nb"}`, reason: "id: control character U+000A at byte 1"},

		// fields
		{name: "fields not an object", line: ev(`[1]`), reason: "fields: not an object"},
		{name: "fields a string", line: ev(`"speed"`), reason: "fields: not an object"},
		{name: "fields at the limit", line: ev(manyFields(1000))},
		{name: "too many fields", line: ev(manyFields(1001)), reason: "fields: 1001 fields, limit 1000"},
		{name: "custom field limit", line: ev(`{"a":1,"b":2,"c":3}`), lim: Limits{MaxFields: 2}, reason: "fields: 3 fields, limit 2"},
		{name: "empty field name", line: ev(`{"":1}`), reason: "fields: empty name"},
		{name: "field name pk", line: ev(`{"pk":1}`), reason: `fields: name "pk" is reserved`},
		{name: "field name sk", line: ev(`{"sk":1}`), reason: `fields: name "sk" is reserved`},
		{name: "field name tt_", line: ev(`{"tt_ttl":1}`), reason: `fields: name "tt_ttl" is reserved`},
		{name: "field names PK and tt are free", line: ev(`{"PK":1,"tt":2,"Tt_x":3}`)},
		{name: "field name at its limit", line: ev(`{"` + longName[:255] + `":1}`)},
		{name: "field name too long", line: ev(`{"` + longName + `":1}`), reason: "fields: name of 256 bytes, limit 255"},
		{name: "duplicate field", line: ev(`{"a":1,"b":2,"a":3}`), reason: `fields: duplicate name "a"`},
		{name: "duplicate nested key", line: ev(`{"a":{"b":1,"b":1}}`), reason: `fields.a: duplicate key "b"`},
		{name: "nested keys unreserved", line: ev(`{"a":{"pk":1,"tt_x":3}}`)},
		{name: "empty nested key", line: ev(`{"a":{"b":1,"":2}}`), reason: "fields.a: empty key"},
		{name: "nested key at its limit", line: ev(`{"a":{"` + strings.Repeat("k", storage.MaxNameBytes) + `":1}}`)},
		{name: "nested key too long", line: ev(`{"a":{"` + strings.Repeat("k", storage.MaxNameBytes+1) + `":1}}`), reason: "fields.a: key of 65536 bytes, limit 65535"},

		// numbers
		{name: "numbers canonical", line: ev(`{"a":1.0,"b":1e0,"c":100e-2,"d":-0.0,"e":12.500,"f":0.1e-6,"g":123e20}`),
			check: func(t *testing.T, e Event) {
				require.Equal(t, map[string]any{
					"a": json.Number("1"), "b": json.Number("1"), "c": json.Number("1"), "d": json.Number("0"),
					"e": json.Number("12.5"), "f": json.Number("0.0000001"), "g": json.Number("12300000000000000000000"),
				}, e.Fields)
			}},
		{name: "38 digits", line: ev(`{"x":12345678901234567890123456789012345678}`)},
		{name: "39 digits", line: ev(`{"x":123456789012345678901234567890123456789}`), reason: "fields.x: more than 38 significant digits"},
		{name: "39 digits with zeros trimmed", line: ev(`{"x":0.00123456789012345678901234567890123456780000}`)},
		{name: "largest", line: ev(`{"x":-9.9999999999999999999999999999999999999e125}`)},
		{name: "too large", line: ev(`{"x":1e126}`), reason: "fields.x: number out of DynamoDB's range: magnitude above 9.9999999999999999999999999999999999999E+125"},
		{name: "smallest", line: ev(`{"x":1e-130}`)},
		{name: "too small", line: ev(`{"x":-0.9e-130}`), reason: "fields.x: number out of DynamoDB's range: magnitude below 1E-130"},
		{name: "huge exponent", line: ev(`{"x":1e99999999999999999999}`), reason: "fields.x: number out of DynamoDB's range: magnitude above 9.9999999999999999999999999999999999999E+125"},
		{name: "zero with huge exponent", line: ev(`{"x":0e99999999999999999999}`)},
		{name: "nested number path", line: ev(`{"a":{"b":[1,{"c":1e200}]}}`), reason: "fields.a.b[1].c: number out of DynamoDB's range: magnitude above 9.9999999999999999999999999999999999999E+125"},

		// depth, in DynamoDB's levels: the field is level 1, and nested(n)
		// puts its number at level n+1
		{name: "32 levels", line: ev(`{"x":` + nested(31) + `}`)},
		{name: "33 levels", line: ev(`{"x":` + nested(32) + `}`), reason: "fields.x" + strings.Repeat("[0]", 31) + ": nested deeper than 32 levels"},
		{name: "empty array at level 32", line: ev(`{"x":` + strings.Repeat("[", 32) + strings.Repeat("]", 32) + `}`), reason: "fields.x" + strings.Repeat("[0]", 31) + ": nested deeper than 32 levels"},
		{name: "object at level 32", line: ev(`{"x":` + strings.Repeat(`{"a":`, 32) + "1" + strings.Repeat("}", 32) + `}`), reason: "fields.x" + strings.Repeat(".a", 31) + ": nested deeper than 32 levels"},
		{name: "custom depth", line: ev(`{"x":{"y":{"z":{}}}}`), lim: Limits{MaxDepth: 2}, reason: "fields.x.y: nested deeper than 2 levels"},
		{name: "custom depth kept", line: ev(`{"x":{"y":[1]}}`), lim: Limits{MaxDepth: 3}},
		{name: "scalars only", line: ev(`{"x":[]}`), lim: Limits{MaxDepth: 1}, reason: "fields.x: nested deeper than 1 levels"},
		{name: "very deep skipped", line: ev(`{"x":` + nested(100000) + `}`), reason: "fields.x" + strings.Repeat("[0]", 31) + ": nested deeper than 32 levels"},

		// first problem wins
		{name: "first problem reported", line: `{"series":5,"tim":1,"fields":{"pk":1}}`, reason: "series: not a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evsBatch, err := DecodeNDJSON([]byte(tt.line), tt.lim, testNow)
			evs := evsBatch.Events()
			if tt.reason != "" {
				var be *BatchError
				require.ErrorAs(t, err, &be, "%v", err)
				require.Equal(t, []Problem{{Index: 0, Reason: tt.reason}}, be.Problems)
				require.ErrorIs(t, err, ErrInvalidEvent)
				require.Nil(t, evs)
			} else {
				require.NoError(t, err)
				require.Len(t, evs, 1)
				if tt.check != nil {
					tt.check(t, evs[0])
				}
			}
			// The JSON decoder applies the same rules.
			jevsBatch, jerr := DecodeJSON([]byte("["+tt.line+"]"), tt.lim, testNow)
			jevs := jevsBatch.Events()
			require.Equal(t, evs, jevs)
			require.Equal(t, err, jerr)
			// And so does Validate, on what the decoders accept.
			for i := range evs {
				before := evs[i]
				require.NoError(t, Validate(&evs[i], tt.lim, testNow))
				require.Equal(t, before, evs[i])
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestDecodeNDJSONLines(t *testing.T) {
	good := `{"time":1491825600000}`
	tests := []struct {
		name     string
		body     string
		n        int
		problems []Problem
	}{
		{name: "empty body", body: "", n: 0},
		{name: "blank lines only", body: "\n \n\t\r\n", n: 0},
		{name: "no final newline", body: good + "\n" + good, n: 2},
		{name: "final newline", body: good + "\n" + good + "\n", n: 2},
		{name: "CRLF", body: good + "\r\n" + good + "\r\n", n: 2},
		{name: "blank lines skipped", body: "\n" + good + "\n\n  \n" + good + "\n\n", n: 2},
		{name: "indexes count events, not lines", body: "\n" + good + "\n\n" + `{"time":"x"}` + "\n\n" + `{"tim":1}`,
			problems: []Problem{{Index: 1, Reason: reasonTime}, {Index: 2, Reason: `unknown key "tim"`}}},
		{name: "syntax error in a line", body: good + "\n" + `{"time": }` + "\n" + good,
			problems: []Problem{{Index: 1, Reason: `invalid JSON at column 10: invalid character '}', expected a value`}}},
		{name: "truncated line", body: good + "\n" + `{"time":1491825600000`,
			problems: []Problem{{Index: 1, Reason: `invalid JSON at column 22: unexpected end of input, expected ',' or '}' after an event's value`}}},
		{name: "two events on a line", body: good + "\n" + good + good,
			problems: []Problem{{Index: 1, Reason: `invalid JSON at column 23: data after the event`}}},
		{name: "not an object", body: good + "\n[1,2]\n\"x\"\n",
			problems: []Problem{{Index: 1, Reason: "not a JSON object"}, {Index: 2, Reason: "not a JSON object"}}},
		{name: "invalid UTF-8", body: good + "\n{\"time\":1,\"series\":\"\xff\"}",
			problems: []Problem{{Index: 1, Reason: "invalid JSON at column 21: invalid UTF-8 in a string"}}},
		{name: "lone surrogate", body: good + "\n" + `{"time":1491825600000,"series":"\ud800"}`,
			problems: []Problem{{Index: 1, Reason: `invalid JSON at column 39: lone UTF-16 surrogate in a \u escape`}}},
		{name: "raw control character", body: good + "\n{\"time\":1,\"series\":\"a\tb\"}",
			problems: []Problem{{Index: 1, Reason: `invalid JSON at column 22: control character '\t' in a string`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evsBatch, err := DecodeNDJSON([]byte(tt.body), Limits{}, testNow)
			evs := evsBatch.Events()
			if tt.problems != nil {
				var be *BatchError
				require.ErrorAs(t, err, &be)
				require.Equal(t, tt.problems, be.Problems)
				require.Nil(t, evs)
				return
			}
			require.NoError(t, err)
			require.Len(t, evs, tt.n)
		})
	}
}

func TestDecodeJSONArray(t *testing.T) {
	good := `{"time":1491825600000}`
	tests := []struct {
		name     string
		body     string
		n        int
		problems []Problem
	}{
		{name: "empty array", body: "[]", n: 0},
		{name: "empty array with whitespace", body: " [ \n ] \n", n: 0},
		{name: "events", body: "[" + good + "," + good + "," + good + "]", n: 3},
		{name: "bad events named by index", body: "[" + good + `,{"time":"x"},` + good + `,{"tim":1},7,null]`,
			problems: []Problem{
				{Index: 1, Reason: reasonTime},
				{Index: 3, Reason: `unknown key "tim"`},
				{Index: 4, Reason: "not a JSON object"},
				{Index: 5, Reason: "not a JSON object"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evsBatch, err := DecodeJSON([]byte(tt.body), Limits{}, testNow)
			evs := evsBatch.Events()
			if tt.problems != nil {
				var be *BatchError
				require.ErrorAs(t, err, &be)
				require.Equal(t, tt.problems, be.Problems)
				require.Nil(t, evs)
				return
			}
			require.NoError(t, err)
			require.Len(t, evs, tt.n)
		})
	}
}

func TestDecodeMalformedBody(t *testing.T) {
	tests := []struct {
		name   string
		ndjson bool
		body   string
		msg    string
	}{
		{name: "empty", body: "", msg: "expected a JSON array of events, found an empty body"},
		{name: "whitespace", body: " \n", msg: "expected a JSON array of events, found only whitespace"},
		{name: "object", body: `{"time":1491825600000}`, msg: "expected a JSON array of events, found an object"},
		{name: "number", body: `12`, msg: "expected a JSON array of events, found a number"},
		{name: "text", body: "hello", msg: "expected a JSON array of events, found 'h' at offset 0, which is not JSON"},
		{name: "unterminated array", body: `[{"time":1}`, msg: `event 0: unexpected end of input, expected ',' or ']' after an event at offset 11`},
		{name: "syntax error in an event", body: `[{"time":1},{"time":1,}]`, msg: `event 1: invalid character '}', expected a string at offset 22`},
		{name: "syntax error in a non-object", body: `[{"time":1},[1,]]`, msg: `event 1: invalid character ']', expected a value at offset 15`},
		{name: "trailing comma", body: `[{"time":1},]`, msg: `event 1: invalid character ']', expected a value at offset 12`},
		{name: "data after", body: `[] []`, msg: "data after the array of events at offset 3"},
		{name: "bad number", body: `[{"time":01}]`, msg: `event 0: invalid character '1', expected ',' or '}' after an event's value at offset 10`},
		{name: "bad literal", body: `[{"time":1,"fields":{"a":tru}}]`, msg: `event 0: invalid character 't', expected a value at offset 25`},
		{name: "bad escape", body: `[{"time":1,"series":"\x"}]`, msg: `event 0: invalid character 'x', expected an escape character at offset 22`},
		{name: "ndjson text", ndjson: true, body: "hello\nworld\n", msg: `no line holds a JSON object (line 1: invalid JSON at column 1: invalid character 'h', expected a value)`},
		{name: "ndjson array", ndjson: true, body: `[{"time":1}]`, msg: `no line holds a JSON object (line 1: not a JSON object)`},
		{name: "ndjson first bad line named", ndjson: true, body: "\n\n5\n", msg: `no line holds a JSON object (line 3: not a JSON object)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			decode := DecodeJSON
			if tt.ndjson {
				decode = DecodeNDJSON
			}
			evs, err := decode([]byte(tt.body), Limits{}, testNow)
			require.ErrorIs(t, err, ErrMalformedBody)
			require.NotErrorIs(t, err, ErrInvalidEvent)
			require.Equal(t, ErrMalformedBody.Error()+": "+tt.msg, err.Error())
			require.Zero(t, evs.Len())
		})
	}
}

func TestDecodeInvalidLimits(t *testing.T) {
	for _, decode := range []func([]byte, Limits, time.Time) (Batch, error){DecodeJSON, DecodeNDJSON} {
		_, err := decode([]byte(`[]`), Limits{MaxFields: -1}, testNow)
		require.ErrorIs(t, err, ErrInvalidLimits)
	}
}

func TestDecodeDoesNotKeepBody(t *testing.T) {
	body := []byte(`{"time":1491825600000,"series":"car","id":"x","fields":{"gear":"D","speed":88.5,"esc":"\u00e9"}}`)
	evsBatch, err := DecodeNDJSON(body, Limits{}, testNow)
	evs := evsBatch.Events()
	require.NoError(t, err)
	want := Event{Time: time.UnixMilli(1491825600000).UTC(), Series: "car", ID: "x",
		Fields: map[string]any{"gear": "D", "speed": json.Number("88.5"), "esc": "é"}}
	require.Equal(t, want, evs[0])
	for i := range body {
		body[i] = 'X'
	}
	require.Equal(t, want, evs[0])
}

func TestBatchErrorMessage(t *testing.T) {
	one := &BatchError{Problems: []Problem{{Index: 3, Reason: "time: missing"}}}
	require.Equal(t, "timetable: invalid event: 1 bad event: event 3: time: missing", one.Error())
	var many BatchError
	for i := 0; i < 12; i++ {
		many.Problems = append(many.Problems, Problem{Index: i, Reason: "r"})
	}
	require.Equal(t, "timetable: invalid event: 12 bad events: event 0: r; event 1: r; event 2: r; event 3: r; event 4: r; "+
		"event 5: r; event 6: r; event 7: r; event 8: r; event 9: r; and 2 more", many.Error())
	require.True(t, errors.Is(&many, ErrInvalidEvent))
	require.False(t, errors.Is(&many, ErrMalformedBody))
}

func TestDecodePrecision(t *testing.T) {
	at := time.Date(2026, 11, 22, 21, 20, 1, 0, time.UTC)
	now := at.Add(time.Hour)
	for _, tt := range []struct {
		precision string
		time      string
		want      time.Time
	}{
		{"s", "1795382401", at},
		{"ms", "1795382401000", at},
		{"ms", "5", time.UnixMilli(5).UTC()}, // said outright: kept
		{"us", "1795382401000123", at.Add(123 * time.Microsecond)},
		{"ns", "1795382401000000123", at.Add(123)},
		{"", "1795382401000", at},
	} {
		p, err := ParsePrecision(tt.precision)
		require.NoError(t, err)
		evsBatch, err := DecodeNDJSON([]byte(`{"time":`+tt.time+`}`), Limits{Precision: p}, now)
		evs := evsBatch.Events()
		require.NoError(t, err, "precision %q", tt.precision)
		require.Equal(t, tt.want, evs[0].Time, "precision %q", tt.precision)
	}
	_, err := DecodeNDJSON([]byte(`{"time":1795382401}`), Limits{}, now)
	require.ErrorContains(t, err, "precision=s")
	_, err = ParsePrecision("d")
	require.ErrorContains(t, err, "use h, m, s, ms, us or ns")
	_, err = DecodeJSON([]byte(`[]`), Limits{Precision: 9}, now)
	require.ErrorIs(t, err, ErrInvalidLimits)
}

// A client id names one event of a request: a repeat is refused, naming
// the event that has it first; events without ids are not compared.
func TestDecodeRefusesRepeatedIDs(t *testing.T) {
	a := `{"time":"2017-04-10T12:00:00Z","id":"a"}`
	b := `{"time":"2017-04-10T12:00:01Z","id":"b"}`
	aLater := `{"time":"2017-04-10T12:00:02Z","id":"a"}`
	noID := `{"time":"2017-04-10T12:00:00Z"}`
	want := []Problem{{Index: 3, Reason: `id "a": event 0 of this request has it too; a client id names one event of a request`}}
	_, err := DecodeJSON([]byte("["+a+","+b+","+noID+","+aLater+","+noID+"]"), Limits{}, testNow)
	var be *BatchError
	require.ErrorAs(t, err, &be)
	require.Equal(t, want, be.Problems)
	_, err = DecodeNDJSON([]byte(a+"\n"+b+"\n"+noID+"\n"+aLater+"\n"+noID+"\n"), Limits{}, testNow)
	require.ErrorAs(t, err, &be)
	require.Equal(t, want, be.Problems)
}

// Check applies the decoders' rules to events built in Go: it names every
// bad event (a repeated client id included), normalizes the good ones in
// place, and its Batch holds them in its own columns, where AssignIDs
// sets their ids.
func TestCheck(t *testing.T) {
	at := time.Date(2017, 4, 10, 12, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	events := []Event{
		{Time: at, Series: "a", Fields: map[string]any{"v": 1.5}},
		{Time: at, ID: "x"},
		{Series: "no time"},
		{Time: at, ID: "x"},
	}
	_, err := Check(events, Limits{}, testNow)
	var be *BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Problems, 2)
	require.Equal(t, 2, be.Problems[0].Index)
	require.Equal(t, reasonTimeAbsent, be.Problems[0].Reason)
	require.Equal(t, 3, be.Problems[1].Index)
	require.Contains(t, be.Problems[1].Reason, "event 1 of this request has it too")

	good := events[:2]
	b, err := Check(good, Limits{}, testNow)
	require.NoError(t, err)
	require.Equal(t, 2, b.Len())
	require.Equal(t, json.Number("1.5"), good[0].Fields["v"], "normalized in place")
	require.Equal(t, time.UTC, good[0].Time.Location())
	b.AssignIDs("t", "tab", LatestIDScheme)
	require.NotEmpty(t, b.Event(0).ID)
	require.Equal(t, "x", b.Event(1).ID)
	require.Empty(t, good[0].ID, "the caller's events are not the batch's")
	ev := good[0]
	ev.AssignID("t", "tab", LatestIDScheme)
	require.Equal(t, ev.ID, b.Event(0).ID, "the batch's id is the event's")

	// Events edits a copy: the batch is unchanged.
	edited := b.Events()
	edited[0].Series = "other"
	require.Equal(t, "a", b.Event(0).Series)

	_, err = Check(good, Limits{MaxFields: -1}, testNow)
	require.ErrorIs(t, err, ErrInvalidLimits)
}

// A batch larger than one chunk of fields reads back every event as it
// was sent, by Event and joined with another, and gives each the id
// Event.AssignID gives it.
func TestABatchOfManyChunksReadsBack(t *testing.T) {
	var body strings.Builder
	var want []Event
	for i := range 3000 {
		at := testNow.Add(-time.Duration(i) * time.Second)
		pad := strings.Repeat(string(rune('a'+i%26)), 700+i%300)
		fmt.Fprintf(&body, `{"time":%d,"series":"s%d","fields":{"z":%d,"pad":%q,"l":[1,"x",null,{"k":true}]}}`+"\n", at.UnixMilli(), i%7, i, pad)
		want = append(want, Event{Time: at.Truncate(time.Millisecond), Series: fmt.Sprintf("s%d", i%7), Fields: map[string]any{
			"z": json.Number(fmt.Sprint(i)), "pad": pad, "l": []any{json.Number("1"), "x", nil, map[string]any{"k": true}}}})
	}
	b, err := DecodeNDJSON([]byte(body.String()), Limits{}, testNow)
	require.NoError(t, err)
	require.Greater(t, len(b.chunks), 2, "the batch spans chunks")
	joined := Join(b, b)
	require.Equal(t, 2*len(want), joined.Len())
	for i, w := range want {
		require.Equal(t, w, b.Event(i), "event %d", i)
		require.Equal(t, w, joined.Event(len(want)+i), "joined event %d", i)
		w.AssignID("t", "tab", LatestIDScheme)
		require.Equal(t, w.ID, b.AssignID(i, "t", "tab", LatestIDScheme), "id of event %d", i)
	}
}

// WithSeries gives each event a series, checked as a decoder checks
// one, and keeps the rest of the batch.
func TestWithSeries(t *testing.T) {
	b, err := DecodeNDJSON([]byte(`{"time":1491825600000,"fields":{"v":1}}
{"time":1491825601000,"series":"a","fields":{"v":2}}
`), Limits{}, testNow)
	require.NoError(t, err)
	named, err := b.WithSeries(Limits{}, func(i int) string { return fmt.Sprint("s", i) })
	require.NoError(t, err)
	require.Equal(t, "s0", named.Event(0).Series)
	require.Equal(t, "s1", named.Event(1).Series)
	require.Equal(t, map[string]any{"v": json.Number("2")}, named.Event(1).Fields)
	require.Equal(t, "a", b.Event(1).Series, "b is unchanged")
	_, err = b.WithSeries(Limits{MaxSeries: 2}, func(i int) string { return strings.Repeat("x", 2+i) })
	var be *BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Problems, 1)
	require.Equal(t, 1, be.Problems[0].Index)
}
