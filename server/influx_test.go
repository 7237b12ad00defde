package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/tenant"
)

// lp is a line protocol body of two measurements, at precision s.
func lp(t time.Time) string {
	s := t.Unix()
	return fmt.Sprintf("weather,site=north,probe=7 temp=21.5,rain=0i %d\nweather,site=south temp=19 %d\ncpu,host=a usage=0.5 %d\n", s, s+1, s)
}

func TestInfluxWriteV1(t *testing.T) {
	f := newFixture(t, server.Options{})
	at := now.Add(-time.Hour)
	res := f.do("POST", "/write?db=plant&rp=autogen&precision=s", "", []byte(lp(at)), "Authorization", "Token "+f.acme)
	require.Equal(t, http.StatusNoContent, res.status, "body: %s", res.body)
	require.Equal(t, "1.8.10", res.header.Get("X-Influxdb-Version"))

	weather := f.all(f.acme, "weather", wide)
	require.Len(t, weather, 2)
	require.Equal(t, "probe=7,site=north", weather[0].Series)
	require.Equal(t, at.Format(time.RFC3339), weather[0].Time)
	require.Equal(t, map[string]any{"site": "north", "probe": "7", "temp": 21.5, "rain": float64(0)}, weather[0].Fields)
	require.Equal(t, "site=south", weather[1].Series)
	cpu := f.all(f.acme, "cpu", wide)
	require.Len(t, cpu, 1)

	// A retry stores nothing twice.
	res = f.do("POST", "/write?db=plant&precision=s", "", []byte(lp(at)), "Authorization", "Token "+f.acme)
	require.Equal(t, http.StatusNoContent, res.status)
	require.Len(t, f.all(f.acme, "weather", wide), 2)

	// The other tenant sees nothing.
	require.Equal(t, http.StatusNotFound, f.get(f.globex, "weather", wide).status)
}

func TestInfluxWriteV2Gzip(t *testing.T) {
	f := newFixture(t, server.Options{})
	at := now.Add(-time.Hour)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(fmt.Sprintf("m,dev=d1 v=1 %d\n", at.UnixMilli())))
	require.NoError(t, zw.Close())
	res := f.do("POST", "/api/v2/write?org=o&bucket=b&precision=ms", "", gz.Bytes(), "Authorization", "Token "+f.acme, "Content-Encoding", "gzip")
	require.Equal(t, http.StatusNoContent, res.status, "body: %s", res.body)
	ev := f.all(f.acme, "m", wide)
	require.Len(t, ev, 1)
	require.Equal(t, "dev=d1", ev[0].Series)

	// Errors carry InfluxDB 2.x's code and message too.
	res = f.do("POST", "/api/v2/write?bucket=b", "", []byte("m v="), "Authorization", "Token "+f.acme)
	require.Equal(t, http.StatusBadRequest, res.status)
	body := res.json(t)
	require.Equal(t, "invalid", body["code"])
	require.Equal(t, body["error"], body["message"])
	res = f.do("POST", "/api/v2/write?bucket=b", "", []byte("m v=1"), "Authorization", "Token nope")
	require.Equal(t, http.StatusUnauthorized, res.status)
	require.Equal(t, "unauthorized", res.json(t)["code"])
}

func TestInfluxKeys(t *testing.T) {
	f := newFixture(t, server.Options{})
	body := []byte(fmt.Sprintf("m v=1 %d", now.Add(-time.Hour).UnixNano()))
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("anyone:"+f.acme))
	_, readOnly, err := f.tenants.AddKey(context.Background(), "acme", tenant.ScopeRead, now)
	require.NoError(t, err)
	for name, c := range map[string]struct {
		path    string
		headers []string
		status  int
	}{
		"token":          {"/write?db=x", []string{"Authorization", "Token " + f.acme}, http.StatusNoContent},
		"bearer":         {"/write?db=x", []string{"Authorization", "Bearer " + f.acme}, http.StatusNoContent},
		"basic":          {"/write?db=x", []string{"Authorization", basic}, http.StatusNoContent},
		"p=":             {"/write?db=x&u=anyone&p=" + url.QueryEscape(f.acme), nil, http.StatusNoContent},
		"p= and header":  {"/write?p=" + url.QueryEscape(f.acme), []string{"Authorization", "Token " + f.acme}, http.StatusNoContent},
		"none":           {"/write?db=x", nil, http.StatusUnauthorized},
		"unknown":        {"/write?db=x", []string{"Authorization", "Token nope"}, http.StatusUnauthorized},
		"other scheme":   {"/write?db=x", []string{"Authorization", "Digest " + f.acme}, http.StatusUnauthorized},
		"two keys":       {"/write?p=" + url.QueryEscape(f.globex), []string{"Authorization", "Token " + f.acme}, http.StatusBadRequest},
		"v2 token":       {"/api/v2/write?bucket=b", []string{"Authorization", "Token " + f.acme}, http.StatusNoContent},
		"v2 has no db":   {"/api/v2/write?db=b", []string{"Authorization", "Token " + f.acme}, http.StatusBadRequest},
		"bad precision":  {"/write?precision=d", []string{"Authorization", "Token " + f.acme}, http.StatusBadRequest},
		"read-only key":  {"/write?db=x", []string{"Authorization", "Token " + readOnly}, http.StatusForbidden},
		"repeated param": {"/write?db=a&db=b", []string{"Authorization", "Token " + f.acme}, http.StatusBadRequest},
	} {
		res := f.do("POST", c.path, "", body, c.headers...)
		require.Equal(t, c.status, res.status, "%s: %s", name, res.body)
	}
}

