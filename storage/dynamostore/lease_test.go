package dynamostore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/storage"
)

// TestLeaseTwoOwners runs against dynalite: two servers share a meta
// table; one holds the lease until it lapses.
func TestLeaseTwoOwners(t *testing.T) {
	s := openStore(t, Options{})
	ctx := context.Background()
	meta := createTable(t, s, storage.TableSpec{Capacity: storage.Capacity{Billing: storage.OnDemand}})
	clk := clock.NewManual(time.Date(2017, 4, 9, 0, 0, 0, 0, time.UTC))
	lease := Lease{Store: s, Table: meta, Clock: clk}
	const ttl = 10 * time.Minute

	for _, step := range []struct {
		advance time.Duration
		owner   string
		held    bool
	}{
		{0, "a", true},                 // nobody held it
		{0, "b", false},                // a holds it
		{time.Minute, "a", true},       // a renews: until 00:11
		{9 * time.Minute, "b", false},  // 00:10: still a's
		{time.Minute, "b", false},      // 00:11: expires == now, not yet lapsed
		{time.Millisecond, "b", true},  // lapsed: b takes it
		{0, "a", false},                // and a no longer holds it
		{0, "b", true},                 // b renews
		{ttl + time.Second, "a", true}, // b went away
	} {
		clk.Advance(step.advance)
		held, err := lease.Acquire(ctx, "lifecycle", step.owner, ttl)
		require.NoError(t, err)
		require.Equal(t, step.held, held, "%s at %s", step.owner, clk.Now())
	}

	// Leases of other names are apart.
	held, err := lease.Acquire(ctx, "other", "b", ttl)
	require.NoError(t, err)
	require.True(t, held)

	_, err = Lease{Store: s, Table: meta + "_missing"}.Acquire(ctx, "lifecycle", "a", ttl)
	require.ErrorIs(t, err, storage.ErrTableNotFound)
}

// A released lease is free at once; a release by one who does not hold
// it changes nothing.
func TestLeaseRelease(t *testing.T) {
	s := openStore(t, Options{})
	ctx := context.Background()
	meta := createTable(t, s, storage.TableSpec{Capacity: storage.Capacity{Billing: storage.OnDemand}})
	clk := clock.NewManual(time.Date(2017, 4, 9, 0, 0, 0, 0, time.UTC))
	lease := Lease{Store: s, Table: meta, Clock: clk}
	held, err := lease.Acquire(ctx, "lifecycle", "a", time.Hour)
	require.NoError(t, err)
	require.True(t, held)
	require.NoError(t, lease.Release(ctx, "lifecycle", "b"), "not b's: nothing happens")
	held, err = lease.Acquire(ctx, "lifecycle", "b", time.Hour)
	require.NoError(t, err)
	require.False(t, held, "still a's")
	require.NoError(t, lease.Release(ctx, "lifecycle", "a"))
	held, err = lease.Acquire(ctx, "lifecycle", "b", time.Hour)
	require.NoError(t, err)
	require.True(t, held, "free once a released it")
}
