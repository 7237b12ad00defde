package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/storage/dynamostore"
	"github.com/timetabledb/timetable/storage/dynamostore/dynamofault"
)

// TestWritesThroughSustainedThrottling writes 80 requests of 500 events
// while DynamoDB throttles 40% of the BatchWriteItem calls and answers
// 10% with UnprocessedItems, and checks that the store's retries carry
// the writes through: at least 99% of the requests succeed, and every
// event acknowledged is stored exactly once.
//
// The store retries a throttled call until the write's deadline (the
// engine's WriteTimeout), however many attempts that takes, and whatever
// the throttling before: a store that stopped after MaxAttempts attempts
// (set to 2 here, where the default is 10) would fail one call in six,
// and nearly every request; a retryer that budgets retries across calls
// (the SDK's default token bucket) stops retrying after a few hundred
// throttled calls, and later writes fail at their first throttle.
func TestWritesThroughSustainedThrottling(t *testing.T) {
	ep := dynamoEndpoint(t)
	faults := dynamofault.New(dynamofault.Options{
		Seed: 1,
		Mix: dynamofault.Mix{
			dynamofault.Throughput:  0.2,
			dynamofault.Throttling:  0.2,
			dynamofault.Unprocessed: 0.1,
		},
		Operations: []string{"BatchWriteItem"},
	})
	sw := &faultSwitch{faults: faults}
	reg := prometheus.NewRegistry()
	store, cfg := openDynamo(t, ep, dynamostore.Options{
		Registerer: reg,
		// Throttling does not count against MaxAttempts in a call with
		// a deadline. Short waits keep the test fast.
		MaxAttempts:    2,
		RetryBaseDelay: time.Millisecond,
		MaxBackoff:     20 * time.Millisecond,
		ClientOptions: []func(*dynamodb.Options){func(o *dynamodb.Options) {
			o.HTTPClient = &http.Client{Transport: sw}
		}},
	})
	// A BatchWriteItem call per 25 events, rows: the chunk layout packs
	// a request's events of a series into one item, and makes too few
	// calls to sustain the throttling.
	cfg.Families[0].Layout = family.LayoutRow
	// The fixture's setup (API keys) has no deadline, and 2 attempts:
	// the faults start with the writes.
	f := newFixtureOn(t, store, cfg, reg, server.Options{})
	sw.on.Store(true)

	const requests, perRequest, clients = 80, 500, 4
	start := now.Add(-9 * time.Hour)
	statuses := make([]int, requests)
	bodies := make([]string, requests)
	began := time.Now()
	var wg sync.WaitGroup
	next := make(chan int)
	for range clients {
		wg.Go(func() {
			for i := range next {
				res := f.postNDJSON(f.acme, "a_table", ndjson(start, fmt.Sprintf("car-%d", i), perRequest))
				statuses[i], bodies[i] = res.status, string(res.body)
			}
		})
	}
	for i := range requests {
		next <- i
	}
	close(next)
	wg.Wait()

	ok := 0
	for i, st := range statuses {
		if st == http.StatusOK {
			ok++
			continue
		}
		require.Equal(t, http.StatusServiceUnavailable, st, "request %d: a failure under throttling is a 503: %s", i, bodies[i])
		t.Logf("request %d: %d %.160s", i, st, bodies[i])
	}
	counts := faults.Counts()
	t.Logf("%d of %d requests written in %v; faults injected: %v", ok, requests, time.Since(began).Round(time.Millisecond), counts)
	require.Greater(t, counts[dynamofault.Throughput]+counts[dynamofault.Throttling], 1000, "throttling was sustained")
	require.GreaterOrEqual(t, float64(ok), 0.99*requests, "at least 99% of the requests succeed")

	// /metrics shows the throttling and the retries.
	metrics := string(f.do("GET", "/metrics", "", nil).body)
	for _, name := range []string{"timetable_dynamodb_throttles_total", "timetable_dynamodb_retries_total", "timetable_dynamodb_unprocessed_items_total", "timetable_dynamodb_consumed_capacity_units_total"} {
		require.Contains(t, metrics, "\n"+name+"{", "%s on /metrics", name)
	}

	// Every event of an acknowledged request is stored, once.
	began = time.Now()
	params := rangeParams(start, now)
	params.Set("limit", "10000")
	got := f.all(f.acme, "a_table", params)
	t.Logf("read back %d events in %v", len(got), time.Since(began).Round(time.Millisecond))
	type key struct{ series, time string }
	seen := map[key]bool{}
	ids := map[string]bool{}
	for _, e := range got {
		k := key{e.Series, e.Time}
		require.False(t, seen[k], "event %v returned twice", k)
		require.False(t, ids[e.ID], "id %s returned twice", e.ID)
		seen[k], ids[e.ID] = true, true
	}
	for i, st := range statuses {
		if st != http.StatusOK {
			continue
		}
		for j := range perRequest {
			k := key{fmt.Sprintf("car-%d", i), start.Add(time.Duration(j) * time.Minute).Format(time.RFC3339Nano)}
			require.True(t, seen[k], "acknowledged event %v is stored", k)
		}
	}
}

