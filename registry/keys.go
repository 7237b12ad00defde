package registry

import (
	"time"
)

// MaxPeriod is the longest period a table may hold (a quarter of 92 days),
// which bounds how far before a range's start a table overlapping it may
// begin.
const MaxPeriod = 92 * 24 * time.Hour

// familyPK is the partition of a family's entries.
func familyPK(family string) string { return "registry#" + family }

// startKey is the sort-key prefix of the entries of tables whose periods
// start at t: RFC 3339 in UTC with whole seconds, which sorts as time does
// for the years 0 to 9999.
func startKey(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// entrySK is an entry's sort key.
func entrySK(start time.Time, name string) string { return startKey(start) + "#" + name }

// highSK is above the sort key of every entry whose period starts at t:
// "~" sorts after every character of a table name.
func highSK(t time.Time) string { return startKey(t) + "#~" }
