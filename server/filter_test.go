package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/internal/dynamotest"
	"github.com/timetabledb/timetable/server"
)

func TestFilter(t *testing.T) {
	f := newFixture(t, server.Options{})
	start := now.Add(-3 * time.Hour).Truncate(time.Hour)
	var body strings.Builder
	for i := range 60 {
		level := "INFO"
		if i%4 == 0 {
			level = "ERROR"
		}
		fmt.Fprintf(&body, `{"time": %q, "series": "dev-%d", "fields": {"i": %d, "level": %q, "temp": %d}}`+"\n",
			start.Add(time.Duration(i)*time.Minute).Format(time.RFC3339), i%2, i, level, 20+i%15)
	}
	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "logs", body.String()).status)

	t.Run("events, followed over pages", func(t *testing.T) {
		for _, limit := range []string{"1", "4", "1000"} {
			got := f.all(f.acme, "logs", with(with(wide, "limit", limit), "filter", `level = "ERROR" and temp >= 26`))
			var want []float64
			for i := range 60 {
				if i%4 == 0 && 20+i%15 >= 26 {
					want = append(want, float64(i))
				}
			}
			var is []float64
			for _, e := range got {
				is = append(is, e.Fields["i"].(float64))
			}
			require.Equal(t, want, is, "limit %s", limit)
		}
	})
	t.Run("a cursor belongs to its filter", func(t *testing.T) {
		p := f.getPage(f.acme, "logs", with(with(wide, "limit", "2"), "filter", `level = "ERROR"`))
		require.NotNil(t, p.NextCursor)
		res := f.get(f.acme, "logs", with(with(wide, "cursor", *p.NextCursor), "filter", `level = "INFO"`))
		require.Equal(t, http.StatusBadRequest, res.status, "%s", res.body)
		require.Contains(t, res.json(t)["error"], "another query")
	})
	t.Run("aggregate", func(t *testing.T) {
		params := rangeParams(start, start.Add(time.Hour-time.Second))
		params.Set("bucket", "1h")
		params.Set("fields", "temp")
		params.Set("fn", "count,max")
		params.Set("filter", `level = "ERROR"`)
		res := f.do("GET", "/v1/tables/logs/aggregate?"+params.Encode(), f.acme, nil)
		require.Equal(t, http.StatusOK, res.status, "%s", res.body)
		buckets := res.json(t)["buckets"].([]any)
		require.Len(t, buckets, 1)
		b := buckets[0].(map[string]any)
		require.Equal(t, 15.0, b["events"])
		hottest := 0
		for i := 0; i < 60; i += 4 {
			hottest = max(hottest, 20+i%15)
		}
		require.Equal(t, map[string]any{"count": 15.0, "max": float64(hottest)}, b["values"].(map[string]any)["temp"])
	})
	for name, tc := range map[string]struct{ path, filter, says string }{
		"events: bad syntax":         {"events", `level = `, "offset 8"},
		"events: unknown operator":   {"events", `level ~ "x"`, "offset 6"},
		"aggregate: unclosed":        {"aggregate", `(level = "x"`, "offset 12"},
		"aggregate: order on bool":   {"aggregate", `ok > true`, "offset"},
		"events: series is no field": {"events", `series = "dev-1"`, "select series with the series parameter"},
		"aggregate: series":          {"aggregate", `level = "x" or series = "dev-1"`, "series=car-17"},
	} {
		t.Run(name, func(t *testing.T) {
			params := rangeParams(start, start.Add(time.Hour))
			if tc.path == "aggregate" {
				params.Set("bucket", "1h")
				params.Set("fields", "temp")
				params.Set("fn", "count")
			}
			params.Set("filter", tc.filter)
			res := f.do("GET", "/v1/tables/logs/"+tc.path+"?"+params.Encode(), f.acme, nil)
			require.Equal(t, http.StatusBadRequest, res.status, "%s", res.body)
			require.Contains(t, res.json(t)["error"], "filter")
			require.Contains(t, res.json(t)["error"], tc.says)
		})
	}
	t.Run("in, between, contains, size", func(t *testing.T) {
		for expr, want := range map[string]int{
			`level in ("ERROR", "WARN")`:        15,
			`i between 10 and 19`:               10,
			`contains(level, "RR")`:             15,
			`size(level) = 4`:                   45,
			`not (temp in (20, 21)) and i < 30`: 26,
		} {
			got := f.all(f.acme, "logs", with(with(wide, "limit", "1000"), "filter", expr))
			require.Len(t, got, want, expr)
		}
	})
	// Nothing was harmed: the unfiltered read still sees every event.
	require.Len(t, f.all(f.acme, "logs", with(wide, "limit", "1000")), 60)
}

// TestFilterLimits walks the filter's limits on the backend: every filter
// within them is answered, every one past them is a 400 naming the limit,
// never a 5xx that no retry cures (DynamoDB refuses an expression of more
// than 300 operators or 4 KB, and the engine adds 2 operators of its own).
func TestFilterLimits(t *testing.T) {
	f := newFixture(t, server.Options{})
	body := fmt.Sprintf(`{"time": %q, "series": "s", "fields": {"a": 7, "f3": "xy"}}`, now.Add(-time.Hour).Format(time.RFC3339))
	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "logs", body).status)
	terms := func(n int, term func(i int) string) string {
		var parts []string
		for i := range n {
			parts = append(parts, term(i))
		}
		return strings.Join(parts, " or ")
	}
	eq := func(i int) string { return fmt.Sprintf("a = %d", i) }
	prefix := func(i int) string { return fmt.Sprintf(`begins_with(f%d, "x")`, i) }
	within := "a = \"" + strings.Repeat("x", 4096-len(`a = ""`)) + "\""
	for _, tc := range []struct {
		name, filter string
		says         string // "" when the filter is within the limits
	}{
		{"298 operators", "not (" + terms(149, eq) + ")", ""},
		{"299 operators", terms(150, eq), "299 operators, over 298"},
		{"31 levels", strings.Repeat("not ", 30) + "not a = 7", ""},
		{"32 levels", strings.Repeat("not ", 32) + "a = 7", "nested more than 32 deep, the depth limit"},
		{"4,096 bytes", within, ""},
		{"4,097 bytes", within + " ", "4097 bytes, over the 4096-byte length limit"},
		{"120 begins_with", terms(120, prefix), ""},
		{"149 begins_with", terms(149, prefix), "as a DynamoDB FilterExpression, over DynamoDB's 4096"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.HasSuffix(tc.name, "levels") && backend.Name != "pebble" {
				dynamotest.SkipUnless(t, dynamotest.DeepExpressions)
			}
			for _, path := range []string{"events", "aggregate"} {
				params := with(wide, "filter", tc.filter)
				if path == "aggregate" {
					params.Set("bucket", "1h")
					params.Set("fn", "count")
				}
				res := f.do("GET", "/v1/tables/logs/"+path+"?"+params.Encode(), f.acme, nil)
				if tc.says == "" {
					require.Equal(t, http.StatusOK, res.status, "%s: %s", path, res.body)
					continue
				}
				require.Equal(t, http.StatusBadRequest, res.status, "%s: %s", path, res.body)
				require.Contains(t, res.json(t)["error"], tc.says, path)
			}
		})
	}
}
