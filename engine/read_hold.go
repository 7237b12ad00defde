package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/timetabledb/timetable/admission"
)

// QueryPartitionBytes is the memory one partition of the query budget
// stands for: what a read of every series holds for one partition, its
// page and state. Reads that hold memory other than partitions (the
// answers InfluxQL builds) take one partition of the budget for each
// QueryPartitionBytes, so that one budget bounds every read path.
const QueryPartitionBytes = 2 << 10

// QueryHold is memory a request's reads hold of the query budget other
// than the partitions of its reads of every series: counted in bytes,
// taken in partitions of QueryPartitionBytes, under the same tenant cap
// (WithTenantQueryPartitions) and the same wait (Options.QueryBudgetWait)
// as those reads. It is used by one goroutine at a time.
type QueryHold struct {
	budget *queryBudget
	tenant string
	// most is the tenant's cap, or the budget's size without one.
	most  int64
	parts int64
}

// QueryHold returns an empty hold of tenant on the query budget, under
// the tenant cap ctx carries (WithTenantQueryPartitions). The caller
// gives it back with Release.
func (db *DB) QueryHold(ctx context.Context, tenant string) *QueryHold {
	most := tenantPartitions(ctx)
	if most <= 0 || most > db.budget.size {
		most = db.budget.size
	}
	return &QueryHold{budget: db.budget, tenant: tenant, most: most}
}

// partitions is bytes in partitions of the budget, rounded up, without
// overflow however many the bytes.
func partitions(bytes int64) int64 {
	if bytes <= 0 {
		return 0
	}
	return (bytes-1)/QueryPartitionBytes + 1
}

// Most returns the most bytes the hold may hold: the tenant's cap, or
// the whole budget.
func (h *QueryHold) Most() int64 { return h.most * QueryPartitionBytes }

// Fits returns nil when n bytes fit the hold's cap, else a
// *admission.LimitError, Never set, naming max_query_partitions: no
// wait would let them in.
func (h *QueryHold) Fits(n int64) error {
	if partitions(n) > h.most {
		return &admission.LimitError{Limit: "max_query_partitions", Value: float64(h.most), Never: true}
	}
	return nil
}

// Resize makes the hold n bytes: it takes the partitions more, waiting up
// to Options.QueryBudgetWait as reads of every series do, or gives back
// the excess at once. Past the cap it fails as Fits does; within it,
// once it has waited, with a *admission.LimitError naming
// max_query_partitions when the tenant's other reads hold its cap, or
// with ErrBusy when the whole budget is held. A failed Resize holds what
// it held.
func (h *QueryHold) Resize(ctx context.Context, n int64) error {
	if err := h.Fits(n); err != nil {
		return err
	}
	want := partitions(n)
	switch {
	case want > h.parts:
		more := want - h.parts
		wctx, cancel := context.WithTimeout(ctx, h.budget.wait)
		defer cancel()
		if err := h.budget.budget.AcquireWithin(wctx, h.tenant, more, h.most); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, admission.ErrTenantShare) {
				return &admission.LimitError{Limit: "max_query_partitions", Value: float64(h.most), RetryAfter: h.budget.wait}
			}
			h.budget.metrics.queryBusy.Inc()
			return fmt.Errorf("%w: no room for %d partitions within %s: reads hold the budget of %d (Options.MaxQueryPartitions)", ErrBusy, more, h.budget.wait, h.budget.size)
		}
		h.budget.metrics.queryPartitions.Add(float64(more))
	case want < h.parts:
		less := h.parts - want
		h.budget.budget.Release(h.tenant, less)
		h.budget.metrics.queryPartitions.Sub(float64(less))
	}
	h.parts = want
	return nil
}

// Held returns the partitions the hold holds.
func (h *QueryHold) Held() int64 { return h.parts }

// Release gives everything back. It is safe to call twice.
func (h *QueryHold) Release() {
	_ = h.Resize(context.Background(), 0)
}
