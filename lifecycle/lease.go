package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/metatable"
	"github.com/timetabledb/timetable/storage"
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

// TableLease grants named leases through items of a table (timetable's
// meta table) written with conditional Updates, so that of several
// servers on one DynamoDB account only one runs the reconciler. It
// implements Leaser on any store; on Pebble one process owns the store
// and needs none.
//
// A lease is the item (pk "lease#NAME", sk "lease") with attributes owner
// and expires (Unix milliseconds). Acquire writes it on condition that
// the item does not exist, or its lease expired (expires before now), or
// owner holds it: the store evaluates the condition and the write
// atomically (on DynamoDB, attribute_not_exists(pk) OR expires <= :past
// OR owner = :me). Owners' clocks should agree to well within the TTL.
type TableLease struct {
	// Store holds the table, which must exist with timetable's key
	// schema.
	Store interface {
		Update(ctx context.Context, u storage.Update) error
	}
	Table string
	// Clock tells the time; the wall clock when nil.
	Clock clock.Clock
}

// Acquire takes or renews the lease name for owner for ttl, and reports
// whether owner holds it.
func (l TableLease) Acquire(ctx context.Context, name, owner string, ttl time.Duration) (bool, error) {
	clk := l.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	now := clk.Now().UnixMilli()
	free := storage.AnyOf(
		storage.NotExists(storage.PKAttr),
		storage.AtMost(leaseExpires, json.Number(strconv.FormatInt(now-1, 10))),
		storage.Equal(leaseOwner, owner),
	)
	ok, err := l.write(ctx, name, owner, now+ttl.Milliseconds(), free)
	if err != nil {
		return false, fmt.Errorf("acquire lease %q in table %q: %w", name, l.Table, err)
	}
	return ok, nil
}

// Release gives the lease name up if owner holds it: it writes the lease
// expired, on condition that owner holds it, so a lease another owner
// took in the meantime is left alone.
func (l TableLease) Release(ctx context.Context, name, owner string) error {
	if _, err := l.write(ctx, name, owner, 0, storage.Equal(leaseOwner, owner)); err != nil {
		return fmt.Errorf("release lease %q in table %q: %w", name, l.Table, err)
	}
	return nil // written, or not ours (any more)
}

// The attributes of a lease item.
const (
	leaseOwner   = "owner"
	leaseExpires = "expires"
)

// write sets the lease item of name to owner until expires (Unix
// milliseconds), on condition cond, and reports whether cond held.
func (l TableLease) write(ctx context.Context, name, owner string, expires int64, cond storage.Cond) (bool, error) {
	pk, sk := metatable.Lease(name)
	err := l.Store.Update(ctx, storage.Update{
		Table: l.Table, PK: pk, SK: sk,
		Conds: []storage.Cond{cond},
		Actions: []storage.Action{
			storage.Set(leaseOwner, owner),
			storage.Set(leaseExpires, json.Number(strconv.FormatInt(expires, 10))),
		},
	})
	if errors.Is(err, storage.ErrConditionFailed) {
		return false, nil
	}
	return err == nil, err
}
