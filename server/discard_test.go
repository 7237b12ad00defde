package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/internal/clients"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/tenant"
)

// pythonWholeBodies sends requests requests with Python's http.client on
// one connection, each a body of size bytes sent whole before the answer
// is read, as requests and InfluxDB's Python client do, and prints each
// answer's status, Retry-After and error, or the exception the client
// met instead (a broken pipe, a reset).
const pythonWholeBodies = `
import http.client, json, sys
host, port, key, path, size, requests = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
line = b'{"time":"2017-06-15T08:00:00Z","fields":{"v":1}}\n'
body = line * (size // len(line))
out = []
c = http.client.HTTPConnection(host, port, timeout=60)
for _ in range(requests):
    try:
        c.request("POST", path, body=body, headers={"Authorization": "Bearer " + key, "Content-Type": "application/x-ndjson"})
        r = c.getresponse()
        text = r.read().decode()
        out.append({"status": r.status, "retry_after": r.getheader("Retry-After"), "error": json.loads(text).get("error", "")})
    except Exception as e:
        out.append({"exception": "%s: %s" % (type(e).__name__, e)})
        c.close()
        c = http.client.HTTPConnection(host, port, timeout=60)
print(json.dumps(out))
`

// holdTheOneTurn stalls an upload of acme's, which holds its one turn
// among its concurrent writes (tenant.Limits.MaxConcurrentWrites of 1),
// and waits until it does.
func holdTheOneTurn(t *testing.T, f *fixture) {
	t.Helper()
	slowBodyOf(t, f, f.acme, 1000, 10)
	require.Eventually(t, func() bool {
		return f.postNDJSON(f.acme, "t", ndjson(now.Add(-time.Hour), "a", 1)).status == http.StatusTooManyRequests
	}, 10*time.Second, 10*time.Millisecond, "the upload holds acme's turn")
}

// answer is what pythonWholeBodies prints of one request.
type answer struct {
	Status     int    `json:"status"`
	RetryAfter string `json:"retry_after"`
	Error      string `json:"error"`
	Exception  string `json:"exception"`
}

// runWholeBodies runs pythonWholeBodies against f as tenant key.
func runWholeBodies(t *testing.T, f *fixture, key string, size, requests int) []answer {
	t.Helper()
	python := clients.Python(t, "http.client")
	u, err := url.Parse(f.url)
	require.NoError(t, err)
	out, err := exec.Command(python, "-c", pythonWholeBodies, u.Hostname(), u.Port(), key, "/v1/tables/t/events", fmt.Sprint(size), fmt.Sprint(requests)).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var answers []answer
	require.NoError(t, json.Unmarshal(out, &answers), "%s", out)
	require.Len(t, answers, requests)
	return answers
}

// A client that sends its whole body before it reads the answer
// (Python's http.client) reads the 429 or 503 of a write refused before
// its body was read, with its Retry-After, rather than a broken pipe:
// the server reads the refused body and throws it away, and the
// connection serves the next request.
func TestRefusedBodiesReachClientsThatSendThemWhole(t *testing.T) {
	const size, requests = 6 << 20, 4
	t.Run("429 max_concurrent_writes", func(t *testing.T) {
		f := newFixture(t, server.Options{TenantLimits: tenant.Limits{MaxConcurrentWrites: 1}, BodyBudgetWait: 50 * time.Millisecond})
		holdTheOneTurn(t, f)
		for i, a := range runWholeBodies(t, f, f.acme, size, requests) {
			require.Empty(t, a.Exception, "request %d", i)
			require.Equal(t, http.StatusTooManyRequests, a.Status, "request %d: %s", i, a.Error)
			require.Equal(t, "1", a.RetryAfter, "request %d", i)
			require.Contains(t, a.Error, "max_concurrent_writes")
			require.NotContains(t, a.Error, "retry in 0s")
		}
	})
	t.Run("503 body budget", func(t *testing.T) {
		f := newFixture(t, server.Options{MaxBodyBytes: 8 << 20, MaxBodyBytesInFlight: 8<<20 + 64<<10, TenantShare: 1, BodyBudgetWait: 50 * time.Millisecond})
		// Another tenant's upload stalls with the whole budget.
		slowBodyOf(t, f, f.globex, 8<<20, 5<<20)
		require.Eventually(t, func() bool {
			return f.postJSON(f.acme, "t", "["+strings.Repeat(" ", 100<<10)+"]").status == http.StatusServiceUnavailable
		}, 10*time.Second, 10*time.Millisecond, "the budget is full")
		for i, a := range runWholeBodies(t, f, f.acme, size, requests) {
			require.Empty(t, a.Exception, "request %d", i)
			require.Equal(t, http.StatusServiceUnavailable, a.Status, "request %d: %s", i, a.Error)
			require.Equal(t, "1", a.RetryAfter, "request %d", i)
			require.Contains(t, a.Error, "max_body_bytes_in_flight")
		}
	})
}

