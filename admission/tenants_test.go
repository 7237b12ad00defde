package admission_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/tenant"
)

// Write rates and concurrent queries, by the injected clock, with
// overrides read again after Refresh.
func TestTenants(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewManual(time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC))
	overrides := map[string]tenant.Limits{"noisy": {WriteEventsPerSecond: 10, WriteEventsBurst: 20, MaxConcurrentQueries: 1}}
	ts := admission.NewTenants(admission.TenantsOptions{
		Defaults: tenant.Limits{WriteEventsPerSecond: 1000, WriteBytesPerSecond: 1 << 20, MaxConcurrentQueries: 4},
		Lookup: func(_ context.Context, name string) (tenant.Limits, error) {
			return overrides[name], nil
		},
		Clock: clk,
	})
	require.Equal(t, tenant.Limits{WriteEventsPerSecond: 10, WriteEventsBurst: 20, WriteBytesPerSecond: 1 << 20, MaxConcurrentQueries: 1}, ts.Limits(ctx, "noisy"))

	require.NoError(t, ts.AllowWrite(ctx, "noisy", 20, 100))
	err := ts.AllowWrite(ctx, "noisy", 5, 100)
	var le *admission.LimitError
	require.True(t, errors.As(err, &le))
	require.ErrorIs(t, err, admission.ErrLimited)
	require.Equal(t, "write_events_per_second", le.Limit)
	require.Equal(t, 500*time.Millisecond, le.RetryAfter)
	require.NoError(t, ts.AllowWrite(ctx, "quiet", 1000, 100), "another tenant is not slowed")
	clk.Advance(500 * time.Millisecond)
	require.NoError(t, ts.AllowWrite(ctx, "noisy", 5, 100))
	err = ts.AllowWrite(ctx, "noisy", 21, 0)
	require.True(t, errors.As(err, &le))
	require.True(t, le.Never, "more than the burst never fits")

	// A refused write takes nothing: bytes are checked alone first.
	require.NoError(t, ts.CheckBytes(ctx, "quiet", 1<<20))
	require.Error(t, ts.CheckBytes(ctx, "quiet", 1<<20+1))

	done, err := ts.StartQuery(ctx, "noisy")
	require.NoError(t, err)
	_, err = ts.StartQuery(ctx, "noisy")
	require.True(t, errors.As(err, &le))
	require.Equal(t, "max_concurrent_queries", le.Limit)
	require.Equal(t, map[string]int{"noisy": 1}, ts.Running())
	done()
	done()
	require.Zero(t, ts.Queries("noisy"))

	// Changed overrides hold after Refresh, or at once after Forget.
	overrides["noisy"] = tenant.Limits{MaxConcurrentQueries: 2}
	require.Equal(t, 1, ts.Limits(ctx, "noisy").MaxConcurrentQueries)
	clk.Advance(10 * time.Second)
	require.Equal(t, 2, ts.Limits(ctx, "noisy").MaxConcurrentQueries)
	overrides["noisy"] = tenant.Limits{MaxConcurrentQueries: 3}
	ts.Forget("noisy")
	require.Equal(t, 3, ts.Limits(ctx, "noisy").MaxConcurrentQueries)
}

// WaitWrite waits out the rates' delay on a timer of the time package,
// here the fake clock of a synctest bubble, and gives up when its context
// ends first.
func TestWaitWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ts := admission.NewTenants(admission.TenantsOptions{Defaults: tenant.Limits{WriteEventsPerSecond: 1, WriteEventsBurst: 1}})
		ctx := t.Context()
		start := time.Now()
		require.NoError(t, ts.WaitWrite(ctx, "acme", 1, 0))
		require.Zero(t, time.Since(start), "the burst goes at once")
		require.NoError(t, ts.WaitWrite(ctx, "quiet", 1, 0))
		require.Zero(t, time.Since(start), "another tenant is not slowed")
		require.NoError(t, ts.WaitWrite(ctx, "acme", 1, 0))
		require.Equal(t, time.Second, time.Since(start), "the next event waits a second for its token")

		short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		require.ErrorIs(t, ts.WaitWrite(short, "acme", 1, 0), context.DeadlineExceeded)
		require.Equal(t, 1500*time.Millisecond, time.Since(start), "a wait ends with its context")
	})
}

// A Retry-After is whole seconds, rounded up, at least one.
func TestRetrySeconds(t *testing.T) {
	for d, want := range map[time.Duration]int64{0: 1, time.Microsecond: 1, time.Second: 1, 1001 * time.Millisecond: 2, 90 * time.Second: 90} {
		require.Equal(t, want, admission.RetrySeconds(d), "%s", d)
	}
	require.Contains(t, (&admission.LimitError{Limit: "write_events_per_second", Value: 10, RetryAfter: time.Microsecond}).Error(), "retry in 1s")
}
