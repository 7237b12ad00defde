package lifecycle

import (
	"context"
	"time"
)

// Leaser grants a named lease to one owner at a time, so that of several
// servers running the reconciler on one store only one acts.
type Leaser interface {
	// Acquire takes or renews the lease name for owner for ttl, and
	// reports whether owner holds it. It holds it when nobody did, when
	// the last holder's lease expired, or when owner held it already.
	Acquire(ctx context.Context, name, owner string, ttl time.Duration) (bool, error)
	// Release gives the lease up if owner holds it, so that the next
	// cycle, this server's or another's, need not wait for it to lapse.
	// Releasing a lease owner does not hold changes nothing.
	Release(ctx context.Context, name, owner string) error
}
