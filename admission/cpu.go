package admission

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// CPU is a server-wide pool of slots for heavy CPU work: the series an
// aggregate of every series summarises, a request's decoding of its
// events and its write of them on Pebble. Work that may run long on the
// CPU without blocking takes a slot per piece (a turn of series, a
// request's decoding) and gives it back between pieces, so that holders
// wait for each other and yield often; nothing holds a slot while it
// waits on a client or on a budget. The pool has one slot fewer than the cores Go
// schedules on (GOMAXPROCS), at least one: however much heavy work runs,
// a light request (a read of one series, a small write) finds a core
// without waiting for a time slice of each heavy goroutine. On one core
// there is one slot, and light requests share the core with it.
//
// The pool serves isolation between tenants, so a tenant alone does not
// wait for it: AcquireFor gives a tenant no slot, and lets it use every
// core, when no other tenant was Seen within ActiveWindow. A server of
// one tenant (or one tenant at a time) runs its writes and aggregates on
// all its cores; once another tenant makes requests, heavy work takes
// slots again and leaves that tenant a core. A request already past its
// AcquireFor finishes its piece without a slot: one request's decoding
// or write, one turn of series.
//
// Its methods may be called from any number of goroutines at once.
type CPU struct {
	sem   *semaphore.Weighted
	slots int
	// held counts the slots held now, and taken the slots ever taken:
	// what the pool publishes as metrics (Describe, Collect).
	held  atomic.Int64
	taken atomic.Int64

	now func() time.Time
	// mu guards the tenants last seen: last, the tenant of the latest
	// request, at lastAt, and otherAt, the latest request of any tenant
	// but last.
	mu              sync.Mutex
	last            string
	lastAt, otherAt time.Time
}

// ActiveWindow is how long after its last request a tenant counts as
// active, making the others' heavy work take slots (CPU.AcquireFor).
const ActiveWindow = 10 * time.Second

// NewCPU returns a pool of slots slots; slots < 1 means CPUSlots().
func NewCPU(slots int) *CPU {
	if slots < 1 {
		slots = CPUSlots()
	}
	return &CPU{sem: semaphore.NewWeighted(int64(slots)), slots: slots, now: time.Now}
}

// CPUSlots returns the default size of a CPU pool: GOMAXPROCS-1, at
// least 1.
func CPUSlots() int {
	return max(runtime.GOMAXPROCS(0)-1, 1)
}

// Acquire waits for a slot, or for ctx to end, and returns the function
// that gives it back (once).
func (c *CPU) Acquire(ctx context.Context) (release func(), err error) {
	if err := c.sem.Acquire(ctx, 1); err != nil {
		return nil, err
	}
	c.held.Add(1)
	c.taken.Add(1)
	var once atomic.Bool
	return func() {
		if once.CompareAndSwap(false, true) {
			c.held.Add(-1)
			c.sem.Release(1)
		}
	}, nil
}

// Seen records a request of tenant, authenticated (so that a request
// without a valid key cannot take the others' cores away). On a nil
// pool it does nothing.
func (c *CPU) Seen(tenant string) {
	if c == nil {
		return
	}
	now := c.now()
	c.mu.Lock()
	if tenant != c.last {
		c.otherAt, c.last = c.lastAt, tenant
	}
	c.lastAt = now
	c.mu.Unlock()
}

// othersActive reports whether a tenant other than tenant was Seen
// within ActiveWindow.
func (c *CPU) othersActive(tenant string) bool {
	now := c.now()
	c.mu.Lock()
	at := c.lastAt
	if tenant == c.last {
		at = c.otherAt
	}
	c.mu.Unlock()
	return !at.IsZero() && now.Sub(at) < ActiveWindow
}

// AcquireFor is Acquire for heavy work of tenant: while no other tenant
// is active, or on a nil pool (a store without one: DynamoDB), it takes
// no slot and returns at once, with a release that does nothing.
func (c *CPU) AcquireFor(ctx context.Context, tenant string) (release func(), err error) {
	if c == nil || !c.othersActive(tenant) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return func() {}, nil
	}
	return c.Acquire(ctx)
}
