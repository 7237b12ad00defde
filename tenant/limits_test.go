package tenant_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/tenant"
)

// A tenant's limits are kept with its record: read back as set, replaced
// whole, refused when negative or not finite, and gone with the tenant.
func TestLimitsAreKeptWithTheTenant(t *testing.T) {
	r, _ := newDirectory(t)
	ctx := context.Background()
	_, err := r.Add(ctx, "acme", now)
	require.NoError(t, err)
	l, err := r.Limits(ctx, "acme")
	require.NoError(t, err)
	require.Zero(t, l, "no overrides: every field the default")

	set := tenant.Limits{WriteEventsPerSecond: 1.5, WriteEventsBurst: 10, WriteBytesPerSecond: 1 << 20, WriteBytesBurst: 2 << 20, MaxConcurrentQueries: 3}
	require.NoError(t, r.SetLimits(ctx, "acme", set))
	l, err = r.Limits(ctx, "acme")
	require.NoError(t, err)
	require.Equal(t, set, l)
	require.NoError(t, r.SetLimits(ctx, "acme", tenant.Limits{MaxConcurrentQueries: 1}))
	l, err = r.Limits(ctx, "acme")
	require.NoError(t, err)
	require.Equal(t, tenant.Limits{MaxConcurrentQueries: 1}, l, "replaced whole")
	require.Equal(t, tenant.Limits{MaxConcurrentQueries: 1, WriteEventsBurst: 7}, l.Or(tenant.Limits{MaxConcurrentQueries: 9, WriteEventsBurst: 7}))

	for _, bad := range []tenant.Limits{{WriteEventsPerSecond: -1}, {MaxConcurrentQueries: -1}, {WriteBytesPerSecond: math.Inf(1)}, {WriteEventsPerSecond: math.NaN()}} {
		require.ErrorIs(t, r.SetLimits(ctx, "acme", bad), api.ErrBadTenantLimits)
	}
	require.ErrorIs(t, r.SetLimits(ctx, "nobody", tenant.Limits{}), tenant.ErrNotFound)
	_, err = r.Limits(ctx, "nobody")
	require.ErrorIs(t, err, tenant.ErrNotFound)

	// Removed and added again, the tenant starts from the defaults.
	require.NoError(t, r.Remove(ctx, "acme", now))
	_, err = r.Limits(ctx, "acme")
	require.ErrorIs(t, err, tenant.ErrNotFound)
	_, err = r.Add(ctx, "acme", now)
	require.NoError(t, err)
	l, err = r.Limits(ctx, "acme")
	require.NoError(t, err)
	require.Zero(t, l)
}
