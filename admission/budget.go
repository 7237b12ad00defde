package admission

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
)

// Errors of a Budget. ErrFull and ErrTenantShare say a retry may
// succeed; ErrTooLarge that it never will.
var (
	// ErrFull is a budget that had no room for a request, whatever its
	// tenant.
	ErrFull = errors.New("timetable: server budget full")
	// ErrTenantShare is a tenant that holds its share of a budget: others
	// may have room.
	ErrTenantShare = errors.New("timetable: tenant holds its share of a server budget")
	// ErrTooLarge is a request that needs more than the whole budget:
	// no wait lets it in.
	ErrTooLarge = errors.New("timetable: request too large for a server budget")
)

// Budget is a server-wide budget of a quantity requests hold (bytes of
// request bodies, bytes of decoded events), with a cap on what each
// tenant holds. Its methods may be called from any number of goroutines
// at once.
//
// A request whose amount is larger than its tenant's cap, but within the
// budget, is let in when it would be alone under that cap (its tenant
// holds nothing else), so that a request of any size the budget can hold
// gets in eventually; one larger than the budget is refused at once with
// ErrTooLarge. What a Hold already holds counts as the request's own,
// not as its tenant's other requests: a hold grows alone as far as a
// request of its new size would get in alone.
type Budget struct {
	name string
	size int64
	// share is what one tenant may hold.
	share int64
	mu    struct {
		sync.Mutex
		used     int64
		byTenant map[string]int64
		// freed is closed, and replaced, whenever something is given
		// back: the waiters look again.
		freed chan struct{}
	}
}

// NewBudget returns a budget of size units, empty, named for errors
// ("bytes of request bodies"), of which one tenant may hold the part
// tenantShare (above 0, at most 1; anything else means 1).
func NewBudget(name string, size int64, tenantShare float64) *Budget {
	if !(tenantShare > 0 && tenantShare <= 1) {
		tenantShare = 1
	}
	b := &Budget{name: name, size: size, share: int64(math.Ceil(float64(size) * tenantShare))}
	b.mu.byTenant = map[string]int64{}
	b.mu.freed = make(chan struct{})
	return b
}

// Share returns what one tenant may hold of the budget.
func (b *Budget) Share() int64 { return b.share }

// Size returns the budget's size.
func (b *Budget) Size() int64 { return b.size }

// Name returns what the budget counts.
func (b *Budget) Name() string { return b.name }

// Used returns what the budget holds, in all and for tenant.
func (b *Budget) Used(tenant string) (all, ofTenant int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mu.used, b.mu.byTenant[tenant]
}

// Tenants returns what each tenant holding part of the budget holds.
func (b *Budget) Tenants() map[string]int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]int64, len(b.mu.byTenant))
	for t, n := range b.mu.byTenant {
		out[t] = n
	}
	return out
}

// Acquire takes n for tenant, holding at most its share of the budget,
// waiting until there is room or ctx ends. Once ctx ends it returns an
// error wrapping ErrFull or ErrTenantShare, whichever kept the request
// out last, and ctx's error; for n over the whole budget it returns
// Fits' error at once. The caller gives n back with Release.
func (b *Budget) Acquire(ctx context.Context, tenant string, n int64) error {
	return b.AcquireWithin(ctx, tenant, n, 0)
}

// AcquireWithin is Acquire with the tenant's cap lowered to most, when
// most is positive and below its share: for a budget whose tenants each
// have their own limit (the query partitions of package engine). A
// request over most is let in once its tenant holds nothing.
func (b *Budget) AcquireWithin(ctx context.Context, tenant string, n, most int64) error {
	return b.acquire(ctx, tenant, n, most, 0)
}

// acquire takes n more for tenant, of which the caller already holds own
// (a Hold's), under a tenant cap of most (see AcquireWithin).
func (b *Budget) acquire(ctx context.Context, tenant string, n, most, own int64) error {
	if n <= 0 {
		return nil
	}
	if err := b.Fits(own + n); err != nil {
		return err
	}
	share := b.share
	if most > 0 && most < share {
		share = most
	}
	for {
		b.mu.Lock()
		why := b.blockedLocked(tenant, n, share, own)
		if why == nil {
			b.mu.used += n
			b.mu.byTenant[tenant] += n
			b.mu.Unlock()
			return nil
		}
		freed := b.mu.freed
		b.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			if errors.Is(why, ErrTenantShare) {
				return fmt.Errorf("%w: it holds its share of %d %s: %w", why, share, b.name, ctx.Err())
			}
			return fmt.Errorf("%w: the server holds %d %s, its limit: %w", why, b.size, b.name, ctx.Err())
		}
	}
}

// Fits returns an error wrapping ErrTooLarge when a request of n could
// never be held, being more than the whole budget, and nil otherwise.
func (b *Budget) Fits(n int64) error {
	if n > b.size {
		return fmt.Errorf("%w: it needs %d %s, over the budget's %d", ErrTooLarge, n, b.name, b.size)
	}
	return nil
}

// Bound returns n, or the budget's size when n is more: what a request
// takes for an estimate made before it knows its size, which may be
// above what it turns out to need (Fits decides once it knows).
func (b *Budget) Bound(n int64) int64 { return min(n, b.size) }

// blockedLocked returns why n more does not fit now, for a request that
// holds own already, under a tenant's cap of share, or nil. A cap of
// the whole budget is the budget's: the budget is full.
func (b *Budget) blockedLocked(tenant string, n, share, own int64) error {
	others := b.mu.byTenant[tenant] - own
	if others > 0 && others+own+n > share && share < b.size {
		return ErrTenantShare
	}
	if b.mu.used-own > 0 && b.mu.used+n > b.size {
		return ErrFull
	}
	return nil
}

// Release gives back n that tenant took.
func (b *Budget) Release(tenant string, n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mu.used -= n
	if left := b.mu.byTenant[tenant] - n; left > 0 {
		b.mu.byTenant[tenant] = left
	} else {
		delete(b.mu.byTenant, tenant)
	}
	close(b.mu.freed)
	b.mu.freed = make(chan struct{})
}

// Hold is what one request holds of a Budget, which it may grow or
// shrink as it learns more of its size. It is used by one goroutine.
type Hold struct {
	budget *Budget
	tenant string
	n      int64
}

// Hold returns an empty hold of tenant on the budget.
func (b *Budget) Hold(tenant string) *Hold {
	return &Hold{budget: b, tenant: tenant}
}

// Held returns what the hold holds.
func (h *Hold) Held() int64 { return h.n }

// Resize makes the hold n: it takes the difference, waiting as Acquire
// does for a request of n (what the hold holds is its own, not its
// tenant's other requests'), or gives back the excess at once.
func (h *Hold) Resize(ctx context.Context, n int64) error {
	switch {
	case n > h.n:
		if err := h.budget.acquire(ctx, h.tenant, n-h.n, 0, h.n); err != nil {
			return err
		}
	case n < h.n:
		h.budget.Release(h.tenant, h.n-n)
	}
	h.n = n
	return nil
}

// Release gives everything back. It is safe to call twice.
func (h *Hold) Release() {
	h.budget.Release(h.tenant, h.n)
	h.n = 0
}
