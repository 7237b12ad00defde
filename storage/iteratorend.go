package storage

// IteratorEnd is how an Iterator ended: the error that stopped it, or the
// limit of its query. A backend's iterator embeds it and sets its fields
// as it stops, which gives it Iterator's Err and Resume; every backend
// then answers them by the same rule.
type IteratorEnd struct {
	// Failure is the error that stopped the iteration; nil if none.
	Failure error
	// Limited is set when the query's limit stopped it before the end of
	// its range.
	Limited bool
	// ResumeAfter is the sort key of the last item examined, where a
	// query stopped by its limit goes on.
	ResumeAfter string
}

// Err returns the error that stopped the iteration, if any.
func (e *IteratorEnd) Err() error { return e.Failure }

// Resume says where a query stopped by its limit would go on: after the
// last item examined. It reports false after an error, and when the
// query read its range to the end.
func (e *IteratorEnd) Resume() (string, bool) {
	if e.Failure != nil || !e.Limited {
		return "", false
	}
	return e.ResumeAfter, true
}
