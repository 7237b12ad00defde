package admission

import (
	"context"
	"runtime"
	"sync/atomic"

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
// Its methods may be called from any number of goroutines at once.
type CPU struct {
	slots int64
	sem   *semaphore.Weighted
	held  atomic.Int64
	most  atomic.Int64
}

// NewCPU returns a pool of slots slots; slots < 1 means CPUSlots().
func NewCPU(slots int) *CPU {
	if slots < 1 {
		slots = CPUSlots()
	}
	return &CPU{slots: int64(slots), sem: semaphore.NewWeighted(int64(slots))}
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
	held := c.held.Add(1)
	for {
		most := c.most.Load()
		if held <= most || c.most.CompareAndSwap(most, held) {
			break
		}
	}
	var once atomic.Bool
	return func() {
		if once.CompareAndSwap(false, true) {
			c.held.Add(-1)
			c.sem.Release(1)
		}
	}, nil
}

// Slots returns the pool's size.
func (c *CPU) Slots() int { return int(c.slots) }

// Held returns the slots held now.
func (c *CPU) Held() int { return int(c.held.Load()) }

// MostHeld returns the most slots ever held at once.
func (c *CPU) MostHeld() int { return int(c.most.Load()) }