// faultSwitch sends requests through faults while on, straight to the
// server otherwise.
type faultSwitch struct {
	on     atomic.Bool
	faults *dynamofault.Transport
}

func (s *faultSwitch) RoundTrip(r *http.Request) (*http.Response, error) {
	if s.on.Load() {
		return s.faults.RoundTrip(r)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestThrottledPastWriteTimeoutNamesUnwritten writes a request while
// DynamoDB throttles 40% of the BatchWriteItem calls and leaves items
// of all the others unprocessed, so that the write cannot complete: at
// the engine's WriteTimeout the server answers 503 throttled, with
// Retry-After, naming the events not written; every event it does not
// name is stored, and every event it names is not, unless the request
// that carried it was cut short in flight (dynamofault's Ambiguous).
func TestThrottledPastWriteTimeoutNamesUnwritten(t *testing.T) {
	ep := dynamoEndpoint(t)
	sw := &faultSwitch{faults: dynamofault.New(dynamofault.Options{
		Seed:       1,
		Mix:        dynamofault.Mix{dynamofault.Throttling: 0.4, dynamofault.Unprocessed: 0.6},
		Operations: []string{"BatchWriteItem"},
	})}
	store, cfg := openDynamo(t, ep, dynamostore.Options{
		RetryBaseDelay: time.Millisecond,
		MaxBackoff:     20 * time.Millisecond,
		ClientOptions: []func(*dynamodb.Options){func(o *dynamodb.Options) {
			o.HTTPClient = &http.Client{Transport: sw}
		}},
	})
	f := newFixtureEngine(t, store, cfg, prometheus.NewRegistry(), server.Options{}, engine.Options{WriteTimeout: 2 * time.Second})

	// The series' first event, without faults, writes its index entry:
	// the request below writes only its events.
	start := now.Add(-9 * time.Hour)
	res := f.postNDJSON(f.acme, "a_table", ndjson(start.Add(-time.Hour), "car-1", 1))
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)

	const n = 500
	sw.on.Store(true)
	res = f.postNDJSON(f.acme, "a_table", ndjson(start, "car-1", n))
	sw.on.Store(false)
	require.Equal(t, http.StatusServiceUnavailable, res.status, "body: %s", res.body)
	require.NotEmpty(t, res.header.Get("Retry-After"))
	var answer struct {
		Error     string `json:"error"`
		Written   *int   `json:"written"`
		Unwritten []int  `json:"unwritten"`
	}
	require.NoError(t, json.Unmarshal(res.body, &answer))
	require.Contains(t, answer.Error, "throttled")
	require.NotEmpty(t, answer.Unwritten, "no request could complete")
	require.True(t, slices.IsSorted(answer.Unwritten))
	require.NotNil(t, answer.Written)
	require.Equal(t, n-len(answer.Unwritten), *answer.Written)
	require.Positive(t, *answer.Written, "the events of the calls that got through are written")

	unwritten := map[int]bool{}
	for _, i := range answer.Unwritten {
		require.True(t, i >= 0 && i < n, "index %d", i)
		unwritten[i] = true
	}
	ambiguous := map[string]bool{}
	for k := range sw.faults.Ambiguous() {
		ambiguous[k.SK] = true
	}
	stored := map[int]bool{}
	for _, e := range f.all(f.acme, "a_table", rangeParams(start, now)) {
		i, err := strconv.Atoi(fmt.Sprint(e.Fields["i"]))
		require.NoError(t, err)
		require.False(t, stored[i], "event %d stored once", i)
		stored[i] = true
		if unwritten[i] {
			at, err := time.Parse(time.RFC3339Nano, e.Time)
			require.NoError(t, err)
			require.True(t, ambiguous[string(itemenc.AppendSortKey(nil, at, e.ID))],
				"event %d named unwritten is stored only when the request carrying it was cut short in flight", i)
		}
	}
	for i := range n {
		if !unwritten[i] {
			require.True(t, stored[i], "event %d not named unwritten is stored", i)
		}
	}
	t.Logf("%d of %d events named unwritten, %d of them stored all the same", len(unwritten), n, len(stored)-*answer.Written)
}
