package server_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/server"
)

func TestWriteFormats(t *testing.T) {
	f := newFixture(t, server.Options{})
	const array = `[{"time": "2017-06-15T08:00:00.123456Z", "series": "car-17", "fields": {"speed": 88.5, "gear": "D"}},
		{"time": 1497513600123, "series": "car-18", "id": "mine", "fields": {"speed": 1e1}}]`
	const lines = "{\"time\": \"2017-06-15T08:30:00Z\", \"series\": \"car-17\"}\n\n{\"time\": \"2017-06-15T08:45:00+02:00\", \"fields\": {\"ok\": true}}"

	tests := []struct {
		name, contentType, body string
		written                 float64
	}{
		{"json array", "application/json", array, 2},
		{"json with charset", "application/json; charset=utf-8", `[]`, 0},
		{"ndjson", "application/x-ndjson", lines, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.do("POST", "/v1/tables/a_table/events", f.acme, []byte(tt.body), "Content-Type", tt.contentType)
			require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
			require.Equal(t, "application/json", res.header.Get("Content-Type"))
			require.Equal(t, map[string]any{"written": tt.written}, res.json(t))
		})
	}
	t.Run("no content type is a JSON array", func(t *testing.T) {
		res := f.do("POST", "/v1/tables/a_table/events", f.acme, []byte(`[{"time": "2017-06-15T08:50:00Z", "series": "car-19"}]`))
		require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	})
	t.Run("gzip", func(t *testing.T) {
		var zb bytes.Buffer
		zw := gzip.NewWriter(&zb)
		_, err := io.WriteString(zw, `{"time": "2017-06-15T08:55:00Z", "series": "car-20"}`)
		require.NoError(t, err)
		require.NoError(t, zw.Close())
		res := f.do("POST", "/v1/tables/a_table/events", f.acme, zb.Bytes(), "Content-Type", "application/x-ndjson", "Content-Encoding", "gzip")
		require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	})

	got := f.all(f.acme, "a_table", wide)
	require.Equal(t, []outEvent{
		{Time: "2017-06-15T06:45:00Z", ID: got[0].ID, Fields: map[string]any{"ok": true}},
		{Time: "2017-06-15T08:00:00.123Z", Series: "car-18", ID: "mine", Fields: map[string]any{"speed": 10.0}},
		{Time: "2017-06-15T08:00:00.123456Z", Series: "car-17", ID: got[2].ID, Fields: map[string]any{"speed": 88.5, "gear": "D"}},
		{Time: "2017-06-15T08:30:00Z", Series: "car-17", ID: got[3].ID, Fields: map[string]any{}},
		{Time: "2017-06-15T08:50:00Z", Series: "car-19", ID: got[4].ID, Fields: map[string]any{}},
		{Time: "2017-06-15T08:55:00Z", Series: "car-20", ID: got[5].ID, Fields: map[string]any{}},
	}, got)
	for _, e := range got {
		require.NotEmpty(t, e.ID)
	}
}

func TestRetryStoresOnce(t *testing.T) {
	f := newFixture(t, server.Options{})
	body := ndjson(now.Add(-time.Hour), "car-17", 20) + ndjson(now.Add(-time.Hour), "car-18", 20)
	for range 2 {
		res := f.postNDJSON(f.acme, "a_table", body)
		require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
		require.Equal(t, map[string]any{"written": 40.0}, res.json(t))
	}
	// The same events as a JSON array are the same events.
	var array []string
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		array = append(array, line)
	}
	res := f.postJSON(f.acme, "a_table", "["+strings.Join(array, ",")+"]")
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)

	got := f.all(f.acme, "a_table", wide)
	require.Len(t, got, 40)
	ids := map[string]bool{}
	for _, e := range got {
		require.False(t, ids[e.ID], "event %s returned twice", e.ID)
		ids[e.ID] = true
	}
}

