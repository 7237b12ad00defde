package server

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/event"
)

// FuzzAdminBody holds the admin API's body check to the event API's
// rules: a body that is not one JSON value is refused; a value the event
// API takes as a field, the admin API takes; and one the admin API takes
// the event API never refuses for a key twice.
func FuzzAdminBody(f *testing.F) {
	for _, s := range []string{
		`{"name": "beta"}`, `{"name": "beta", "name": "gamma"}`, `{"name": "beta"} {"name": "gamma"}`,
		`{"name": "beta"}x`, `{"scope": ""}`, `{"a": {"b": 1, "b": 2}}`, `[{"a": 1}, {"a": 1}]`,
		`{"grace": "1h"}` + "\n", `{"a": [1, {"b": [], "c": {}}], "d": null}`, `"x"`, `1e5`, `{}`,
	} {
		f.Add([]byte(s))
	}
	now := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		err := checkAdminJSON(body)
		if !json.Valid(body) {
			require.Error(t, err, "%q is not one JSON value", body)
			return
		}
		_, evErr := event.DecodeJSON([]byte(`[{"time":"2026-11-25T00:00:00Z","fields":{"x":`+string(body)+`}}]`), event.Limits{}, now)
		if evErr == nil {
			require.NoError(t, err, "the event API takes %q", body)
		}
		if err == nil && evErr != nil {
			require.NotContains(t, evErr.Error(), "duplicate", "%q", body)
		}
	})
}

func TestAdminBodyCheck(t *testing.T) {
	for body, says := range map[string]string{
		`{"name": "a", "name": "b"}`:             `duplicate key "name"`,
		`{"a": {"b": 1, "b": 2}}`:                `duplicate key "b"`,
		`{"name": "a"} {"name": "b"}`:            "data after the JSON value",
		`{"name": "a"}x`:                         "data after the JSON value",
		`{"name": "a"`:                           "EOF",
		`[{"a": 1}, {"a": 1}]`:                   "",
		`{"a": [1, {"b": []}], "b": "a"}` + "\n": "",
	} {
		err := checkAdminJSON([]byte(body))
		if says == "" {
			require.NoError(t, err, body)
			continue
		}
		require.Error(t, err, body)
		require.True(t, strings.Contains(err.Error(), says), "%s: %v", body, err)
	}
}
