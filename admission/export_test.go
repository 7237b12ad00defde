package admission

import (
	"context"
	"time"
)

// SetNow makes the pool read the time from now.
func (c *CPU) SetNow(now func() time.Time) { c.now = now }

// TryAcquire is Acquire without waiting: it takes n now or returns
// the error Acquire would once its context ended.
func (b *Budget) TryAcquire(tenant string, n int64) error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return b.Acquire(ctx, tenant, n)
}
