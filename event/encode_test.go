package event

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestMarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		ev   Event
		want string
	}{
		{"full", Event{
			Time: time.Date(2017, 4, 10, 12, 0, 0, 123456000, time.UTC), Series: "car-17", ID: "abc",
			Fields: map[string]any{"speed": json.Number("88.5"), "gear": "D", "ok": true, "none": nil,
				"pos": map[string]any{"lon": json.Number("2.3522"), "lat": json.Number("48.8566")}, "tags": []any{"a", json.Number("1")}},
		}, `{"time":"2017-04-10T12:00:00.123456Z","series":"car-17","id":"abc","fields":{"gear":"D","none":null,"ok":true,"pos":{"lat":48.8566,"lon":2.3522},"speed":88.5,"tags":["a",1]}}`},
		{"series and id omitted, fields present", Event{Time: time.Unix(0, 0)},
			`{"time":"1970-01-01T00:00:00Z","fields":{}}`},
		{"time in UTC", Event{Time: time.Date(2017, 4, 10, 14, 0, 0, 1, time.FixedZone("CEST", 7200))},
			`{"time":"2017-04-10T12:00:00.000000001Z","fields":{}}`},
		{"escapes", Event{Time: time.Unix(0, 0), Series: "a\"b\\c\n\x01\u2028é<>&", Fields: map[string]any{"k\t": "\xff"}},
			`{"time":"1970-01-01T00:00:00Z","series":"a\"b\\c\n\u0001\u2028é<>&","fields":{"k\t":"\ufffd"}}`},
		{"binary as base64", Event{Time: time.Unix(0, 0), Fields: map[string]any{"b": []byte{0, 1, 2}}},
			`{"time":"1970-01-01T00:00:00Z","fields":{"b":"AAEC"}}`},
		{"other Go values", Event{Time: time.Unix(0, 0), Fields: map[string]any{"f": 1.5, "i": 3}},
			`{"time":"1970-01-01T00:00:00Z","fields":{"f":1.5,"i":3}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.ev.MarshalJSON()
			require.NoError(t, err)
			require.Equal(t, tt.want, string(b))
			require.True(t, json.Valid(b))
			// encoding/json takes it as it is, but for its own HTML escaping.
			std, err := json.Marshal(tt.ev)
			require.NoError(t, err)
			var compact bytes.Buffer
			json.HTMLEscape(&compact, b)
			require.Equal(t, compact.String(), string(std))
		})
	}
}

func TestMarshalJSONInvalidNumber(t *testing.T) {
	_, err := Event{Time: testNow, Fields: map[string]any{"x": json.Number("1,5")}}.MarshalJSON()
	require.ErrorContains(t, err, `encode event: invalid number "1,5"`)
	// Numbers DynamoDB would refuse are still JSON.
	b, err := Event{Time: testNow, Fields: map[string]any{"x": json.Number("1e999")}}.MarshalJSON()
	require.NoError(t, err)
	require.Contains(t, string(b), `"x":1e999`)
}

func TestMarshalJSONRoundTrip(t *testing.T) {
	line := `{"time":"2017-04-10T12:00:00.123456789Z","series":"car\u0000-17?","id":"x","fields":{"a":[1e-7,{"b":"\ud83d\ude00"}],"c":{},"d":[]}}`
	_, err := DecodeNDJSON([]byte(line), Limits{}, testNow)
	require.Error(t, err) // U+0000 in a series is refused
	line = `{"time":"2017-04-10T12:00:00.123456789Z","series":"car-17","fields":{"a":[1e-7,{"b":"\ud83d\ude00\u2028"}],"c":{},"d":[],"e":"<&>"}}`
	e := decodeOne(t, line)
	b, err := e.MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, e, decodeOne(t, string(b)))
}

// plain8 finds every byte a JSON string escapes, at any of the 8 places,
// next to any other byte.
func TestPlain8(t *testing.T) {
	plain := func(c byte) bool { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' }
	for c := range 256 {
		for pos := range 8 {
			for _, fill := range []byte{'a', 0x1f, 0x20, 0x7f, 0x80, 0xff, '"', '\\', 0} {
				b := []byte{fill, fill, fill, fill, fill, fill, fill, fill}
				b[pos] = byte(c)
				want := true
				for _, x := range b {
					want = want && plain(x)
				}
				require.Equal(t, want, plain8(string(b)), "%q", b)
			}
		}
	}
}
