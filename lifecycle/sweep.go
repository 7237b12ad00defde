package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// Capacity and table class changed behind the registry's back are found
// by a sweep: each cycle describes a few of the families' tables, in name
// order from where the last cycle stopped, as many as make every table
// seen within SweepPeriod at the pace cycles come, and at most MaxSweep. A
// table whose capacity or class differs from its entry's
// (registry.CapacityDrift) is planned from what the store says (Changed),
// so the tier's capacity and class are put back; when the store already
// has what the tier says, the registry learns it. A class change found
// counts among the table's class changes (registry.Entry.ClassChanges),
// as DynamoDB counts it: when none is left, the class found is recorded
// and kept until one is.
const (
	// SweepPeriod is how long the sweep takes to see every table.
	SweepPeriod = 24 * time.Hour
	// MaxSweep bounds the DescribeTable calls of one cycle's sweep.
	MaxSweep = 50
)

// sweepCount returns how many of total tables a cycle describes when
// elapsed has passed since the last one: total × elapsed / SweepPeriod,
// rounded up, at least 1 and at most MaxSweep. The first cycle counts as
// DefaultInterval after the last.
func sweepCount(total int, elapsed time.Duration) int {
	if total == 0 {
		return 0
	}
	if elapsed <= 0 {
		elapsed = DefaultInterval
	}
	n := int(math.Ceil(float64(total) * elapsed.Hours() / SweepPeriod.Hours()))
	return min(max(n, 1), MaxSweep, total)
}

// sweepOrder returns the indexes of the n tables after cursor in name
// order, wrapping round, and the new cursor.
func sweepOrder(names []string, cursor string, n int) ([]int, string) {
	idx := make([]int, len(names))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(names[a], names[b]) })
	start, _ := slices.BinarySearchFunc(idx, cursor, func(i int, c string) int {
		if names[i] <= c {
			return -1
		}
		return 1
	})
	var out []int
	for k := 0; k < n && k < len(idx); k++ {
		out = append(out, idx[(start+k)%len(idx)])
	}
	if len(out) == 0 {
		return nil, cursor
	}
	return out, names[out[len(out)-1]]
}

// sweep describes this cycle's share of the tables and marks those whose
// capacity or class changed behind the registry's back.
func (r *Reconciler) sweep(ctx context.Context, now time.Time, tables []Table) error {
	var names []string
	var candidates []int
	for i, t := range tables {
		if t.Drift == "" && t.Entry.State == registry.Active && t.Status == storage.StatusActive {
			names = append(names, t.Name)
			candidates = append(candidates, i)
		}
	}
	r.mu.Lock()
	elapsed := time.Duration(0)
	if !r.mu.swept.IsZero() {
		elapsed = now.Sub(r.mu.swept)
	}
	cursor := r.mu.sweepCursor
	r.mu.Unlock()
	order, next := sweepOrder(names, cursor, sweepCount(len(names), elapsed))
	for _, k := range order {
		t := &tables[candidates[k]]
		info, err := r.opts.Store.DescribeTable(ctx, t.Name)
		if errors.Is(err, storage.ErrTableNotFound) {
			continue // the next cycle's listing says it is gone
		}
		if err != nil {
			return fmt.Errorf("sweep: describe table %q: %w", t.Name, err)
		}
		if why := registry.CapacityDrift(t.Entry, info); why != "" {
			t.Drift, t.DriftReason, t.Capacity = Changed, why, info.Capacity
		}
	}
	r.mu.Lock()
	r.mu.swept, r.mu.sweepCursor = now, next
	r.mu.Unlock()
	return nil
}
