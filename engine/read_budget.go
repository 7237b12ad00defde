package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/timetabledb/timetable/admission"
)

// queryBudget bounds the partitions that reads of every series of a
// logical table hold at once, across all of a DB's queries and
// aggregates: a partition is one series' shard in one physical table,
// and each holds its next events in memory. Reads of one series take
// nothing from it, so they are served whatever the reads of every series
// do.
//
// A read takes its share before it opens a partition and gives it back
// when its merge is closed. One that needs more than the whole budget
// takes the whole budget, and so runs alone. One that finds no room
// within the wait fails with ErrBusy, which a retry may cure.
//
// A tenant holds at most the partitions its context allows
// (WithTenantQueryPartitions), across its reads: one over that, once it
// has waited, fails with a *admission.LimitError naming
// max_query_partitions, and one that needs more than that alone runs
// once the tenant's other reads have given theirs back.
type queryBudget struct {
	budget  *admission.Budget
	size    int64
	wait    time.Duration
	metrics *metrics
}

func newQueryBudget(size int64, wait time.Duration, m *metrics) *queryBudget {
	return &queryBudget{
		budget: admission.NewBudget("query partitions (Options.MaxQueryPartitions)", size, 1),
		size:   size, wait: wait, metrics: m,
	}
}

// tenantPartitionsKey is the context key of WithTenantQueryPartitions.
type tenantPartitionsKey struct{}

// WithTenantQueryPartitions returns a context under which a tenant's
// reads of every series hold at most most partitions of the query budget
// at once, across all its reads (most zero or less: no cap but the
// budget's size). The server sets it from the tenant's limits
// (tenant.Limits.MaxQueryPartitions).
func WithTenantQueryPartitions(ctx context.Context, most int64) context.Context {
	return context.WithValue(ctx, tenantPartitionsKey{}, most)
}

// tenantPartitions returns the cap WithTenantQueryPartitions set, or 0.
func tenantPartitions(ctx context.Context) int64 {
	most, _ := ctx.Value(tenantPartitionsKey{}).(int64)
	return most
}

// reserve waits up to the budget's wait for n partitions (at most the whole
// budget) for tenant, and returns the function that gives them back.
func (b *queryBudget) reserve(ctx context.Context, tenant string, n int64) (release func(), err error) {
	n = min(n, b.size)
	if n <= 0 {
		return func() {}, nil
	}
	most := tenantPartitions(ctx)
	wctx, cancel := context.WithTimeout(ctx, b.wait)
	defer cancel()
	if err := b.budget.AcquireWithin(wctx, tenant, n, most); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, admission.ErrTenantShare) {
			return nil, &admission.LimitError{Limit: "max_query_partitions", Value: float64(most), RetryAfter: b.wait}
		}
		b.metrics.queryBusy.Inc()
		return nil, fmt.Errorf("%w: no room for %d partitions within %s: reads of every series hold the budget of %d (Options.MaxQueryPartitions)", ErrBusy, n, b.wait, b.size)
	}
	b.metrics.queryPartitions.Add(float64(n))
	return sync.OnceFunc(func() {
		b.metrics.queryPartitions.Sub(float64(n))
		b.budget.Release(tenant, n)
	}), nil
}

// QueryPartitions returns the partitions of the query budget that a
// tenant's reads hold now, and the budget's size.
func (db *DB) QueryPartitions(tenant string) (held, size int64) {
	_, held = db.budget.budget.Used(tenant)
	return held, db.budget.size
}
