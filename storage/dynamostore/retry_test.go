package dynamostore

import (
	"context"
	"testing"
	"time"

	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

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
	r := newRetryer(10, backoff{base: time.Millisecond, max: time.Millisecond})
	throttled := &smithy.GenericAPIError{Code: codeThrottling}
	require.True(t, r.IsErrorRetryable(throttled))
	for i := range 1000 {
		_, err := r.GetRetryToken(context.Background(), throttled)
		require.NoError(t, err, "retry %d", i)
	}
}

// TestRetriesStopWithContext checks that the retries of a call that keeps
// being throttled end with its context, not with the attempts: a million
// of them would outlast the test's timeout.
func TestRetriesStopWithContext(t *testing.T) {
	faults := dynamofault.New(dynamofault.Options{Seed: 1, Mix: dynamofault.Mix{dynamofault.Throttling: 1}})
	s := faultyStore(t, faults, 1_000_000)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := s.GetItem(ctx, "no_table", "pk", "sk")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Greater(t, faults.Counts()[dynamofault.Throttling], 5, "throttled calls were retried")
}
