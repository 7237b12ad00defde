package dynamostore

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore/dynamofault"
)

func TestBackoffDelay(t *testing.T) {
	b := backoff{base: 10 * time.Millisecond, max: 100 * time.Millisecond}
	for n, ceiling := range []time.Duration{10, 20, 40, 80, 100, 100} {
		ceiling *= time.Millisecond
		var largest time.Duration
		for range 2000 {
			d := b.delay(n)
			require.GreaterOrEqual(t, d, time.Duration(0))
			require.Less(t, d, ceiling, "retry %d", n)
			largest = max(largest, d)
		}
		// Full jitter spreads over the whole interval.
		require.Greater(t, largest, ceiling/2, "retry %d", n)
	}
	require.Less(t, b.delay(1000), b.max, "no overflow on large counts")
	require.Equal(t, time.Duration(0), backoff{}.delay(3))
}

func TestBackoffSleepStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := backoff{base: time.Hour, max: time.Hour}
	require.ErrorIs(t, b.sleep(ctx, 5), context.Canceled)
}

// TestRetryerHasNoQuota checks that throttling never runs the retryer out
// of retries shared across calls: the SDK's default token bucket (500
// tokens, 5 per retry) would refuse the 101st retry of calls that keep
// being throttled.
func TestRetryerHasNoQuota(t *testing.T) {
	r := newRetryer(backoff{base: time.Millisecond, max: time.Millisecond})
	throttled := &smithy.GenericAPIError{Code: codeThrottling}
	require.True(t, r.IsErrorRetryable(throttled))
	for i := range 1000 {
		_, err := r.GetRetryToken(context.Background(), throttled)
		require.NoError(t, err, "retry %d", i)
	}
}

// TestRetriesStopWithContext checks that the retries of a call that keeps
// being throttled go on past MaxAttempts, and end with its context's
// deadline: throttled, the deadline in the chain.
func TestRetriesStopWithContext(t *testing.T) {
	faults := dynamofault.New(dynamofault.Options{Seed: 1, Mix: dynamofault.Mix{dynamofault.Throttling: 1}})
	s := faultyStore(t, faults, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := s.GetItem(ctx, "no_table", "pk", "sk")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, storage.ErrThrottled)
	require.Greater(t, faults.Counts()[dynamofault.Throttling], 2, "throttled calls were retried past MaxAttempts")
}

// TestThrottlingRetriedUntilDeadline writes through a transport that
// throttles most of the BatchWriteItem calls, with 2 attempts a call: a
// context without a deadline runs out of them, as MaxAttempts says; one
// with a deadline retries the throttled calls until they get through,
// however many attempts it takes, and every item is written.
func TestThrottlingRetriedUntilDeadline(t *testing.T) {
	testEndpoint(t)
	mix := dynamofault.Mix{dynamofault.Throughput: 0.4, dynamofault.Throttling: 0.4}
	clean := openStore(t, Options{})
	items := faultItems(500)

	t.Run("no deadline", func(t *testing.T) {
		faults := dynamofault.New(dynamofault.Options{Seed: 1, Mix: mix, Operations: []string{"BatchWriteItem"}})
		name := createTable(t, clean, storage.TableSpec{})
		err := faultyStore(t, faults, 2).BatchWrite(context.Background(), name, items)
		require.ErrorIs(t, err, storage.ErrThrottled)
		var spent *retry.MaxAttemptsError
		require.ErrorAs(t, err, &spent)
		checkWrite(t, items, err, storedItems(t, clean, name), faults.Ambiguous(), name)
	})
	t.Run("deadline", func(t *testing.T) {
		// 90% of the calls throttled: a request meets 9 throttles on
		// average, and the 40 requests 360 (standard deviation 60), far
		// above the 80 that 2 attempts a request allow. The calls run
		// concurrently, so which one draws which fault varies from run
		// to run: the margin, not the seed, keeps the test from flaking.
		mix := dynamofault.Mix{dynamofault.Throughput: 0.45, dynamofault.Throttling: 0.45}
		items := faultItems(1000)
		faults := dynamofault.New(dynamofault.Options{Seed: 1, Mix: mix, Operations: []string{"BatchWriteItem"}})
		name := createTable(t, clean, storage.TableSpec{})
		// Far enough to be reached only if the retries never ended.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, faultyStore(t, faults, 2).BatchWrite(ctx, name, items))
		require.Equal(t, items, sortedByKey(storedItems(t, clean, name)))
		counts := faults.Counts()
		throttled := counts[dynamofault.Throughput] + counts[dynamofault.Throttling]
		require.Greater(t, throttled, 2*len(items)/batchSize, "throttled calls were retried past MaxAttempts")
	})
}

// TestOtherErrorsKeepMaxAttempts checks that only throttling is retried
// until the deadline: a call answered 500 on every attempt, or throttled
// in between, still ends after MaxAttempts answers that are not
// throttling.
func TestOtherErrorsKeepMaxAttempts(t *testing.T) {
	testEndpoint(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, mix := range []dynamofault.Mix{
		{dynamofault.ServerError: 1},
		{dynamofault.ServerError: 0.3, dynamofault.Throttling: 0.7},
	} {
		faults := dynamofault.New(dynamofault.Options{Seed: 1, Mix: mix, Operations: []string{"GetItem"}})
		_, err := faultyStore(t, faults, 3).GetItem(ctx, "no_table", "pk", "sk")
		require.ErrorIs(t, err, storage.ErrUnavailable, "%v", mix)
		var spent *retry.MaxAttemptsError
		require.ErrorAs(t, err, &spent)
		require.Equal(t, 3, faults.Counts()[dynamofault.ServerError], "%v: attempts answered 500", mix)
	}
}

// TestDeadlineNamesUnwritten writes through a transport that throttles
// some BatchWriteItem calls and leaves items of every other one
// unprocessed, so that the write never completes, with a short
// deadline: the write fails as throttled once the deadline passed, and
// names exactly the items not stored, the items it had no answer for
// aside.
func TestDeadlineNamesUnwritten(t *testing.T) {
	testEndpoint(t)
	clean := openStore(t, Options{})
	items := faultItems(1000)
	for seed := uint64(1); seed <= 2; seed++ {
		faults := dynamofault.New(dynamofault.Options{Seed: seed, Operations: []string{"BatchWriteItem"},
			Mix: dynamofault.Mix{dynamofault.Throttling: 0.4, dynamofault.Unprocessed: 0.6}})
		name := createTable(t, clean, storage.TableSpec{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := faultyStore(t, faults, 2).BatchWrite(ctx, name, items)
		cancel()
		require.ErrorIs(t, err, storage.ErrThrottled)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		stored := storedItems(t, clean, name)
		checkWrite(t, items, err, stored, faults.Ambiguous(), name)
		var we *storage.BatchWriteError
		require.ErrorAs(t, err, &we)
		require.NotEmpty(t, stored, "seed %d: the items that got through are written", seed)
		require.Less(t, len(stored), len(items))
	}
}
