package lifecycle

import (
	"context"
	"time"

	"github.com/timetabledb/timetable/api"
)

// Outcomes of a cycle, as Cycle.Outcome and the result label of
// timetable_lifecycle_cycles_total spell them.
const (
	// CycleOK: every action was done or deferred.
	CycleOK = "ok"
	// CycleFailed: an action failed (ErrActionsFailed).
	CycleFailed = "failed"
	// CycleLeaseHeld: another server held the lease; nothing was done.
	CycleLeaseHeld = "lease_held"
	// CycleError: the cycle stopped before it acted (the registry or
	// the store could not be read, the lease could not be asked for).
	CycleError = "error"
	// CycleInterrupted: the cycle's context ended while it acted.
	CycleInterrupted = "interrupted"
)

// Cycle is what one reconcile cycle did, as LastCycle keeps it.
type Cycle struct {
	Start, End time.Time
	// Outcome is one of the Cycle… constants.
	Outcome string
	// Err is why a cycle did not end ok.
	Err error
	// Results are the actions the cycle took, with what became of each.
	Results []Result
}

// CycleReport is a Cycle as the admin API answers it: the HTTP API's.
type CycleReport = api.CycleReport

// Report returns the cycle as the admin API answers it.
func (c Cycle) Report() CycleReport {
	rep := CycleReport{
		Start:   c.Start.UTC().Format(time.RFC3339Nano),
		End:     c.End.UTC().Format(time.RFC3339Nano),
		Outcome: c.Outcome,
		Actions: Reports(c.Results),
	}
	if c.Err != nil {
		rep.Error = c.Err.Error()
	}
	return rep
}

// record keeps c as the last cycle.
func (r *Reconciler) record(c Cycle) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.last, r.mu.ran = c, true
}

// LastCycle returns the last cycle that was not a dry run, lease held
// by another server included, and false before the first.
func (r *Reconciler) LastCycle() (Cycle, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.last, r.mu.ran
}

// DryRun plans a cycle at the clock's time and returns every action it
// would take, changing nothing: Reconcile(ctx, true).
func (r *Reconciler) DryRun(ctx context.Context) ([]Result, error) {
	return r.Reconcile(ctx, true)
}
