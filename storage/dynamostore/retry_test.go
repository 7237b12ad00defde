package dynamostore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