func TestBadEventsWriteNothing(t *testing.T) {
	f := newFixture(t, server.Options{})
	body := strings.Join([]string{
		`{"time": "2017-06-15T08:00:00Z", "fields": {"a": 1}}`,
		`{"time": "yesterday", "fields": {"a": 2}}`,
		`{"time": "2017-06-15T08:02:00Z", "fields": {"a": 3}}`,
		`{"tim": "2017-06-15T08:03:00Z"}`,
		`{"time": "2017-06-15T08:04:00Z", "fields": {"pk": 5}}`,
		`not json`,
	}, "\n")
	res := f.postNDJSON(f.acme, "a_table", body)
	require.Equal(t, http.StatusBadRequest, res.status, "body: %s", res.body)
	v := res.json(t)
	require.Contains(t, v["error"], "4 bad events")
	problems := v["problems"].([]any)
	var indexes []float64
	for _, p := range problems {
		p := p.(map[string]any)
		indexes = append(indexes, p["index"].(float64))
		require.NotEmpty(t, p["reason"])
	}
	require.Equal(t, []float64{1, 3, 4, 5}, indexes)
	require.Contains(t, problems[0].(map[string]any)["reason"], "time")

	// Nothing was written: the table does not even exist.
	res = f.get(f.acme, "a_table", wide)
	require.Equal(t, http.StatusNotFound, res.status, "body: %s", res.body)

	// A table with events keeps exactly those after a refused request.
	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "a_table", ndjson(now.Add(-time.Hour), "car-17", 3)).status)
	res = f.postJSON(f.acme, "a_table", `[{"time": "2017-06-15T08:10:00Z"}, {"time": "2017-06-15T08:11:00Z", "fields": {"x": "\u0000ok", "": 1}}]`)
	require.Equal(t, http.StatusBadRequest, res.status, "body: %s", res.body)
	require.Len(t, res.json(t)["problems"], 1)
	require.Len(t, f.all(f.acme, "a_table", wide), 3)

	// A body that is not JSON at all is one error, without problems.
	res = f.postJSON(f.acme, "a_table", `{"time": "2017-06-15T08:10:00Z"}`)
	require.Equal(t, http.StatusBadRequest, res.status, "body: %s", res.body)
	require.NotContains(t, res.json(t), "problems")
	require.Len(t, f.all(f.acme, "a_table", wide), 3)
}

