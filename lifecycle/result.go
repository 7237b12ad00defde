package lifecycle

import (
	"context"
	"errors"
	"time"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// Outcome is what became of an action.
type Outcome string

// Outcomes.
const (
	// Done: the action was applied (or found applied already).
	Done Outcome = "done"
	// DryRun: the action was planned and not applied.
	DryRun Outcome = "dry-run"
	// Deferred: the store refused the action for now, throttled it, or
	// could not be reached; it is planned again on the next cycle.
	Deferred Outcome = "deferred"
	// Failed: the action failed for another reason; it is planned again on
	// the next cycle.
	Failed Outcome = "failed"
)

// Result is an action and what became of it.
type Result struct {
	Action
	Outcome Outcome
	// Err is why the action was deferred or failed; for an action done,
	// what of it the store did not do (a table class on a store that
	// ignores classes), or nil.
	Err error
}

// String returns the outcome as reports write it: "done", "dry-run",
// "deferred: <why>" or "failed: <why>".
func (r Result) String() string {
	if r.Err == nil {
		return string(r.Outcome)
	}
	return string(r.Outcome) + ": " + r.Err.Error()
}

// ErrActionsFailed is returned by Reconcile, with the results, when an
// action failed for another reason than a refusal by the store.
var ErrActionsFailed = errors.New("timetable: lifecycle actions failed")

// ErrLeaseHeld is returned by Reconcile when another owner holds the
// lease: this reconciler did nothing.
var ErrLeaseHeld = errors.New("timetable: lifecycle lease held by another server")

// outcomeOf classifies an action's error.
func outcomeOf(err error) Outcome {
	switch {
	case err == nil, errors.Is(err, errClassIgnored):
		return Done
	case errors.Is(err, storage.ErrTableQuota):
		// Waiting does not cure it: the cycle fails, loudly.
		return Failed
	case errors.Is(err, storage.ErrRefused), errors.Is(err, storage.ErrThrottled), errors.Is(err, storage.ErrUnavailable):
		// The store declined or could not be reached: the next cycle
		// plans the action again, and nothing was harmed.
		return Deferred
	case errors.Is(err, ErrFenceSettling), errors.Is(err, ErrTableBusy):
		// The table waits for its fence to settle, or for another
		// reconciler's archive or delete of it.
		return Deferred
	case errors.Is(err, registry.ErrStale):
		// The registry entry changed since the plan read it (another
		// reconciler, or a server making the table, wrote it): the
		// next cycle plans from what it says now.
		return Deferred
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, ErrLeaseLost):
		// A long action (an archive) stopped before its deadline, or
		// when its lease was lost, and kept its checkpoint: the next
		// cycle resumes it.
		return Deferred
	}
	return Failed
}

// Report is a result as `timetable reconcile --format json`, the Lambda
// handler and the admin API write it: the HTTP API's.
type Report = api.ActionReport

// Report returns the result as reports write it.
func (r Result) Report() Report {
	rep := Report{
		Action: string(r.Kind),
		Family: r.Family,
		Table:  r.Table,
		Period: r.Ref.Period.Start.UTC().Format(time.RFC3339) + "/" + r.Ref.Period.End.UTC().Format(time.RFC3339),
		Tier:   r.Tier,
		Reason: r.Reason,
		Result: r.String(),
	}
	if !r.Ref.WriteMonth.IsZero() {
		rep.WriteMonth = r.Ref.WriteMonth.String()
	}
	switch r.Kind {
	case Create, UpdateBilling, UpdateCapacity:
		rep.Billing, rep.Read, rep.Write = string(r.Capacity.Billing), r.Capacity.Read, r.Capacity.Write
		rep.Class = string(r.Capacity.Normal().Class)
	}
	return rep
}

// Reports returns the reports of results, never nil.
func Reports(results []Result) []Report {
	out := make([]Report, 0, len(results))
	for _, r := range results {
		out = append(out, r.Report())
	}
	return out
}
