package agg

// Aggregation functions.
const (
	FnCount = "count" // events that have the field
	FnSum   = "sum"
	FnMin   = "min"
	FnMax   = "max"
	FnAvg   = "avg"
	FnFirst = "first" // the field's value in the bucket's earliest event
	FnLast  = "last"  // the field's value in the bucket's latest event
)
