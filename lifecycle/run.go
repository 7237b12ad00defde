package lifecycle

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// Run reconciles at once, then about every interval (DefaultInterval when
// zero) of the wall clock, each wait drawn at random within 20% of
// interval so that servers started together do not act together, until
// ctx ends. It returns when
// ctx ends and no cycle is running: the caller may then close the store.
// Errors are logged, never returned; a cycle that fails is simply the
// next cycle's work.
func (r *Reconciler) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultInterval
	}
	for {
		r.runOnce(ctx)
		t := time.NewTimer(jitter(interval))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

func (r *Reconciler) runOnce(ctx context.Context) {
	_, err := r.Reconcile(ctx, false)
	switch {
	case err == nil, ctx.Err() != nil:
	case errors.Is(err, ErrLeaseHeld):
		r.opts.Logger.Debug("lifecycle: another server holds the lease")
	default:
		r.opts.Logger.Error("lifecycle cycle", "err", err)
	}
}

// jitter returns d scaled by a random factor from 0.8 to 1.2.
func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}
