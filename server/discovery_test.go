package server_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/server"
)

func TestDiscovery(t *testing.T) {
	f := newFixture(t, server.Options{})
	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "cars", ndjson(now.Add(-3*time.Hour), "car-1", 2)+ndjson(now.Add(-8*24*time.Hour), "car-2", 1)).status)
	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "trucks", ndjson(now.Add(-time.Hour), "t-1", 1)+ndjson(now.Add(-time.Hour), "bus-1", 1)).status)
	require.Equal(t, http.StatusOK, f.postNDJSON(f.globex, "ships", ndjson(now.Add(-time.Hour), "s-1", 1)).status)

	res := f.do("GET", "/v1/tables", f.acme, nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	require.JSONEq(t, `{"tables": [
		{"name": "cars", "family": "events", "created": "2017-06-15T09:00:00Z", "first": "2017-06-07T09:00:00Z", "last": "2017-06-15T06:01:00Z"},
		{"name": "trucks", "family": "events", "created": "2017-06-15T09:00:00Z", "first": "2017-06-15T08:00:00Z", "last": "2017-06-15T08:00:00Z"}
	]}`, string(res.body))
	res = f.do("GET", "/v1/tables", f.globex, nil)
	require.Contains(t, string(res.body), "ships")
	require.NotContains(t, string(res.body), "cars")
	require.Equal(t, http.StatusBadRequest, f.do("GET", "/v1/tables?limit=1", f.acme, nil).status)

	series := func(table string, params url.Values) (int, []string, string) {
		t.Helper()
		res := f.do("GET", "/v1/tables/"+table+"/series?"+params.Encode(), f.acme, nil)
		if res.status != http.StatusOK {
			return res.status, nil, ""
		}
		p := decode[struct {
			Series     []string
			NextCursor string `json:"next_cursor"`
		}](t, res)
		require.NotNil(t, p.Series)
		return res.status, p.Series, p.NextCursor
	}
	_, got, next := series("cars", url.Values{"limit": {"1"}})
	require.Equal(t, []string{"car-1"}, got)
	require.NotEmpty(t, next)
	_, got, next = series("cars", url.Values{"limit": {"1"}, "cursor": {next}})
	require.Equal(t, []string{"car-2"}, got, "from the week before's table too")
	require.Empty(t, next)
	_, got, _ = series("trucks", url.Values{"prefix": {"bus"}})
	require.Equal(t, []string{"bus-1"}, got)

	for _, bad := range []url.Values{{"limit": {"0"}}, {"limit": {"x"}}, {"cursor": {"!!"}}, {"page": {"2"}}} {
		status, _, _ := series("cars", bad)
		require.Equal(t, http.StatusBadRequest, status, "%v", bad)
	}
	status, _, _ := series("ships", nil)
	require.Equal(t, http.StatusNotFound, status, "another tenant's table")
}

func TestCORS(t *testing.T) {
	_, err := server.New(nil, server.Options{CORSOrigins: []string{"console.example"}})
	require.Error(t, err)

	f := newFixture(t, server.Options{CORSOrigins: []string{"https://console.example"}})
	res := f.do("GET", "/v1/tables", f.acme, nil, "Origin", "https://console.example")
	require.Equal(t, http.StatusOK, res.status)
	require.Equal(t, "https://console.example", res.header.Get("Access-Control-Allow-Origin"))
	require.Contains(t, res.header.Values("Vary"), "Origin")

	res = f.do("GET", "/v1/tables", f.acme, nil, "Origin", "https://evil.example")
	require.Equal(t, http.StatusOK, res.status, "the answer is the same; the browser withholds it")
	require.Empty(t, res.header.Get("Access-Control-Allow-Origin"))

	res = f.do("OPTIONS", "/v1/tables/cars/events", "", nil, "Origin", "https://console.example", "Access-Control-Request-Method", "POST")
	require.Equal(t, http.StatusNoContent, res.status)
	require.Equal(t, "https://console.example", res.header.Get("Access-Control-Allow-Origin"))
	require.Contains(t, res.header.Get("Access-Control-Allow-Methods"), "POST")
	require.Contains(t, res.header.Get("Access-Control-Allow-Headers"), "Authorization")

	res = f.do("OPTIONS", "/v1/tables/cars/events", "", nil, "Origin", "https://evil.example", "Access-Control-Request-Method", "POST")
	require.Equal(t, http.StatusForbidden, res.status)
	require.Empty(t, res.header.Get("Access-Control-Allow-Origin"))

	// Without origins configured, no CORS at all.
	f = newFixture(t, server.Options{})
	res = f.do("GET", "/v1/tables", f.acme, nil, "Origin", "https://console.example")
	require.Empty(t, res.header.Get("Access-Control-Allow-Origin"))
}
