package lifecycle_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/storage"
)

// leaseTable creates a table for lease items.
func leaseTable(t *testing.T, store storage.Store, f family.Family) string {
	t.Helper()
	name := f.Prefix + "lease"
	require.NoError(t, store.CreateTable(context.Background(), storage.TableSpec{Name: name}))
	t.Cleanup(func() { _ = store.DeleteTable(context.Background(), name) })
	return name
}

// TestTableLeaseTwoOwners: two servers share a meta table; one holds the
// lease until it lapses.
func TestTableLeaseTwoOwners(t *testing.T) {
	each(t, func(t *testing.T, store storage.Store, f family.Family) {
		ctx := context.Background()
		clk := clock.NewManual(time.Date(2017, 4, 9, 0, 0, 0, 0, time.UTC))
		lease := lifecycle.TableLease{Store: store, Table: leaseTable(t, store, f), Clock: clk}
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

		lease.Table += "_missing"
		_, err = lease.Acquire(ctx, "lifecycle", "a", ttl)
		require.ErrorIs(t, err, storage.ErrTableNotFound)
	})
}

// A released lease is free at once; a release by one who does not hold
// it changes nothing, and a release of a lease never taken writes nothing.
func TestTableLeaseRelease(t *testing.T) {
	each(t, func(t *testing.T, store storage.Store, f family.Family) {
		ctx := context.Background()
		clk := clock.NewManual(time.Date(2017, 4, 9, 0, 0, 0, 0, time.UTC))
		table := leaseTable(t, store, f)
		lease := lifecycle.TableLease{Store: store, Table: table, Clock: clk}
		require.NoError(t, lease.Release(ctx, "never", "a"))
		_, err := store.GetItem(ctx, table, "lease#never", "lease")
		require.ErrorIs(t, err, storage.ErrItemNotFound)

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
	})
}
