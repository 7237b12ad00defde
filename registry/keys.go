package registry

import (
	"time"
)

// MaxPeriod is the longest period a table may hold (a quarter of 92 days),
// which bounds how far before a range's start a table overlapping it may
// begin.
const MaxPeriod = 92 * 24 * time.Hour

// EarliestStart returns the earliest start of a period that can overlap
// a range starting at from: MaxPeriod before it, or the zero time when
// that would overflow.
func EarliestStart(from time.Time) time.Time {
	low := from.Add(-MaxPeriod)
	if low.After(from) { // overflow near the zero time
		return time.Time{}
	}
	return low
}
