package dynamostore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore/dynamofault"
)

// TestBatchWriteUnderFaults writes through a fault-injecting transport in
// front of dynalite and checks, under every fault mix: an item reported
// written is stored; an item not stored is reported unwritten; an item
// reported unwritten but stored is one whose acknowledgement was dropped;
// and retrying the whole batch leaves each item stored once.
func TestBatchWriteUnderFaults(t *testing.T) {
	testEndpoint(t)
	injected := &faultCounts{}
	t.Cleanup(func() {
		// Over all mixes and seeds, every kind of fault happened.
		for f := dynamofault.Throughput; f <= dynamofault.DropAfter; f++ {
			require.Positive(t, injected.get(f), "%v injected", f)
		}
	})
	type mix struct {
		name        string
		mix         dynamofault.Mix
		maxAttempts int
		// mustFail says the mix is heavy enough that the first write
		// always fails, and with what.
		mustFail error
	}
	for _, m := range []mix{
		{name: "throughput", mix: dynamofault.Mix{dynamofault.Throughput: 0.3}},
		{name: "throttling", mix: dynamofault.Mix{dynamofault.Throttling: 0.3}},
		{name: "unprocessed", mix: dynamofault.Mix{dynamofault.Unprocessed: 0.3}},
		{name: "server errors", mix: dynamofault.Mix{dynamofault.ServerError: 0.3}},
		{name: "drops before", mix: dynamofault.Mix{dynamofault.DropBefore: 0.3}},
		{name: "drops after", mix: dynamofault.Mix{dynamofault.DropAfter: 0.3}},
		{name: "everything", mix: lightMix},
		{name: "retries run out on throttling", maxAttempts: 2, mustFail: storage.ErrThrottled,
			mix: dynamofault.Mix{dynamofault.Throughput: 0.4, dynamofault.Throttling: 0.4}},
		{name: "always unprocessed", mustFail: storage.ErrThrottled,
			mix: dynamofault.Mix{dynamofault.Unprocessed: 1}},
		{name: "retries run out on everything", maxAttempts: 2, mustFail: errAny,
			mix: dynamofault.Mix{
				dynamofault.Throughput: 0.1, dynamofault.Throttling: 0.1, dynamofault.Unprocessed: 0.2,
				dynamofault.ServerError: 0.15, dynamofault.DropBefore: 0.1, dynamofault.DropAfter: 0.2,
			}},
	} {
		for seed := uint64(1); seed <= 2; seed++ {
			t.Run(fmt.Sprintf("%s/seed %d", m.name, seed), func(t *testing.T) {
				t.Parallel()
				faults := dynamofault.New(dynamofault.Options{Seed: seed, Mix: m.mix, Operations: []string{"BatchWriteItem"}})
				faulty := faultyStore(t, faults, m.maxAttempts)
				clean := openStore(t, Options{})
				name := createTable(t, clean, storage.TableSpec{})
				// 40 requests: the chance that a mix of 0.3 injects no fault is 0.7^40.
				items := faultItems(1000)

				err := faulty.BatchWrite(context.Background(), name, items)
				stored := storedItems(t, clean, name)
				checkWrite(t, items, err, stored, faults.Ambiguous(), name)
				if m.mustFail != nil {
					require.Error(t, err, "the mix is heavy enough to fail a request")
					if m.mustFail != errAny {
						require.ErrorIs(t, err, m.mustFail)
					}
				}

				// The client retries the whole batch, as after a 5xx,
				// until it succeeds: each item ends up stored once. The
				// heavy mixes give way to the light one by then.
				retrying := faulty
				if m.mustFail != nil {
					retrying = faultyStore(t, dynamofault.New(dynamofault.Options{Seed: seed, Mix: lightMix, Operations: []string{"BatchWriteItem"}}), 0)
				}
				for try := 0; err != nil; try++ {
					require.Less(t, try, 20, "a whole retry eventually succeeds")
					err = retrying.BatchWrite(context.Background(), name, items)
					// Items of the earlier calls are stored whatever this
					// one reports.
					checkWrite(t, items, err, storedItems(t, clean, name), nil, name)
				}
				require.Equal(t, items, sortedByKey(storedItems(t, clean, name)), "every item once, none other")
				counts := faults.Counts()
				injected.add(counts)
				faulted := 0
				for f, n := range counts {
					if f != dynamofault.None {
						require.Contains(t, m.mix, f, "only faults of the mix")
						faulted += n
					}
				}
				require.Positive(t, faulted, "the mix injected faults")
			})
		}
	}
}

