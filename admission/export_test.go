package admission

import (
	"context"
	"time"
)

// Held returns the slots held now (timetable_cpu_slots_held).
func (c *CPU) Held() int { return int(c.held.Load()) }

// Taken returns the slots taken since the pool was made
// (timetable_cpu_slots_taken_total).
func (c *CPU) Taken() int { return int(c.taken.Load()) }

// SetNow makes the pool read the time from now.
func (c *CPU) SetNow(now func() time.Time) { c.now = now }

// TryAcquire is Acquire without waiting: it takes n now or returns
// the error Acquire would once its context ended.
func (b *Budget) TryAcquire(tenant string, n int64) error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return b.Acquire(ctx, tenant, n)
}

// TryResize is Resize without waiting.
func (h *Hold) TryResize(n int64) error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return h.Resize(ctx, n)
}