func TestAuthentication(t *testing.T) {
	f := newFixture(t, server.Options{})
	tests := []struct {
		name, header, challenge string
	}{
		{"missing", "", `Bearer realm="timetable"`},
		{"other scheme", "Basic YWxhZGRpbjpvcGVuc2VzYW1l", `Bearer realm="timetable"`},
		{"empty token", "Bearer ", `Bearer realm="timetable"`},
		{"unknown key", "Bearer tt_notakeyatall", `Bearer realm="timetable", error="invalid_token"`},
		{"a tenant's key with a letter changed", "Bearer " + f.acme[:len(f.acme)-1] + "x", `Bearer realm="timetable", error="invalid_token"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, method := range []string{"GET", "POST"} {
				var headers []string
				if tt.header != "" {
					headers = []string{"Authorization", tt.header}
				}
				res := f.do(method, "/v1/tables/a_table/events", "", []byte(ndjson(now, "s", 1)), append(headers, "Content-Type", "application/x-ndjson")...)
				require.Equal(t, http.StatusUnauthorized, res.status, "body: %s", res.body)
				require.Equal(t, tt.challenge, res.header.Get("WWW-Authenticate"))
				require.NotEmpty(t, res.json(t)["error"])
			}
		})
	}
	// Nothing reached the store.
	res := f.get(f.acme, "a_table", wide)
	require.Equal(t, http.StatusNotFound, res.status)
	// The scheme is case-insensitive.
	res = f.do("GET", "/v1/tables/a_table/events", "", nil, "Authorization", "bearer "+f.acme)
	require.Equal(t, http.StatusNotFound, res.status, "body: %s", res.body)
}

func TestTenantIsolation(t *testing.T) {
	f := newFixture(t, server.Options{})
	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "a_table", ndjson(now.Add(-time.Hour), "car-17", 5)).status)

	// globex cannot see acme's table...
	res := f.get(f.globex, "a_table", wide)
	require.Equal(t, http.StatusNotFound, res.status, "body: %s", res.body)
	// ...and writing one of the same name shows only its own events.
	require.Equal(t, http.StatusOK, f.postNDJSON(f.globex, "a_table", ndjson(now.Add(-time.Hour), "car-17", 2)).status)
	require.Len(t, f.all(f.globex, "a_table", wide), 2)
	require.Len(t, f.all(f.acme, "a_table", wide), 5)
	// The same event in both tenants is two events.
	first := ndjson(now.Add(-time.Hour), "car-17", 1)
	require.Equal(t, http.StatusOK, f.postNDJSON(f.globex, "a_table", first).status)
	require.Len(t, f.all(f.globex, "a_table", wide), 2)
	require.Len(t, f.all(f.acme, "a_table", wide), 5)
}

func TestQueryErrors(t *testing.T) {
	f := newFixture(t, server.Options{})
	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "a_table", ndjson(now.Add(-time.Hour), "car-17", 5)).status)
	page := f.getPage(f.acme, "a_table", with(wide, "limit", "2"))
	require.NotNil(t, page.NextCursor)
	cursor := *page.NextCursor

	tests := []struct {
		name   string
		table  string
		params url.Values
		status int
		says   string
	}{
		{"unknown table", "b_table", wide, http.StatusNotFound, "not found"},
		{"bad table name", "a%23table", wide, http.StatusBadRequest, "bad name"},
		{"inverted range", "a_table", rangeParams(now, now.Add(-time.Second)), http.StatusBadRequest, "after to"},
		{"bad from", "a_table", with(wide, "from", "yesterday"), http.StatusBadRequest, "from:"},
		{"bad to", "a_table", with(wide, "to", "2017-13-01T00:00:00Z"), http.StatusBadRequest, "to:"},
		{"bad order", "a_table", with(wide, "order", "up"), http.StatusBadRequest, "order:"},
		{"zero limit", "a_table", with(wide, "limit", "0"), http.StatusBadRequest, "limit:"},
		{"limit not a number", "a_table", with(wide, "limit", "ten"), http.StatusBadRequest, "limit:"},
		{"limit over the maximum", "a_table", with(wide, "limit", "1000000"), http.StatusBadRequest, "maximum"},
		{"empty field name", "a_table", with(wide, "fields", "a,,b"), http.StatusBadRequest, "fields:"},
		{"unknown parameter", "a_table", with(wide, "form", "x"), http.StatusBadRequest, `"form"`},
		{"repeated parameter", "a_table", url.Values{"from": {"0", "1"}}, http.StatusBadRequest, "from: given 2 times"},
		{"tampered cursor", "a_table", with(with(wide, "limit", "2"), "cursor", tamper(cursor)), http.StatusBadRequest, "cursor"},
		{"garbage cursor", "a_table", with(wide, "cursor", "!!"), http.StatusBadRequest, "cursor"},
		{"cursor of another query", "a_table", with(with(wide, "series", "car-18"), "cursor", cursor), http.StatusBadRequest, "another query"},
		{"cursor of another range", "a_table", with(with(wide, "from", "2017-01-01T00:00:00Z"), "cursor", cursor), http.StatusBadRequest, "another query"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.get(f.acme, tt.table, tt.params)
			require.Equal(t, tt.status, res.status, "body: %s", res.body)
			require.Equal(t, "application/json", res.header.Get("Content-Type"))
			require.Contains(t, res.json(t)["error"], tt.says)
		})
	}
	// The genuine cursor still works after all that.
	require.Len(t, f.getPage(f.acme, "a_table", with(wide, "cursor", cursor)).Events, 3)
}

// tamper changes one character in the middle of a cursor.
func tamper(c string) string {
	b := []byte(c)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

// with returns a copy of v with name set to value.
func with(v url.Values, name, value string) url.Values {
	out := cloneValues(v)
	out.Set(name, value)
	return out
}

func TestCursorWalk(t *testing.T) {
	f := newFixture(t, server.Options{})
	// Three series over five weeks (five tables), some at the same
	// instant, written in two requests.
	start := now.Add(-5 * 7 * 24 * time.Hour)
	var body strings.Builder
	for i := range 90 {
		series := fmt.Sprintf("car-%d", i%3)
		at := start.Add(time.Duration(i/3) * 28 * time.Hour) // three events an instant
		fmt.Fprintf(&body, `{"time": %q, "series": %q, "fields": {"i": %d}}`+"\n", at.Format(time.RFC3339Nano), series, i)
	}
	lines := strings.SplitAfter(body.String(), "\n")
	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "a_table", strings.Join(lines[:45], "")).status)
	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "a_table", strings.Join(lines[45:], "")).status)

	for _, order := range []string{"asc", "desc"} {
		for _, limit := range []string{"1", "7", "30", "89", "1000"} {
			t.Run(order+"/"+limit, func(t *testing.T) {
				got := f.all(f.acme, "a_table", with(with(wide, "order", order), "limit", limit))
				require.Len(t, got, 90)
				seen := map[float64]bool{}
				for k, e := range got {
					i := e.Fields["i"].(float64)
					require.False(t, seen[i], "event %v returned twice", i)
					seen[i] = true
					if k > 0 {
						if order == "asc" {
							require.LessOrEqual(t, got[k-1].Time, e.Time)
						} else {
							require.GreaterOrEqual(t, got[k-1].Time, e.Time)
						}
					}
				}
			})
		}
	}
	t.Run("one series, projected", func(t *testing.T) {
		got := f.all(f.acme, "a_table", with(with(with(wide, "series", "car-1"), "limit", "4"), "fields", "i,absent"))
		require.Len(t, got, 30)
		for _, e := range got {
			require.Equal(t, "car-1", e.Series)
			require.Equal(t, 1.0, float64(int(e.Fields["i"].(float64))%3))
		}
	})
	t.Run("the last page has no next_cursor key", func(t *testing.T) {
		res := f.get(f.acme, "a_table", with(wide, "limit", "1000"))
		require.Equal(t, http.StatusOK, res.status)
		require.NotContains(t, res.json(t), "next_cursor")
	})
}

func TestDefaultRange(t *testing.T) {
	f := newFixture(t, server.Options{})
	body := ndjson(now.Add(-50*time.Hour), "car-17", 1) + // before the default ranges
		ndjson(now.Add(-23*time.Hour), "car-17", 10) +
		ndjson(now.Add(time.Hour), "car-17", 1) // in the future
	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "a_table", body).status)

	p := f.getPage(f.acme, "a_table", url.Values{"limit": {"4"}})
	require.Len(t, p.Events, 4)
	require.Equal(t, now.Add(-23*time.Hour).Format(time.RFC3339), p.Events[0].Time)
	// The clock moves on while paging: the cursor keeps the first
	// page's range.
	f.clock.Advance(2 * time.Hour)
	rest := f.all(f.acme, "a_table", url.Values{"limit": {"4"}, "cursor": {*p.NextCursor}})
	require.Len(t, rest, 6)

	// to alone: from is a day before it.
	got := f.all(f.acme, "a_table", url.Values{"to": {now.Add(-22*time.Hour - 59*time.Minute).Format(time.RFC3339)}})
	require.Len(t, got, 2)
	// from alone: to is now, which has moved on by two hours.
	got = f.all(f.acme, "a_table", url.Values{"from": {"0"}})
	require.Len(t, got, 12)
	f.clock.Set(now)
	got = f.all(f.acme, "a_table", url.Values{"from": {"0"}})
	require.Len(t, got, 11)
	// Unix milliseconds work as well as RFC 3339.
	got = f.all(f.acme, "a_table", url.Values{"from": {fmt.Sprint(now.Add(-23 * time.Hour).UnixMilli())}, "to": {fmt.Sprint(now.Add(-23*time.Hour + time.Minute).UnixMilli())}})
	require.Len(t, got, 2)

	// Times relative to now. Sent again with the cursor, they give way to
	// the first page's range, though the clock has moved on.
	relative := url.Values{"from": {"now-24h"}, "to": {"now"}, "limit": {"4"}}
	p = f.getPage(f.acme, "a_table", relative)
	require.Len(t, p.Events, 4)
	f.clock.Advance(2 * time.Hour)
	rest = f.all(f.acme, "a_table", with(relative, "cursor", *p.NextCursor))
	require.Len(t, rest, 6)
	f.clock.Set(now)
	require.Len(t, f.all(f.acme, "a_table", url.Values{"from": {"now-50h"}, "to": {"now+1h"}}), 12)
	res := f.get(f.acme, "a_table", url.Values{"from": {"now-1x"}})
	require.Equal(t, http.StatusBadRequest, res.status)
	require.Contains(t, string(res.body), "now-1h")
}

func TestLateData(t *testing.T) {
	f := newFixture(t, server.Options{})
	old := time.Date(2017, 2, 3, 4, 5, 6, 789000000, time.UTC) // four months before now
	res := f.postJSON(f.acme, "a_table", fmt.Sprintf(`[{"time": %q, "series": "car-17", "fields": {"offline": true}}, {"time": %q, "series": "car-17"}]`, old.Format(time.RFC3339Nano), now.Format(time.RFC3339Nano)))
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)

	got := f.all(f.acme, "a_table", rangeParams(old, old))
	require.Len(t, got, 1)
	require.Equal(t, "2017-02-03T04:05:06.789Z", got[0].Time)
	require.Equal(t, map[string]any{"offline": true}, got[0].Fields)

	// It lives in a table of its own week, written in June.
	tables, err := f.db.Tables(t.Context())
	require.NoError(t, err)
	var found bool
	for _, tb := range tables {
		if !tb.PeriodStart.After(old) && tb.PeriodEnd.After(old) {
			require.Equal(t, "2017-06", tb.WriteMonth)
			found = true
		}
	}
	require.True(t, found, "no table for the late event's week: %+v", tables)
}

func TestLimits(t *testing.T) {
	f := newFixture(t, server.Options{MaxBodyBytes: 2000, MaxEvents: 5})
	tests := []struct {
		name    string
		body    []byte
		headers []string
		status  int
		says    string
	}{
		{"body over the limit", []byte(ndjson(now, "s", 60)), nil, http.StatusRequestEntityTooLarge, "2000 bytes (max_body_bytes)"},
		{"body over the limit, without Content-Length", []byte(ndjson(now, "s", 60)), []string{"Transfer-Encoding", "chunked"}, http.StatusRequestEntityTooLarge, "2000 bytes"},
		{"too many events", []byte(ndjson(now, "s", 6)), nil, http.StatusRequestEntityTooLarge, "limit of 5 (max_events)"},
		{"gzip bomb", gzipped(strings.Repeat(" ", 100_000) + ndjson(now, "s", 1)), []string{"Content-Encoding", "gzip"}, http.StatusRequestEntityTooLarge, "2000 bytes"},
		{"broken gzip", []byte("not gzip"), []string{"Content-Encoding", "gzip"}, http.StatusBadRequest, "gzip"},
		{"other encoding", []byte(ndjson(now, "s", 1)), []string{"Content-Encoding", "br"}, http.StatusUnsupportedMediaType, "br"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.do("POST", "/v1/tables/a_table/events", f.acme, tt.body, append(tt.headers, "Content-Type", "application/x-ndjson")...)
			require.Equal(t, tt.status, res.status, "body: %s", res.body)
			require.Contains(t, res.json(t)["error"], tt.says)
		})
	}
	res := f.get(f.acme, "a_table", wide)
	require.Equal(t, http.StatusNotFound, res.status, "nothing was written")
	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "a_table", ndjson(now, "s", 5)).status, "at the limits")
}

func gzipped(s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, _ = io.WriteString(zw, s)
	_ = zw.Close()
	return b.Bytes()
}

func TestRouting(t *testing.T) {
	f := newFixture(t, server.Options{})
	tests := []struct {
		name, method, path string
		headers            []string
		status             int
		allow              string
	}{
		{"healthz", "GET", "/healthz", nil, http.StatusOK, ""},
		{"healthz HEAD", "HEAD", "/healthz", nil, http.StatusOK, ""},
		{"readyz", "GET", "/readyz", nil, http.StatusOK, ""},
		{"readyz HEAD", "HEAD", "/readyz", nil, http.StatusOK, ""},
		{"metrics", "GET", "/metrics", nil, http.StatusOK, ""},
		{"post healthz", "POST", "/healthz", nil, http.StatusMethodNotAllowed, "GET, HEAD"},
		{"post readyz", "POST", "/readyz", nil, http.StatusMethodNotAllowed, "GET, HEAD"},
		{"delete events", "DELETE", "/v1/tables/a_table/events", nil, http.StatusMethodNotAllowed, "GET, HEAD, POST"},
		{"unknown path", "GET", "/v2/tables/a_table/events", nil, http.StatusNotFound, ""},
		{"no table", "GET", "/v1/tables//events", nil, http.StatusBadRequest, ""},
		{"table dot", "GET", "/v1/tables/./events", nil, http.StatusBadRequest, ""},
		{"table dot dot", "POST", "/v1/tables/../events", nil, http.StatusBadRequest, ""},
		{"table dot escaped", "GET", "/v1/tables/%2E%2E/events", nil, http.StatusBadRequest, ""},
		{"unsupported content type", "POST", "/v1/tables/a_table/events", []string{"Content-Type", "text/csv"}, http.StatusUnsupportedMediaType, ""},
		{"form content type", "POST", "/v1/tables/a_table/events", []string{"Content-Type", "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.do(tt.method, tt.path, f.acme, []byte(`[]`), tt.headers...)
			require.Equal(t, tt.status, res.status, "body: %s", res.body)
			require.Equal(t, tt.allow, res.header.Get("Allow"))
			require.NotEmpty(t, res.header.Get("X-Request-Id"))
			if tt.status != http.StatusOK {
				require.Equal(t, "application/json", res.header.Get("Content-Type"))
				require.NotEmpty(t, res.json(t)["error"])
			}
		})
	}
	health := f.do("GET", "/healthz", "", nil)
	require.Equal(t, "application/json", health.header.Get("Content-Type"))
	require.Equal(t, map[string]any{"status": "ok"}, health.json(t))
	ready := f.do("GET", "/readyz", "", nil)
	require.Equal(t, "application/json", ready.header.Get("Content-Type"))
	require.Equal(t, map[string]any{"status": "ready"}, ready.json(t))
}

func TestMetrics(t *testing.T) {
	f := newFixture(t, server.Options{})
	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "a_table", ndjson(now, "s", 3)).status)
	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "a_table", ndjson(now, "s", 3)).status)
	require.Equal(t, http.StatusNotFound, f.get(f.acme, "b_table", wide).status)
	require.Equal(t, http.StatusUnauthorized, f.get("", "a_table", wide).status)
	require.Equal(t, http.StatusOK, f.get(f.acme, "a_table", wide).status)
	agg := f.do("GET", "/v1/tables/a_table/aggregate?bucket=1h&fn=sum&fields=i&"+rangeParams(now.Add(-time.Hour), now.Add(time.Hour)).Encode(), f.acme, nil)
	require.Equal(t, http.StatusOK, agg.status, "%s", agg.body)
	require.Equal(t, http.StatusOK, f.do("HEAD", "/healthz", "", nil).status)
	require.Equal(t, http.StatusOK, f.do("GET", "/healthz", "", nil).status)

	res := f.do("GET", "/metrics", "", nil)
	require.Equal(t, http.StatusOK, res.status)
	text := string(res.body)
	for _, want := range []string{
		`timetable_http_requests_total{code="200",method="post",route="/v1/tables/{table}/events"} 2`,
		`timetable_http_requests_total{code="404",method="get",route="/v1/tables/{table}/events"} 1`,
		`timetable_http_requests_total{code="401",method="get",route="/v1/tables/{table}/events"} 1`,
		`timetable_http_request_duration_seconds_count{code="200",method="post",route="/v1/tables/{table}/events"} 2`,
		`timetable_http_requests_in_flight 0`,
		`timetable_http_request_duration_seconds_count{code="200",method="get",route="/v1/tables/{table}/aggregate"} 1`,
		// A route's series of each method are apart.
		`timetable_http_requests_total{code="200",method="head",route="/healthz"} 1`,
		`timetable_http_requests_total{code="200",method="get",route="/healthz"} 1`,
		// The engine's metrics share the registry; aggregates are
		// timed as queries are.
		`timetable_events_written_total 6`,
		`timetable_query_duration_seconds_count{kind="events",result="ok"} 1`,
		`timetable_query_duration_seconds_count{kind="aggregate",result="ok"} 1`,
		`timetable_write_duration_seconds_count 2`,
	} {
		require.Contains(t, text, want)
	}
}

func TestRequestLog(t *testing.T) {
	f := newFixture(t, server.Options{})
	res := f.postNDJSON(f.acme, "a_table", ndjson(now, "s", 3))
	require.Equal(t, http.StatusOK, res.status)
	id := res.header.Get("X-Request-Id")
	recs := f.logs.records(t, map[string]any{"msg": "http request", "request_id": id})
	require.Len(t, recs, 1)
	rec := recs[0]
	require.Equal(t, "INFO", rec["level"])
	require.Equal(t, "POST", rec["method"])
	require.Equal(t, "/v1/tables/a_table/events", rec["path"])
	require.Equal(t, "POST /v1/tables/{table}/events", rec["route"])
	require.Equal(t, 200.0, rec["status"])
	require.Equal(t, "acme", rec["tenant"])

	res = f.get(f.globex, "a_table", wide)
	recs = f.logs.records(t, map[string]any{"request_id": res.header.Get("X-Request-Id")})
	require.Len(t, recs, 1)
	require.Equal(t, 404.0, recs[0]["status"])
	require.Contains(t, recs[0]["error"], "not found")

	f.do("GET", "/healthz", "", nil)
	require.NotEmpty(t, f.logs.records(t, map[string]any{"path": "/healthz", "level": "DEBUG"}))
}

// TestStoreClosed checks the answer of a server whose store closed under
// it, as it does when the server shuts down: 503, for another server, or
// this one restarted, will take the same request.
func TestStoreClosed(t *testing.T) {
	f := newFixture(t, server.Options{})
	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "a_table", ndjson(now, "s", 3)).status)
	// Authentication is cached; the store under the engine fails from
	// now on.
	require.NoError(t, f.store.Close())

	for _, res := range []response{
		f.postNDJSON(f.acme, "a_table", ndjson(now.Add(-time.Hour), "s", 3)),
		f.get(f.acme, "a_table", wide),
	} {
		require.Equal(t, http.StatusServiceUnavailable, res.status, "body: %s", res.body)
		require.Equal(t, "1", res.header.Get("Retry-After"))
		id := res.header.Get("X-Request-Id")
		v := res.json(t)
		require.Contains(t, v["error"], id, "the answer names the request id")
		require.NotContains(t, v["error"], "tt_events", "the cause stays in the log")
		recs := f.logs.records(t, map[string]any{"request_id": id})
		require.Len(t, recs, 1)
		require.Equal(t, "ERROR", recs[0]["level"])
		require.Contains(t, recs[0]["error"], "closed", "the cause is logged")
	}
}

// Ambiguous requests are refused with a reason, not guessed at.
func TestAmbiguousRequestsAreRefused(t *testing.T) {
	f := newFixture(t, server.Options{})
	now := f.clock.Now()

	// Two Authorization headers.
	req, err := http.NewRequest("GET", f.url+"/v1/tables/t/events?from=0&to=1", nil)
	require.NoError(t, err)
	req.Header.Add("Authorization", "Bearer "+f.acme)
	req.Header.Add("Authorization", "Bearer "+f.globex)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusBadRequest, res.StatusCode)

	// Unix seconds sent as the time, unless the request says so.
	secs := strconv.FormatInt(now.Add(-time.Hour).Unix(), 10)
	bad := f.postNDJSON(f.acme, "t", `{"time":`+secs+`}`)
	require.Equal(t, http.StatusBadRequest, bad.status, "body: %s", bad.body)
	require.Contains(t, string(bad.body), "precision=s")
	ok := f.do("POST", "/v1/tables/t/events?precision=s", f.acme, []byte(`{"time":`+secs+`}`), "Content-Type", "application/x-ndjson")
	require.Equal(t, http.StatusOK, ok.status, "body: %s", ok.body)
	got := f.all(f.acme, "t", url.Values{"from": {"0"}, "to": {now.Format(time.RFC3339)}})
	require.Len(t, got, 1)
	badPrecision := f.do("POST", "/v1/tables/t/events?precision=d", f.acme, []byte(`{"time":`+secs+`}`), "Content-Type", "application/x-ndjson")
	require.Equal(t, http.StatusBadRequest, badPrecision.status)

	// The same client id twice in one request: nothing is written.
	dup := f.postNDJSON(f.acme, "t", `{"time":"2017-04-10T12:00:00Z","id":"x"}`+"\n"+`{"time":"2017-04-10T12:00:01Z","id":"x"}`)
	require.Equal(t, http.StatusBadRequest, dup.status)
	require.Contains(t, string(dup.body), `event 0 of this request has it too`)

	// A range from before 1970.
	before := f.get(f.acme, "t", url.Values{"from": {"1969-12-31T00:00:00Z"}, "to": {"2017-04-10T00:00:00Z"}})
	require.Equal(t, http.StatusBadRequest, before.status)
	require.Contains(t, string(before.body), "before 1970")
}
