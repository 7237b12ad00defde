package archive_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore"
	"github.com/timetabledb/timetable/storage/dynamostore/dynamofault"
)

// coldTable plays DynamoDB in front of the test server for one
// provisioned table of 1 RCU: while refuse is set, UpdateTable is refused
// with LimitExceededException (the daily limit on billing switches), and
// while the table is not on demand, Scans are throttled through faults.
type coldTable struct {
	plain, throttled http.RoundTripper
	refuse           atomic.Bool
	onDemand         atomic.Bool
}

func (c *coldTable) RoundTrip(r *http.Request) (*http.Response, error) {
	op := r.Header.Get("X-Amz-Target")
	switch {
	case strings.HasSuffix(op, ".UpdateTable") && c.refuse.Load():
		body := `{"__type":"com.amazonaws.dynamodb.v20120810#LimitExceededException","message":"Subscriber limit exceeded: Billing mode can be switched only a few times a day"}`
		return &http.Response{StatusCode: 400, Status: "400 Bad Request", Request: r,
			Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
			Body:   io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body))}, nil
	case strings.HasSuffix(op, ".UpdateTable"):
		c.onDemand.Store(true) // the only UpdateTable of the test: the switch
	case strings.HasSuffix(op, ".Scan") && !c.onDemand.Load():
		return c.throttled.RoundTrip(r)
	}
	return c.plain.RoundTrip(r)
}

