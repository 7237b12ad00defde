package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
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
type queryBudget struct {
	sem     *semaphore.Weighted
	size    int64
	wait    time.Duration
	metrics *metrics
}

func newQueryBudget(size int64, wait time.Duration, m *metrics) *queryBudget {
	return &queryBudget{sem: semaphore.NewWeighted(size), size: size, wait: wait, metrics: m}
}

// take waits up to the budget's wait for n partitions (at most the whole
// budget), and returns the function that gives them back.
func (b *queryBudget) take(ctx context.Context, n int64) (release func(), err error) {
	n = min(n, b.size)
	if n <= 0 {
		return func() {}, nil
	}
	wctx, cancel := context.WithTimeout(ctx, b.wait)
	defer cancel()
	if err := b.sem.Acquire(wctx, n); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		b.metrics.queryBusy.Inc()
		return nil, fmt.Errorf("%w: no room for %d partitions within %s: reads of every series hold the budget of %d (Options.MaxQueryPartitions)", ErrBusy, n, b.wait, b.size)
	}
	b.metrics.queryPartitions.Add(float64(n))
	return sync.OnceFunc(func() {
		b.metrics.queryPartitions.Sub(float64(n))
		b.sem.Release(n)
	}), nil
}