// A body with any bad line is refused whole, naming each bad line, and
// writes nothing to any table.
func TestInfluxBadLinesWriteNothing(t *testing.T) {
	f := newFixture(t, server.Options{})
	s := now.Add(-time.Hour).Unix()
	body := fmt.Sprintf("good v=1 %d\nalso_good v=2 %d\nbad v=\nbad,x=1 x=2 %d\n", s, s, s)
	res := f.do("POST", "/write?precision=s", "", []byte(body), "Authorization", "Token "+f.acme)
	require.Equal(t, http.StatusBadRequest, res.status)
	out := res.json(t)
	require.Contains(t, out["error"], "line 3: unable to parse 'bad v='")
	lines := out["lines"].([]any)
	require.Len(t, lines, 2)
	require.Equal(t, float64(3), lines[0].(map[string]any)["line"])
	require.Equal(t, float64(4), lines[1].(map[string]any)["line"])
	require.Contains(t, lines[1].(map[string]any)["reason"], `"x" is both a tag and a field`)
	require.Equal(t, http.StatusNotFound, f.get(f.acme, "good", wide).status)

	// A measurement that is no table name, and an event the engine cannot
	// store (past nothing here: a name), are refused by line as well,
	// before the good table is written.
	body = fmt.Sprintf("good v=1 %d\nno/slash v=1 %d\n", s, s)
	res = f.do("POST", "/write?precision=s", "", []byte(body), "Authorization", "Token "+f.acme)
	require.Equal(t, http.StatusBadRequest, res.status, "body: %s", res.body)
	require.Contains(t, string(res.body), `line 2: measurement \"no/slash\" is not a table name`)
	require.Equal(t, http.StatusNotFound, f.get(f.acme, "good", wide).status)
}

func TestInfluxPing(t *testing.T) {
	f := newFixture(t, server.Options{})
	res := f.do("GET", "/ping", "", nil)
	require.Equal(t, http.StatusNoContent, res.status)
	require.Equal(t, "1.8.10", res.header.Get("X-Influxdb-Version"))
	res = f.do("HEAD", "/ping", "", nil)
	require.Equal(t, http.StatusNoContent, res.status)
	res = f.do("GET", "/ping?verbose=true", "", nil)
	require.Equal(t, http.StatusOK, res.status)
	require.Equal(t, "1.8.10", res.json(t)["version"])
	res = f.do("GET", "/write", "", nil)
	require.Equal(t, http.StatusMethodNotAllowed, res.status)
}

// TestInfluxWriteSecondsWithoutPrecision: Unix seconds sent as line
// protocol's default nanoseconds are a time in 1970, past the backfill
// horizon; the refusal says to give the precision, as the JSON API's
// does.
func TestInfluxWriteSecondsWithoutPrecision(t *testing.T) {
	f := newFixture(t, server.Options{})
	res := f.do("POST", "/write?db=plant", "", []byte(lp(now.Add(-time.Hour))), "Authorization", "Token "+f.acme)
	require.Equal(t, http.StatusBadRequest, res.status, "body: %s", res.body)
	require.Contains(t, string(res.body), "older than the backfill horizon of 365d")
	require.Contains(t, string(res.body), "say the precision, precision=s, ms or us")

	// An old time of this century gets no such hint.
	old := now.AddDate(-3, 0, 0)
	res = f.do("POST", "/write?db=plant&precision=s", "", []byte(lp(old)), "Authorization", "Token "+f.acme)
	require.Equal(t, http.StatusBadRequest, res.status, "body: %s", res.body)
	require.Contains(t, string(res.body), "older than the backfill horizon of 365d")
	require.NotContains(t, string(res.body), "precision=s")
}
