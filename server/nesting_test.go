package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/storage"
)

// nestedJSON returns a field value whose number sits at the given level,
// as DynamoDB counts levels (storage.MaxDepth): the field is level 1, and
// each object around the number adds one.
func nestedJSON(level int) string {
	return strings.Repeat(`{"a":`, level-1) + "1" + strings.Repeat("}", level-1)
}

// TestNesting checks DynamoDB's nesting limit end to end, on every
// backend: an event nested 32 levels is stored and reads back; one nested
// 33 levels is a 400 that names the field, and nothing of its request is
// written, though the request's events go to two physical tables. In the
// map layout, which keeps each field one level down in a map of event
// ids, an event may nest one level less. No answer is a 5xx: a retry
// would not change it.
func TestNesting(t *testing.T) {
	store, cfg := backend.Open(t)
	cfg.Tables["m"] = family.Table{Family: cfg.DefaultFamily, Layout: family.LayoutMap}
	f := newFixtureOn(t, store, cfg, prometheus.NewRegistry(), server.Options{})
	lastWeek := now.Add(-7 * 24 * time.Hour)
	event := func(at time.Time, fields string) string {
		return fmt.Sprintf(`{"time": %q, "series": "s", "fields": %s}`, at.Format(time.RFC3339Nano), fields)
	}
	deepest := func(table string) int {
		if table == "m" {
			return storage.MaxDepth - 1
		}
		return storage.MaxDepth
	}

	for _, table := range []string{"r", "m"} {
		t.Run(table, func(t *testing.T) {
			limit := deepest(table)
			// One level too deep, in a request whose other event goes
			// to last week's table: refused whole.
			res := f.postJSON(f.acme, table, "["+event(lastWeek, `{"ok": true}`)+","+event(now, `{"v": `+nestedJSON(limit+1)+`}`)+"]")
			require.Equal(t, http.StatusBadRequest, res.status, "body: %s", res.body)
			problems := res.json(t)["problems"].([]any)
			require.Len(t, problems, 1)
			problem := problems[0].(map[string]any)
			require.Equal(t, float64(1), problem["index"])
			require.Contains(t, problem["reason"], fmt.Sprintf("nested deeper than %d levels", limit))
			require.True(t, strings.HasPrefix(problem["reason"].(string), "fields.v"), "the reason names the field: %s", problem["reason"])
			res = f.get(f.acme, table, wide)
			require.Equal(t, http.StatusNotFound, res.status, "nothing was written, not even last week's event: %s", res.body)

			// At the limit: stored, and read back as sent.
			deep := nestedJSON(limit)
			res = f.postJSON(f.acme, table, "["+event(lastWeek, `{"ok": true}`)+","+event(now, `{"v": `+deep+`}`)+"]")
			require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
			got := f.all(f.acme, table, wide)
			require.Len(t, got, 2)
			var want any
			require.NoError(t, json.Unmarshal([]byte(deep), &want))
			require.Equal(t, map[string]any{"ok": true}, got[0].Fields)
			require.Equal(t, map[string]any{"v": want}, got[1].Fields)
		})
	}

	// A map key DynamoDB would take for an empty attribute name is
	// refused with the rest of its request.
	res := f.postJSON(f.acme, "r", "["+event(lastWeek.Add(time.Minute), `{"ok": true}`)+","+event(now.Add(time.Minute), `{"v": {"": 1}}`)+"]")
	require.Equal(t, http.StatusBadRequest, res.status, "body: %s", res.body)
	require.Contains(t, string(res.body), "fields.v: empty key")
	require.Len(t, f.all(f.acme, "r", wide), 2, "nothing more was written")
}
