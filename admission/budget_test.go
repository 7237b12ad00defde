package admission_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/admission"
)

// A tenant holds at most its share; the budget at most its size; a
// request larger than either gets in alone; a release lets a waiter in.
func TestBudget(t *testing.T) {
	b := admission.NewBudget("bytes", 100, 0.5)
	require.Equal(t, int64(50), b.Share())
	require.NoError(t, b.TryAcquire("a", 40))
	require.ErrorIs(t, b.TryAcquire("a", 20), admission.ErrTenantShare)
	require.NoError(t, b.TryAcquire("b", 50))
	require.ErrorIs(t, b.TryAcquire("c", 20), admission.ErrFull)
	require.NoError(t, b.TryAcquire("c", 10))
	all, a := b.Used("a")
	require.Equal(t, int64(100), all)
	require.Equal(t, int64(40), a)
	require.Equal(t, map[string]int64{"a": 40, "b": 50, "c": 10}, b.Tenants())

	// A waiter gets in once another gives back.
	got := make(chan error)
	go func() { got <- b.Acquire(context.Background(), "c", 30) }()
	b.Release("b", 50)
	require.NoError(t, <-got)
	b.Release("a", 40)
	b.Release("c", 40)
	all, _ = b.Used("")
	require.Zero(t, all)
	require.Empty(t, b.Tenants())

	// Larger than the share, within the budget: in, alone.
	require.NoError(t, b.TryAcquire("a", 100))
	require.ErrorIs(t, b.TryAcquire("b", 1), admission.ErrFull)
	b.Release("a", 100)
	// Larger than the budget: never, however empty it is.
	err := b.TryAcquire("a", 101)
	require.ErrorIs(t, err, admission.ErrTooLarge)
	require.ErrorContains(t, err, "101 bytes, over the budget's 100")
	require.NoError(t, b.Fits(100))
	require.Equal(t, int64(100), b.Bound(500))
	require.Equal(t, int64(7), b.Bound(7))

	// A hold grows and shrinks.
	h := b.Hold("a")
	require.NoError(t, h.TryResize(30))
	require.NoError(t, h.TryResize(10))
	require.Equal(t, int64(10), h.Held())
	h.Release()
	h.Release()
	all, _ = b.Used("")
	require.Zero(t, all)
}

// A tenant's own cap, below its share, holds it lower; one above the
// share changes nothing; a request over the cap gets in once its tenant
// holds nothing.
func TestBudgetAcquireWithin(t *testing.T) {
	b := admission.NewBudget("partitions", 100, 0.5)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, b.AcquireWithin(ctx, "a", 10, 20))
	err := b.AcquireWithin(ctx, "a", 11, 20)
	require.ErrorIs(t, err, admission.ErrTenantShare)
	require.ErrorContains(t, err, "its share of 20 partitions")
	require.NoError(t, b.AcquireWithin(ctx, "a", 10, 20))
	require.NoError(t, b.AcquireWithin(ctx, "b", 50, 80))
	require.ErrorIs(t, b.AcquireWithin(ctx, "b", 1, 80), admission.ErrTenantShare)
	require.NoError(t, b.AcquireWithin(ctx, "c", 30, 0))
	b.Release("a", 20)
	b.Release("b", 50)
	b.Release("c", 30)
	require.NoError(t, b.AcquireWithin(ctx, "a", 40, 20), "alone over its cap")
	require.ErrorIs(t, b.AcquireWithin(ctx, "a", 1, 20), admission.ErrTenantShare)
	b.Release("a", 40)
}

// A hold that grows counts what it holds as its own: alone, it grows past
// its tenant's share and up to the whole budget, as one request of its
// new size would get in; beside its tenant's other requests, or another
// tenant's, it waits as such a request would; past the budget it is
// refused for good.
func TestHoldGrowsAlone(t *testing.T) {
	b := admission.NewBudget("bytes", 100, 0.5)
	h := b.Hold("a")
	require.NoError(t, h.TryResize(40))
	require.NoError(t, h.TryResize(70), "over the share, alone")
	require.NoError(t, h.TryResize(100), "the whole budget, alone")
	require.ErrorIs(t, h.TryResize(101), admission.ErrTooLarge)
	require.Equal(t, int64(100), h.Held())
	require.NoError(t, h.TryResize(30))

	// Beside another request of its tenant, the share holds.
	require.NoError(t, b.TryAcquire("a", 10))
	require.ErrorIs(t, h.TryResize(50), admission.ErrTenantShare)
	require.NoError(t, h.TryResize(40))
	b.Release("a", 10)
	// Beside another tenant's, the budget holds.
	require.NoError(t, b.TryAcquire("b", 50))
	require.ErrorIs(t, h.TryResize(60), admission.ErrFull)
	require.NoError(t, h.TryResize(50))
	b.Release("b", 50)
	h.Release()
	all, _ := b.Used("")
	require.Zero(t, all)
}
