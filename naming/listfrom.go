package naming

import (
	"strings"
	"time"
)

// ListFrom returns a string to pass to ListTables as its exclusive start
// (DynamoDB's ExclusiveStartTableName) so that the listing begins at, or a
// little before, the first of n's tables whose period could contain t or
// any later time, and skips none of them. Tables of earlier periods may
// come first: callers still parse every name and check its period.
//
// Range names start at the period's 13-digit start, which is itself a
// proper prefix of every name of that period. Date names with write-time
// grouping start at the period's date part, likewise; without it, at the
// name of the period before, which is excluded. Where the order of names
// does not follow time (a period before the epoch in range names, years
// outside 0000 to 9999 in date names), ListFrom returns the prefix, or ""
// when the prefix is shorter than a table name, so that listing starts at
// the family's first table. n must be valid; ListFrom panics on an invalid
// granularity.
func (n Namer) ListFrom(t time.Time) string {
	p := n.Granularity.Of(t)
	if n.Scheme == Range {
		ms := p.Start.UnixMilli()
		if ms < 0 || checkRangePeriod(p) != "" {
			return n.floor()
		}
		var b strings.Builder
		b.WriteString(n.Prefix)
		appendMs(&b, ms)
		return b.String()
	}
	if checkDatePeriod(p) != "" {
		return n.floor()
	}
	if n.WriteTimeGrouping {
		return n.Prefix + n.formatDate(p.Start)
	}
	prev := n.Granularity.Prev(p)
	if checkDatePeriod(prev) != "" {
		return n.floor()
	}
	return n.Prefix + n.formatDate(prev.Start)
}

// floor returns an exclusive start that sorts before every name of n.
func (n Namer) floor() string {
	if len(n.Prefix) < MinTableNameLen {
		return ""
	}
	return n.Prefix
}