// InfluxDB's Python client (requests underneath), writing a batch of
// points refused for its tenant's concurrent writes, gets InfluxDB's
// client error with the 429, not a connection error.
func TestInfluxPythonClientReadsARefusal(t *testing.T) {
	python := clients.Python(t, "influxdb")
	f := newFixture(t, server.Options{TenantLimits: tenant.Limits{MaxConcurrentWrites: 1}, BodyBudgetWait: 50 * time.Millisecond})
	holdTheOneTurn(t, f)
	u, err := url.Parse(f.url)
	require.NoError(t, err)
	script := `
import json, sys
from influxdb import InfluxDBClient
from influxdb.exceptions import InfluxDBClientError
host, port, key, at = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
c = InfluxDBClient(host=host, port=port, username="acme", password=key, database="plant", retries=1)
points = [{"measurement": "cpu", "tags": {"host": "web %d" % (i % 8)}, "time": at + i,
           "fields": {"usage": 0.25 * i, "note": "x" * 20000}} for i in range(300)]
out = []
for _ in range(4):
    try:
        c.write_points(points, time_precision="s", batch_size=300)
        out.append({"written": True})
    except InfluxDBClientError as e:
        out.append({"code": e.code, "content": e.content if isinstance(e.content, str) else e.content.decode()})
    except Exception as e:
        out.append({"exception": "%s: %s" % (type(e).__name__, e)})
print(json.dumps(out))
`
	out, err := exec.Command(python, "-c", script, u.Hostname(), u.Port(), f.acme, fmt.Sprint(now.Add(-2*time.Hour).Unix())).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var results []map[string]any
	require.NoError(t, json.Unmarshal(out, &results), "%s", out)
	for i, r := range results {
		require.Nil(t, r["exception"], "write %d", i)
		require.Equal(t, float64(http.StatusTooManyRequests), r["code"], "write %d: %v", i, r)
		require.Contains(t, r["content"], "max_concurrent_writes")
	}
}

// A client that asks for 100 Continue before it sends its body, refused
// before its body is read (its tenant's concurrent writes, a full body
// budget), gets the answer without being asked for the body: nothing of
// it is sent.
func TestARefusalAnswersExpectContinueBeforeTheBody(t *testing.T) {
	expect := func(t *testing.T, f *fixture, want int) {
		t.Helper()
		body := &repeatReader{line: []byte(`{"time":"2017-06-15T08:00:00Z","fields":{"v":1}}` + "\n"), n: 4 << 20}
		req, err := http.NewRequest("POST", f.url+"/v1/tables/t/events", body)
		require.NoError(t, err)
		req.ContentLength = 4 << 20
		req.Header.Set("Authorization", "Bearer "+f.acme)
		req.Header.Set("Content-Type", "application/x-ndjson")
		req.Header.Set("Expect", "100-continue")
		client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Minute}}
		res, err := client.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, want, res.StatusCode)
		require.Equal(t, "1", res.Header.Get("Retry-After"))
		require.Equal(t, 4<<20, body.n, "no byte of the body was asked for")
	}
	t.Run("429 max_concurrent_writes", func(t *testing.T) {
		f := newFixture(t, server.Options{TenantLimits: tenant.Limits{MaxConcurrentWrites: 1}, BodyBudgetWait: 50 * time.Millisecond})
		holdTheOneTurn(t, f)
		expect(t, f, http.StatusTooManyRequests)
	})
	t.Run("503 body budget", func(t *testing.T) {
		f := newFixture(t, server.Options{MaxBodyBytes: 8 << 20, MaxBodyBytesInFlight: 8<<20 + 64<<10, TenantShare: 1, BodyBudgetWait: 50 * time.Millisecond})
		// Another tenant's uploads stall with all of the budget but a
		// few kilobytes: the first step of a body does not fit.
		slowBodyOf(t, f, f.globex, 8<<20, 5<<20)
		slowBodyOf(t, f, f.globex, 16<<10, 10)
		require.Eventually(t, func() bool {
			return f.postJSON(f.acme, "t", "["+strings.Repeat(" ", 100<<10)+"]").status == http.StatusServiceUnavailable
		}, 10*time.Second, 10*time.Millisecond, "the budget is full")
		expect(t, f, http.StatusServiceUnavailable)
	})
}

// repeatReader reads n bytes of one line again and again, allocating
// nothing as it goes.
type repeatReader struct {
	line []byte
	n, i int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && r.n > 0 {
		c := copy(p[k:min(len(p), k+r.n)], r.line[r.i:])
		r.i = (r.i + c) % len(r.line)
		k += c
		r.n -= c
	}
	return k, nil
}

// A refused body is thrown away, not kept: what the server allocates to
// discard one of 16 MiB is about what it allocates for one of 1 MiB.
func TestARefusedBodyIsDiscardedInBoundedMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates as it goes")
	}
	f := newFixture(t, server.Options{TenantLimits: tenant.Limits{MaxConcurrentWrites: 1}, BodyBudgetWait: 50 * time.Millisecond})
	holdTheOneTurn(t, f)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	allocated := func(size int) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		req, err := http.NewRequest("POST", f.url+"/v1/tables/t/events", &repeatReader{line: []byte(`{"time":"2017-06-15T08:00:00Z","fields":{"v":1}}` + "\n"), n: size})
		require.NoError(t, err)
		req.ContentLength = int64(size)
		req.Header.Set("Authorization", "Bearer "+f.acme)
		req.Header.Set("Content-Type", "application/x-ndjson")
		res, err := client.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		require.Equal(t, http.StatusTooManyRequests, res.StatusCode)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	allocated(1 << 20) // the connection and the pools, once
	small, large := allocated(1<<20), allocated(16<<20-1)
	t.Logf("allocated to refuse a body of 1 MiB: %d KiB; of 16 MiB: %d KiB", small>>10, large>>10)
	require.Less(t, large, small+4<<20, "a 16 MiB body is not kept")
}
