package api

// ActionReport is one action of the lifecycle manager and what became of
// it, as the admin API answers it, `timetable reconcile --format json`
// prints it and the Lambda function writes it (lifecycle.Report is this
// type).
type ActionReport struct {
	Action string `json:"action"`
	Family string `json:"family"`
	Table  string `json:"table"`
	// Period is the table's period, start/end in RFC 3339.
	Period string `json:"period"`
	// WriteMonth is "YYYY-MM", or absent without write-time grouping.
	WriteMonth string `json:"write_month,omitempty"`
	Tier       string `json:"tier"`
	// Billing, Read and Write are the capacity a create or an update
	// applies.
	Billing string `json:"billing,omitempty"`
	Read    int64  `json:"read,omitempty"`
	Write   int64  `json:"write,omitempty"`
	// Class is the table class a create or an update gives the table.
	Class  string `json:"class,omitempty"`
	Reason string `json:"reason"`
	// Result is "done", "dry-run", "deferred: <why>" or "failed: <why>".
	Result string `json:"result"`
}

// CycleReport is one cycle of the lifecycle manager (lifecycle.CycleReport
// is this type).
type CycleReport struct {
	// Start and End are RFC 3339.
	Start string `json:"start"`
	End   string `json:"end"`
	// Outcome is ok, failed, lease_held, error or interrupted.
	Outcome string `json:"outcome"`
	// Error is why a cycle did not end ok.
	Error   string         `json:"error,omitempty"`
	Actions []ActionReport `json:"actions"`
}

// LastCycle is the answer of GET /v1/admin/lifecycle.
type LastCycle struct {
	// LastCycle is null before the first cycle.
	LastCycle *CycleReport `json:"last_cycle"`
}

// Plan is the answer of GET /v1/admin/plan: every action a lifecycle
// cycle would take now, changing nothing.
type Plan struct {
	Actions []ActionReport `json:"actions"`
}
