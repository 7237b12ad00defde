package server_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

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
// The store retries with the documented attempt count whatever the
// throttling before: a retryer that budgets retries across calls (the
// SDK's default token bucket) stops retrying after a few hundred throttled
// calls, and later writes fail at their first throttle.
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
	reg := prometheus.NewRegistry()
	store, cfg := openDynamo(t, ep, dynamostore.Options{
		Registerer: reg,
		// A call fails when all its attempts are throttled: with 40%
		// throttling, 0.4^n of the calls. With the default 10 attempts
		// that is 1 in 10,000 calls, and about one run in five would
		// see one of its ~2,000 calls fail, and a 503 for that request;
		// with 15, one run in 500. Short waits keep the test fast.
		MaxAttempts:    15,
		RetryBaseDelay: time.Millisecond,
		MaxBackoff:     20 * time.Millisecond,
		ClientOptions: []func(*dynamodb.Options){func(o *dynamodb.Options) {
			o.HTTPClient = &http.Client{Transport: faults}
		}},
	})
	f := newFixtureOn(t, store, cfg, reg, server.Options{})

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
