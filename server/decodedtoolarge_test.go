package server_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/server"
)

// A body whose numbers take 25 times their text decoded (1e125 is 126
// digits) is 413, naming the limit, in every format, and nothing of it
// is written; numbers with exponents in an ordinary body are written
// and read back exactly, in plain decimal notation.
func TestNumbersThatExpandPastTheBoundAre413(t *testing.T) {
	f := newFixture(t, server.Options{})
	ms := now.Add(-time.Minute).UnixMilli()
	event := `{"series":"s","time":` + strconv.FormatInt(ms, 10) + `,"fields":{"v":[` + strings.Repeat("1e125,", 150) + `1e125]}}`
	var fields []string
	for i := range 20 {
		fields = append(fields, string(rune('a'+i))+"=1e125")
	}
	line := "m " + strings.Join(fields, ",") + " " + strconv.FormatInt(now.Add(-time.Minute).UnixNano(), 10) + "\n"
	for _, c := range []struct {
		name, path, ct, body string
	}{
		{"ndjson", "/v1/tables/expands/events", "application/x-ndjson", strings.Repeat(event+"\n", 300)},
		{"json", "/v1/tables/expands/events", "application/json", "[" + strings.Repeat(event+",", 299) + event + "]"},
		{"line", "/write?db=expands&precision=ns", "text/plain", strings.Repeat(line, 1000)},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := f.do("POST", c.path, f.acme, []byte(c.body), "Content-Type", c.ct)
			require.Equal(t, http.StatusRequestEntityTooLarge, res.status, "body: %.300s", res.body)
			require.Contains(t, string(res.body), "too large decoded")
			require.Contains(t, string(res.body), "1e125")
			require.Contains(t, string(res.body), "twice the body")
		})
	}
	require.Equal(t, http.StatusNotFound, f.get(f.acme, "expands", wide).status, "nothing was written")

	res := f.postNDJSON(f.acme, "exact", `{"series":"s","time":`+strconv.FormatInt(ms, 10)+`,"fields":{"a":1e20,"b":1.5e-7,"c":[1e125]}}`)
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	got := f.get(f.acme, "exact", wide)
	require.Equal(t, http.StatusOK, got.status, "body: %s", got.body)
	require.Contains(t, string(got.body), `"a":100000000000000000000`)
	require.Contains(t, string(got.body), `"b":0.00000015`)
	require.Contains(t, string(got.body), `"c":[1`+strings.Repeat("0", 125)+`]`)
}