// lightMix has every fault, rarely enough that the retries get through.
var lightMix = dynamofault.Mix{
	dynamofault.Throughput: 0.1, dynamofault.Throttling: 0.1, dynamofault.Unprocessed: 0.15,
	dynamofault.ServerError: 0.1, dynamofault.DropBefore: 0.05, dynamofault.DropAfter: 0.1,
}

// faultyStore opens a store whose requests go through faults, with short
// backoffs; maxAttempts 0 means 6.
func faultyStore(t *testing.T, faults *dynamofault.Transport, maxAttempts int) *Store {
	if maxAttempts == 0 {
		maxAttempts = 6
	}
	return openStore(t, Options{
		MaxAttempts:            maxAttempts,
		RetryBaseDelay:         time.Millisecond,
		MaxBackoff:             10 * time.Millisecond,
		MaxUnprocessedAttempts: 4,
		WriteConcurrency:       4,
		ClientOptions: []func(*dynamodb.Options){func(o *dynamodb.Options) {
			o.HTTPClient = &http.Client{Transport: faults}
		}},
	})
}

// faultCounts adds up the faults of several transports.
type faultCounts struct {
	mu sync.Mutex
	n  map[dynamofault.Fault]int
}

func (c *faultCounts) add(counts map[dynamofault.Fault]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = make(map[dynamofault.Fault]int)
	}
	for f, n := range counts {
		c.n[f] += n
	}
}

func (c *faultCounts) get(f dynamofault.Fault) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[f]
}

// errAny in mustFail accepts any error.
var errAny = errors.New("any error")

// faultItems returns n items with deterministic keys, about 180 bytes each.
func faultItems(n int) []storage.Item {
	items := make([]storage.Item, n)
	for i := range items {
		items[i] = storage.Item{
			PK: fmt.Sprintf("tenant#table#car-%d", i%7),
			SK: fmt.Sprintf("%016d#%08x", 1491825600000000+i, i),
			Attrs: map[string]any{
				"speed": json.Number(fmt.Sprintf("%d.5", i%120)),
				"gear":  "D",
				"lat":   json.Number("48.137154"),
				"lon":   json.Number("11.576124"),
				"seq":   json.Number(fmt.Sprint(i)),
			},
		}
	}
	return sortedByKey(items)
}

// storedItems scans the table with a store without faults.
func storedItems(t *testing.T, s *Store, table string) map[[2]string]storage.Item {
	t.Helper()
	out := make(map[[2]string]storage.Item)
	for _, it := range drainItems(t, s.Scan(context.Background(), table)) {
		k := [2]string{it.PK, it.SK}
		require.NotContains(t, out, k, "scan returns an item twice")
		out[k] = it
	}
	return out
}

// checkWrite checks the outcome of one BatchWrite of items against what
// the table holds. With ambiguous not nil, the table was empty before the
// write, and an item reported unwritten may be stored only if it is in
// ambiguous.
func checkWrite(t *testing.T, items []storage.Item, err error, stored map[[2]string]storage.Item, ambiguous map[dynamofault.Key]bool, table string) {
	t.Helper()
	unwritten := map[int]bool{}
	if err != nil {
		var we *storage.BatchWriteError
		require.ErrorAs(t, err, &we)
		require.Equal(t, table, we.Table)
		require.True(t, slices.IsSorted(we.Unwritten), "Unwritten ascending")
		require.NotEmpty(t, we.Unwritten)
		for _, i := range we.Unwritten {
			require.False(t, unwritten[i], "index %d listed twice", i)
			require.True(t, i >= 0 && i < len(items), "index %d in range", i)
			unwritten[i] = true
		}
	}
	keys := map[[2]string]bool{}
	for i, it := range items {
		k := [2]string{it.PK, it.SK}
		keys[k] = true
		got, ok := stored[k]
		switch {
		case !unwritten[i]:
			require.True(t, ok, "item %d reported written is stored", i)
			require.Equal(t, it, got, "item %d", i)
		case ok && ambiguous != nil:
			require.True(t, ambiguous[dynamofault.Key{Table: table, PK: it.PK, SK: it.SK}],
				"item %d reported unwritten is stored only when its acknowledgement was dropped", i)
		}
	}
	for k := range stored {
		require.True(t, keys[k], "no item other than those written: %v", k)
	}
}

func sortedByKey(items any) []storage.Item {
	var out []storage.Item
	switch v := items.(type) {
	case []storage.Item:
		out = slices.Clone(v)
	case map[[2]string]storage.Item:
		for _, it := range v {
			out = append(out, it)
		}
	}
	slices.SortFunc(out, func(a, b storage.Item) int {
		if c := cmpString(a.PK, b.PK); c != 0 {
			return c
		}
		return cmpString(a.SK, b.SK)
	})
	return out
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
