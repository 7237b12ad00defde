package registry

import (
	"time"
)

// MaxPeriod is the longest period a table may hold (a quarter of 92 days),
// which bounds how far before a range's start a table overlapping it may
// begin.
const MaxPeriod = 92 * 24 * time.Hour
