package lifecycle_test

import (
	"context"
	"sync"
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

// slowArchiver archives a table in a while, counting the archives of one
// table under way at once.
type slowArchiver struct {
	took time.Duration
	mu   sync.Mutex
	busy map[string]int
	most int
	done map[string]bool
}

func (a *slowArchiver) Verified(_ context.Context, table string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.done[table], nil
}

func (a *slowArchiver) Archive(ctx context.Context, table string) error {
	a.mu.Lock()
	a.busy[table]++
	a.most = max(a.most, a.busy[table])
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.busy[table]--
		a.mu.Unlock()
	}()
	select {
	case <-time.After(a.took):
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	a.mu.Lock()
	a.done[table] = true
	a.mu.Unlock()
	return nil
}

// TestLeaseRenewedWhileArchiving runs two reconcilers on one store with a
// lease of 300ms, while the first archives tables for a second each: the
// first renews its lease, so the second is refused all along, and no
// table is ever archived by both at once; once the first is done and has
// released its lease, the second acts at once.
func TestLeaseRenewedWhileArchiving(t *testing.T) {
	each(t, func(t *testing.T, store storage.Store, f family.Family) {
		ctx := context.Background()
		f.Retention = 7 * 24 * time.Hour
		f.Archive = "file:///archive"
		oldTables(t, store, f)
		lease := lifecycle.TableLease{Store: store, Table: leaseTable(t, store, f), Clock: clock.Real{}}
		arch := &slowArchiver{took: time.Second, busy: map[string]int{}, done: map[string]bool{}}
		open := func(string, family.ArchiveFormat) (lifecycle.Archiver, error) { return arch, nil }
		clk := clock.NewManual(at("2017-05-08T00:00:00Z")) // April's tables expire May 8
		opts := func(owner string) lifecycle.Options {
			return lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: []family.Family{f}, Clock: clk, OpenArchiver: open,
				Leaser: lease, Owner: owner, LeaseTTL: 300 * time.Millisecond}
		}
		first, second := reconciler(t, opts("first")), reconciler(t, opts("second"))

		var wg sync.WaitGroup
		wg.Add(1)
		var firstErr error
		var firstRes []lifecycle.Result
		go func() {
			defer wg.Done()
			firstRes, firstErr = first.ReconcileKinds(ctx, false, lifecycle.Archive)
		}()
		require.Eventually(t, func() bool {
			arch.mu.Lock()
			defer arch.mu.Unlock()
			return arch.most > 0
		}, 5*time.Second, time.Millisecond, "the first archives")
		refused := 0
		for {
			arch.mu.Lock()
			archived := len(arch.done)
			arch.mu.Unlock()
			if archived == 3 {
				break
			}
			_, err := second.ReconcileKinds(ctx, false, lifecycle.Archive)
			require.ErrorIs(t, err, lifecycle.ErrLeaseHeld, "refused while the first archives (after %d refusals)", refused)
			refused++
			time.Sleep(50 * time.Millisecond)
		}
		wg.Wait()
		require.NoError(t, firstErr)
		archives := 0
		for _, x := range firstRes {
			if x.Kind == lifecycle.Archive {
				require.Equal(t, lifecycle.Done, x.Outcome)
				archives++
			}
		}
		require.Equal(t, 3, archives)
		require.Greater(t, refused, 10, "the second tried over several lease TTLs")
		require.Equal(t, 1, arch.most, "never two archives of one table at once")
		_, err := second.ReconcileKinds(ctx, false, lifecycle.Archive)
		require.NoError(t, err, "the first released its lease")
	})
}
