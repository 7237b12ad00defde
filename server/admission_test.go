package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/tenant"
)

// minimalEvents returns n events of one short field, one a millisecond
// back from now, as a JSON array, as NDJSON or as line protocol.
func minimalEvents(format string, n int) (body, contentType string) {
	var b strings.Builder
	ms := now.UnixMilli()
	switch format {
	case "json":
		b.WriteByte('[')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"series":"s","time":%d,"fields":{"a":1}}`, ms-int64(i))
		}
		b.WriteByte(']')
		return b.String(), "application/json"
	case "ndjson":
		for i := range n {
			fmt.Fprintf(&b, `{"series":"s","time":%d,"fields":{"a":1}}`+"\n", ms-int64(i))
		}
		return b.String(), "application/x-ndjson"
	default:
		for i := range n {
			fmt.Fprintf(&b, "m a=1 %d\n", (ms-int64(i))*int64(time.Millisecond))
		}
		return b.String(), "text/plain"
	}
}

// With the default limits, a request of the most events a request may
// hold, each as small as an event gets, is written on an idle server in
// every format (the estimate of its decoded events is over a tenant's
// share of the events budget, under the budget, and a tenant alone may
// go past its share); so is a body near the largest size of events as
// large as the benchmark's.
//
// It moves the largest requests through the decoders, which the race
// detector slows tenfold: it skips under it, and scripts/test.sh runs it
// without it (on Pebble, as newFixture's every run did).
func TestLargestRequestsAreAdmittedOnAnIdleServer(t *testing.T) {
	if raceEnabled {
		t.Skip("the largest requests, slowed tenfold by the race detector: scripts/test.sh runs this without it")
	}
	f := newFixture(t, server.Options{})
	ctx := context.Background()
	for _, format := range []string{"json", "ndjson", "line"} {
		t.Run(format, func(t *testing.T) {
			// A tenant each, so that the write rates (bursts of two such
			// requests) are not what is tested.
			key, err := f.tenants.Add(ctx, "idle-"+format, now)
			require.NoError(t, err)
			body, ct := minimalEvents(format, server.DefaultMaxEvents)
			path := "/v1/tables/minimal/events"
			if format == "line" {
				path = "/write?db=x&precision=ns"
			}
			res := f.do("POST", path, key, []byte(body), "Content-Type", ct)
			require.Less(t, res.status, 300, "body: %s", res.body)
		})
	}
	t.Run("largest-body", func(t *testing.T) {
		if testing.Short() {
			t.Skip("a body of 16 MiB")
		}
		key, err := f.tenants.Add(ctx, "idle-body", now)
		require.NoError(t, err)
		eb := &eventBody{n: server.DefaultMaxBodyBytes / 182, pad: 100}
		body, err := io.ReadAll(eb)
		require.NoError(t, err)
		require.Greater(t, len(body), server.DefaultMaxBodyBytes*15/16)
		require.LessOrEqual(t, len(body), server.DefaultMaxBodyBytes)
		res := f.do("POST", "/v1/tables/large/events", key, body, "Content-Type", "application/x-ndjson")
		require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	})
}

// A request whose decoded events no budget of the server could hold is
// 413 naming max_event_bytes_in_flight, at once and every time, and
// writes nothing; one just under it is written.
func TestARequestLargerThanTheEventsBudgetIs413(t *testing.T) {
	f := newFixture(t, server.Options{MaxEventBytesInFlight: 2 << 20, MaxEvents: 1000})
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, `{"series":"s","time":%d,"fields":{"a":[%s1]}}`+"\n", now.UnixMilli()-int64(i), strings.Repeat("1,", 200))
	}
	for range 2 {
		res := f.postNDJSON(f.acme, "a_table", b.String())
		require.Equal(t, http.StatusRequestEntityTooLarge, res.status, "body: %s", res.body)
		require.Contains(t, res.json(t)["error"], "max_event_bytes_in_flight")
		require.Contains(t, res.json(t)["error"], "split the batch")
		require.Empty(t, res.header.Get("Retry-After"))
	}
	require.Equal(t, http.StatusNotFound, f.get(f.acme, "a_table", wide).status, "nothing was written")
	res := f.postNDJSON(f.acme, "a_table", ndjson(now, "s", 1000))
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
}

// A body larger than a tenant's share of the body budget, within the
// budget, is read on an idle server: the body's own buffer does not count
// as its tenant's other requests.
func TestABodyOverItsShareIsReadAlone(t *testing.T) {
	f := newFixture(t, server.Options{MaxBodyBytes: 1 << 20, MaxBodyBytesInFlight: 1 << 20, TenantShare: 0.5})
	body := ndjson(now.Add(-10_000*time.Minute), "s", 10_000)
	require.Greater(t, len(body), (1<<20+64<<10)/2, "over the share")
	res := f.postNDJSON(f.acme, "a_table", body)
	require.Equal(t, http.StatusOK, res.status, "body: %.300s", res.body)
}

// Options whose events budget could not hold a request of MaxEvents
// events are refused, naming both limits.
func TestEventsBudgetMustHoldTheLargestRequest(t *testing.T) {
	o := server.Options{MaxEvents: 100_000, MaxEventBytesInFlight: admission.SmallestRequestBytes(100_000) - 1}
	o.EnsureDefaults()
	err := o.Validate()
	require.ErrorContains(t, err, "max_event_bytes_in_flight")
	require.ErrorContains(t, err, "max_events")
	o.MaxEventBytesInFlight = admission.SmallestRequestBytes(100_000)
	require.NoError(t, o.Validate())
	o.EventBudget = server.NewEventBudget(1<<20, 0)
	require.ErrorContains(t, o.Validate(), "max_event_bytes_in_flight")
	d := server.Options{}
	d.EnsureDefaults()
	require.NoError(t, d.Validate(), "the defaults hold")
}

// A write refused for a wait shorter than a second says Retry-After: 1,
// and its message the same, not "retry in 0s".
func TestRetryAfterIsAtLeastASecond(t *testing.T) {
	clk := clock.NewManual(now)
	f := newFixture(t, server.Options{Clock: clk, TenantLimits: tenant.Limits{WriteEventsPerSecond: 1e6, WriteEventsBurst: 10}})
	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "t", ndjson(now.Add(-time.Hour), "a", 10)).status)
	res := f.postNDJSON(f.acme, "t", ndjson(now.Add(-time.Hour), "b", 1))
	require.Equal(t, http.StatusTooManyRequests, res.status, "body: %s", res.body)
	require.Equal(t, 1, retryAfterOf(t, res))
	require.Contains(t, res.json(t)["error"], "write_events_per_second = 1e+06: retry in 1s")
}

// Retry-After is a whole number of seconds, at least 1, and the message
// says no wait of 0.
func retryAfterOf(t *testing.T, res response) int {
	t.Helper()
	secs, err := strconv.Atoi(res.header.Get("Retry-After"))
	require.NoError(t, err, "Retry-After %q", res.header.Get("Retry-After"))
	require.GreaterOrEqual(t, secs, 1)
	require.NotContains(t, string(res.body), "retry in 0s")
	return secs
}