// TestArchiveOfAThrottledColdTable archives a 10 MB table on a cold tier
// of 1 RCU. For several cycles the switch to on-demand is refused and its
// Scans are throttled past the SDK's retries: each cycle's export stops
// (deferred), leaves a checkpoint and the next resumes there. Once the switch is
// allowed, the export finishes, is verified, and the table deleted; the
// archive holds every item once.
func TestArchiveOfAThrottledColdTable(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 10 MB")
	}
	ctx := context.Background()
	setup, cfg := backends.Dynamo().Open(t)
	f := cfg.Families[0]
	// The blog's tiers: a cold tier provisioned at 1 RCU, which throttles.
	f.Tiers, f.Billing = family.BlogTiers(), storage.Provisioned
	f.Retention = 7 * 24 * time.Hour
	url, _ := fileTarget(t)
	f.Archive = url

	// The table: a week of April 2017 on the cold tier, 10 MB of items.
	day := time.Date(2017, 4, 11, 0, 0, 0, 0, time.UTC)
	ref := f.TableFor(day, day)
	cold := f.Tiers[len(f.Tiers)-1]
	require.Equal(t, storage.Capacity{Billing: storage.Provisioned, Read: 1, Write: 1}, cold.Capacity)
	spec := f.Spec(ref, cold)
	// Tagged with this deployment's meta table, as the registry tags
	// the tables it makes: the deployment's own, which it adopts.
	spec.Tags[family.TagMeta] = cfg.MetaTable
	require.NoError(t, setup.CreateTable(ctx, spec))
	backends.AdoptUntagged(t, setup, cfg.MetaTable, f, spec.Name, day)
	// 10 MB: with 20 MB the test took 80 s alone on dynalite, writing and
	// restoring the table. Four Scans in five are throttled, so that the
	// cycles still leave the export unfinished: each got through 30 to
	// 55% of it in the runs measured, where 50 to 80% of 20 MB got
	// through at three in five.
	const items, itemBytes = 10_000, 1000
	pad := strings.Repeat("x", itemBytes-60)
	batch := make([]storage.Item, 0, 1000)
	for i := range items {
		batch = append(batch, storage.Item{PK: fmt.Sprintf("acme#t#s%03d#0", i%500), SK: fmt.Sprintf("2017-04-11T00:00:%05d", i),
			Attrs: map[string]any{"pad": pad}})
		if len(batch) == cap(batch) {
			require.NoError(t, setup.BatchWrite(ctx, spec.Name, batch))
			batch = batch[:0]
		}
	}

	proxy := &coldTable{plain: http.DefaultTransport, throttled: dynamofault.New(dynamofault.Options{
		Seed: 3, Mix: dynamofault.Mix{dynamofault.Throughput: 0.8}, Operations: []string{"Scan"}})}
	proxy.refuse.Store(true)
	store, err := dynamostore.Open(ctx, dynamostore.Options{
		MaxAttempts: 2, RetryBaseDelay: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
		ClientOptions: []func(*dynamodb.Options){func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: proxy} }},
	})
	require.NoError(t, err)
	defer store.Close()

	var logs bytes.Buffer
	clk := clock.NewManual(time.Date(2017, 6, 1, 0, 0, 0, 0, time.UTC))
	r, err := lifecycle.New(lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: []family.Family{f}, Clock: clk, MetaTable: cfg.MetaTable,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		OpenArchiver: func(target string, format family.ArchiveFormat) (lifecycle.Archiver, error) {
			return archive.Open(ctx, target, store, archive.Options{Clock: clk, Format: format, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
				Facts: registry.New(store, cfg.MetaTable).Finder([]string{f.Name})})
		}})
	require.NoError(t, err)

	outcome := func(res []lifecycle.Result, kind lifecycle.Kind) lifecycle.Outcome {
		for _, x := range res {
			if x.Table == spec.Name && x.Kind == kind {
				return x.Outcome
			}
		}
		return ""
	}
	// The throttling draws per request, and requests name the test's
	// table: how far each cycle gets varies, so the cycles go on until
	// one export has resumed another's (at most 30).
	var checkpoints []int64
	for cycle := 0; cycle < 30 && !strings.Contains(logs.String(), "export resumed"); cycle++ {
		res, err := r.Reconcile(ctx, false)
		require.NoError(t, err, "cycle %d", cycle)
		require.Equal(t, lifecycle.Deferred, outcome(res, lifecycle.UpdateBilling), "cycle %d: %+v", cycle, res)
		require.Equal(t, lifecycle.Deferred, outcome(res, lifecycle.Archive), "cycle %d: %v", cycle, res)
		require.Empty(t, outcome(res, lifecycle.Delete))
		checkpoints = append(checkpoints, readCheckpoint(t, url, spec.Name))
		clk.Advance(time.Hour)
	}
	require.Contains(t, logs.String(), "export resumed")
	require.IsNonDecreasing(t, checkpoints)
	require.Less(t, checkpoints[len(checkpoints)-1], int64(items), "throttled, the export is not done yet")
	t.Logf("items exported after each throttled cycle: %v", checkpoints)

	// The next day the switch is allowed: on demand, the export finishes.
	proxy.refuse.Store(false)
	res, err := r.Reconcile(ctx, false)
	require.NoError(t, err, logs.String())
	require.Equal(t, lifecycle.Done, outcome(res, lifecycle.UpdateBilling))
	require.Equal(t, lifecycle.Done, outcome(res, lifecycle.Archive))
	res, err = r.Reconcile(ctx, false)
	require.NoError(t, err)
	require.Equal(t, lifecycle.Done, outcome(res, lifecycle.Delete))
	_, err = setup.DescribeTable(ctx, spec.Name)
	require.ErrorIs(t, err, storage.ErrTableNotFound)

	// The archive holds every item once.
	a, err := archive.Open(ctx, url, setup, archive.Options{Facts: registry.New(setup, cfg.MetaTable).Finder([]string{f.Name})})
	require.NoError(t, err)
	m, err := a.Manifest(ctx, spec.Name)
	require.NoError(t, err)
	require.True(t, m.Verified())
	require.EqualValues(t, items, m.ItemCount)
	require.NoError(t, a.Restore(ctx, spec.Name, spec.Name))
	restored := 0
	it := setup.Scan(ctx, spec.Name)
	seen := map[storage.Key]bool{}
	for it.Next() {
		k := it.Item().Key()
		require.False(t, seen[k], "item %v once", k)
		seen[k] = true
		restored++
	}
	require.NoError(t, it.Close())
	require.Equal(t, items, restored)
}

// readCheckpoint returns how many items the table's export checkpoint
// holds, 0 when there is none.
func readCheckpoint(t *testing.T, url, table string) int64 {
	t.Helper()
	a, err := archive.Open(context.Background(), url, nil, archive.Options{})
	require.NoError(t, err)
	n, err := a.Checkpoint(context.Background(), table, 1)
	require.NoError(t, err)
	return n
}
