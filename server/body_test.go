package server_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/tenant"
)

// slowBody opens a connection, sends a write request of acme that
// declares a body of declared bytes, and sends sent bytes of it; the
// connection stays open until the test ends.
func slowBody(t *testing.T, f *fixture, declared, sent int) net.Conn {
	t.Helper()
	return slowBodyOf(t, f, f.acme, declared, sent)
}

// slowBodyOf is slowBody with the API key of any tenant.
func slowBodyOf(t *testing.T, f *fixture, key string, declared, sent int) net.Conn {
	t.Helper()
	u, err := url.Parse(f.url)
	require.NoError(t, err)
	c, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST /v1/tables/t/events HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", u.Host, key, declared)
	_, err = c.Write([]byte("[" + strings.Repeat(" ", sent-1)))
	require.NoError(t, err)
	return c
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// Sixty clients that declare 16 MiB bodies and send a byte do not make
// the server reserve 16 MiB each, and other clients are served meanwhile.
func TestSlowBodiesHoldLittleMemory(t *testing.T) {
	// All sixty are read at once: acme may have that many writes at work.
	f := newFixture(t, server.Options{TenantLimits: tenant.Limits{MaxConcurrentWrites: 100}})
	before := heapInUse()
	for range 60 {
		slowBody(t, f, 16<<20-1, 1)
	}
	// Let the server read what they sent.
	require.Eventually(t, func() bool {
		return f.postJSON(f.acme, "other", `[{"time":"2017-04-10T12:00:00Z","fields":{"v":1}}]`).status == http.StatusOK
	}, 10*time.Second, 10*time.Millisecond, "other clients are served")
	grown := int64(heapInUse()) - int64(before)
	require.Less(t, grown, int64(128<<20), "the server grew by %d MiB", grown>>20)
	require.Len(t, f.all(f.acme, "other", url.Values{"from": {"2017-04-10T00:00:00Z"}, "to": {"2017-04-11T00:00:00Z"}}), 1)
}

// The bytes of bodies in flight never pass the server's budget: a request
// that finds no room in time is answered 503 with Retry-After, one of a
// tenant holding its share 429 with Retry-After, and one whose body does
// not arrive in time 408.
func TestBodyBudgetAndReadTimeout(t *testing.T) {
	f := newFixture(t, server.Options{MaxBodyBytes: 256 << 10, MaxBodyBytesInFlight: 512 << 10, BodyBudgetWait: 50 * time.Millisecond, BodyReadTimeout: 2 * time.Second})
	initech, err := f.tenants.Add(t.Context(), "initech", now)
	require.NoError(t, err)
	// Two clients of two tenants send most of a large body, and stall:
	// their buffers take the budget, each tenant its share.
	stalled := []net.Conn{slowBodyOf(t, f, f.acme, 256<<10-1, 200<<10), slowBodyOf(t, f, f.globex, 256<<10-1, 200<<10)}
	var full response
	require.Eventually(t, func() bool {
		full = f.postJSON(initech, "t2", `[{"time":"2017-04-10T12:00:00Z","fields":{"v":1}}]`)
		return full.status == http.StatusServiceUnavailable
	}, 5*time.Second, 10*time.Millisecond, "a request finds no room")
	require.NotEmpty(t, full.header.Get("Retry-After"))
	require.Contains(t, string(full.body), "request bodies")
	share := f.postJSON(f.acme, "t2", `[{"time":"2017-04-10T12:00:00Z","fields":{"v":1}}]`)
	require.Equal(t, http.StatusTooManyRequests, share.status, "body: %s", share.body)
	require.NotEmpty(t, share.header.Get("Retry-After"))
	require.Contains(t, string(share.body), "its share")

	// The stalled clients time out with 408, and give their room back.
	for _, c := range stalled {
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusRequestTimeout, res.StatusCode)
		res.Body.Close()
	}
	require.Equal(t, http.StatusOK, f.postJSON(f.acme, "t2", `[{"time":"2017-04-10T12:00:00Z","fields":{"v":1}}]`).status)
}
