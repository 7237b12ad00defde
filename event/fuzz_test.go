package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

var fuzzSeeds = []string{
	benchEvent,
	`{"time":1491825600123}`,
	`{"time":"2017-04-10T12:00:00Z","series":"s","id":"i","fields":{"a":[1,2.50,{"b":null}],"c":"\u00e9\n","d":true,"e":{}}}`,
	`{"time":"2017-04-10T14:00:00.123456789+02:00","fields":{"x":1e-130,"y":-9.9999999999999999999999999999999999999e125}}`,
	`{"time":"2017-04-10T12:00:00Z","fields":{"tt_x":1}}`,
	`{"tim":1}`,
	`{"time":"2031-01-01T00:00:00Z"}`,
	`{"time":1,"fields":{"a":1,"a":2}}`,
	`{"time":1,"fields":` + nested(40) + `}`,
	`{"time":"2017-04-10T12:00:00Z","fields":{"x":` + nested(31) + `,"y":` + nested(32) + `}}`,
	`{"time":"2017-04-10T12:00:00Z","fields":{"x":{"":1,"k":[{}]}}}`,
	`[1,2]`,
	`{"time":"\ud800"}`,
	"{\"time\":1,\"series\":\"\xff\"}",
	`{"time":1,"fields":{"a":"\"\\\/\b\f\n\r\t"}}`,
	`not json`,
	``,
}

// surrogateEscape finds \u escapes of UTF-16 surrogates, which the
// decoders refuse and encoding/json replaces.
var surrogateEscape = regexp.MustCompile(`\\u[dD][89a-fA-F]`)

// clean reports whether body is one encoding/json reads without changing
// anything: valid UTF-8 and no surrogate escape.
func clean(body []byte) bool { return utf8.Valid(body) && !surrogateEscape.Match(body) }

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte("[" + s + "]"))
		f.Add([]byte("[" + s + "," + s + "]"))
	}
	f.Add([]byte(`[]`))
	f.Add([]byte(` [ ] `))
	f.Add([]byte(`{"time":1}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		evsBatch, err := DecodeJSON(body, Limits{}, testNow)
		evs := evsBatch.Events()
		if !json.Valid(body) {
			require.Error(t, err)
			return
		}
		var raw []json.RawMessage
		isArray := json.Unmarshal(body, &raw) == nil
		if err != nil {
			checkDecodeError(t, err, len(raw))
			if clean(body) && isArray {
				require.NotErrorIs(t, err, ErrMalformedBody)
			}
			return
		}
		require.True(t, isArray)
		require.Len(t, evs, len(raw))
		for i := range evs {
			checkLikeEncodingJSON(t, raw[i], evs[i])
		}
		checkRoundTrip(t, evs, false)
	})
}

func FuzzDecodeNDJSON(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
		f.Add([]byte(s + "\n\n" + s + "\r\n"))
	}
	f.Add([]byte("\n \n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		evsBatch, err := DecodeNDJSON(body, Limits{}, testNow)
		evs := evsBatch.Events()
		var lines [][]byte
		for _, l := range bytes.Split(body, []byte("\n")) {
			if len(bytes.Trim(l, " \t\r")) > 0 {
				lines = append(lines, l)
			}
		}
		if err != nil {
			checkDecodeError(t, err, len(lines))
			var be *BatchError
			if errors.As(err, &be) {
				bad := map[int]bool{}
				for _, p := range be.Problems {
					bad[p.Index] = true
				}
				for i, l := range lines {
					if !json.Valid(l) {
						require.True(t, bad[i], "line %d is not JSON but has no problem", i)
					}
				}
			}
			return
		}
		require.Len(t, evs, len(lines))
		for i := range evs {
			require.True(t, json.Valid(lines[i]))
			checkLikeEncodingJSON(t, lines[i], evs[i])
			checkStorable(t, evs[i])
		}
		checkRoundTrip(t, evs, true)
	})
}

// checkStorable checks that an accepted event's fields are attributes
// every store takes (storage.Item.Validate): the event rules and the
// stores' come from one place, and must not drift apart.
func checkStorable(t *testing.T, e Event) {
	it := storage.Item{PK: "tenant#table#" + e.Series + "#0", SK: e.Time.Format(time.RFC3339Nano) + "#" + e.ID, Attrs: e.Fields}
	require.NoError(t, it.Validate())
}

// checkDecodeError checks the shape of a decoder's error for a body of n
// events.
func checkDecodeError(t *testing.T, err error, n int) {
	var be *BatchError
	var tl *DecodedTooLargeError
	if errors.As(err, &tl) {
		// Numbers of a long canonical form, past the bound: no event
		// of the body is returned, and nothing else is said of it.
		require.Equal(t, DecodedTextBound(tl.Size), tl.Limit)
		return
	}
	if !errors.As(err, &be) {
		require.ErrorIs(t, err, ErrMalformedBody)
		return
	}
	require.NotEmpty(t, be.Problems)
	last := -1
	for _, p := range be.Problems {
		require.Greater(t, p.Index, last)
		require.Less(t, p.Index, n)
		require.NotEmpty(t, p.Reason)
		last = p.Index
	}
}

// checkLikeEncodingJSON checks an accepted event against what encoding/json
// reads from the same text.
func checkLikeEncodingJSON(t *testing.T, text []byte, e Event) {
	var w struct {
		Time   json.RawMessage `json:"time"`
		Series *string         `json:"series"`
		ID     *string         `json:"id"`
		Fields map[string]any  `json:"fields"`
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&w))
	if w.Series == nil {
		require.Empty(t, e.Series)
	} else {
		require.Equal(t, *w.Series, e.Series)
	}
	if w.ID == nil {
		require.Empty(t, e.ID)
	} else {
		require.Equal(t, *w.ID, e.ID)
	}
	var want map[string]any
	if len(w.Fields) > 0 {
		want = canonicalValues(t, w.Fields).(map[string]any)
	}
	require.Equal(t, want, e.Fields)

	var s string
	if json.Unmarshal(w.Time, &s) == nil {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err == nil { // the standard library refuses lowercase t and z
			require.True(t, tm.Equal(e.Time))
		}
	} else {
		var ms int64
		require.NoError(t, json.Unmarshal(w.Time, &ms))
		require.Equal(t, time.UnixMilli(ms).UTC(), e.Time)
	}
	require.Equal(t, time.UTC, e.Time.Location())
}

func canonicalValues(t *testing.T, v any) any {
	switch v := v.(type) {
	case json.Number:
		c, err := storage.CanonicalNumber(string(v))
		require.NoError(t, err)
		return c
	case map[string]any:
		for k, e := range v {
			v[k] = canonicalValues(t, e)
		}
	case []any:
		for i, e := range v {
			v[i] = canonicalValues(t, e)
		}
	}
	return v
}

// checkRoundTrip re-encodes accepted events and decodes them again: they
// must come back the same, with the same ids, and pass Validate unchanged.
func checkRoundTrip(t *testing.T, evs []Event, ndjson bool) {
	var body []byte
	if !ndjson {
		body = append(body, '[')
	}
	for i, e := range evs {
		if i > 0 && !ndjson {
			body = append(body, ',')
		}
		var err error
		body, err = e.AppendJSON(body)
		require.NoError(t, err)
		if ndjson {
			body = append(body, '\n')
		}
	}
	if !ndjson {
		body = append(body, ']')
	}
	decode := DecodeJSON
	if ndjson {
		decode = DecodeNDJSON
	}
	againBatch, err := decode(body, Limits{}, testNow)
	require.NoError(t, err, "%s", body)
	again := againBatch.Events()
	require.Equal(t, evs, again)
	for i := range evs {
		before := evs[i]
		require.NoError(t, Validate(&evs[i], Limits{}, testNow))
		require.Equal(t, before, evs[i])
		evs[i].AssignID("t", "tab", LatestIDScheme)
		again[i].AssignID("t", "tab", LatestIDScheme)
		require.Equal(t, evs[i].ID, again[i].ID)
	}
}
