package planner

import (
	"fmt"
	"math"
)

// PartitionBytes is the 10 GB (10 × 2^30 bytes) an item collection may
// hold: the items of one partition key value. The limit binds only
// tables with local secondary indexes, which timetable's tables do not
// have; the developer guide's advice to size periods so a partition key
// stays under it dates from before April 2020, when the guide dropped it.
// The plan reports how long a partition key takes to reach it, for
// reference, and chooses the period on cost and table count instead.
const PartitionBytes = 10 << 30

// PartitionWriteUnits is the write capacity one partition serves, and so
// the most one partition key value can take.
const PartitionWriteUnits = 1000

// hoursPerMonth is AWS's billing month.
const hoursPerMonth = 730

// fitTolerance lets a period that fills a partition exactly, up to float
// rounding, count as fitting.
const fitTolerance = 1e-9

// periodKind is one period length a family can have.
type periodKind struct {
	name string
	// longest is the longest instance in hours (a 31-day month, a 92-day
	// quarter): a period fits only if its longest instance does.
	longest float64
	// average is the mean length in hours, for counting tables and
	// capacity-hours over time.
	average float64
	// splits is the mean number of extra tables a period gets from
	// write-time grouping by month, for data written on time: periods up
	// to a day and months never straddle a month boundary; a week does in
	// 6 of 7 of the weeks that hold one (168/730 × 6/7); a quarter always
	// spans three write months.
	splits float64
}

// periodKinds are the period lengths the planner chooses from, shortest
// first; names are spelled as configuration files spell them.
var periodKinds = []periodKind{
	{"hour", 1, 1, 0},
	{"6h", 6, 6, 0},
	{"12h", 12, 12, 0},
	{"day", 24, 24, 0},
	{"week", 168, 168, 168.0 / hoursPerMonth * 6 / 7},
	{"month", 31 * 24, hoursPerMonth, 0},
	{"quarter", 92 * 24, 3 * hoursPerMonth, 2},
}

// periodIndex returns the index of the named period kind, or -1.
func periodIndex(name string) int {
	for i, k := range periodKinds {
		if k.name == name {
			return i
		}
	}
	return -1
}

// Partition is how fast one partition key value (a series' shard) fills:
// the arithmetic of the guide's old steps 2 and 3, kept for reference.
type Partition struct {
	// Bytes is the item-collection limit, 10 × 2^30.
	Bytes int64 `json:"bytes"`
	// Headroom is the fraction of Bytes the guide's old rule let a
	// period's data fill.
	Headroom float64 `json:"headroom"`
	// UsableBytes is Bytes × Headroom.
	UsableBytes float64 `json:"usable_bytes"`
	// BytesPerHour is what one partition key value (one shard of one
	// series) receives per hour at the average rate.
	BytesPerHour float64 `json:"bytes_per_hour"`
	// FillHours is how long one partition key value takes to reach
	// Bytes.
	FillHours float64 `json:"fill_hours"`
	// UsableFillHours is how long it takes to reach UsableBytes.
	UsableFillHours float64 `json:"usable_fill_hours"`
}

// Candidate is one period length considered.
type Candidate struct {
	// Period is the period's name: hour, 6h, 12h, day, week, month or
	// quarter.
	Period string `json:"period"`
	// Hours is the length of the period's longest instance.
	Hours float64 `json:"hours"`
	// PartitionBytes is what one partition key value receives in that
	// time, and Fill that as a fraction of the usable 10 GiB: the guide's
	// old rule, which binds only with local secondary indexes.
	PartitionBytes float64 `json:"partition_bytes"`
	Fill           float64 `json:"fill"`
	// Tables is the most tables alive with this period.
	Tables int `json:"tables"`
	// MonthlyCost is the recommended bill with this period.
	MonthlyCost float64 `json:"monthly_cost"`
	// WithinQuota reports whether Tables stays under 80% of TableQuota.
	WithinQuota bool `json:"within_quota"`
}

// shards returns the shards a family needs: a partition key value (one
// series' shard) takes at most PartitionWriteUnits, so the busiest series'
// peak is spread over enough shards. Series are assumed equally busy: the
// peak per series is the peak over Series.
func shards(peakUnits float64, series int) (int, error) {
	n := max(1, int(math.Ceil(peakUnits/float64(series)/PartitionWriteUnits-fitTolerance)))
	if n > MaxShards {
		return n, fmt.Errorf("%w: the peak of a series needs %d shards at %d write units each, over the limit of %d", ErrTooFast, n, PartitionWriteUnits, MaxShards)
	}
	return n, nil
}

// partitionFill returns how fast one partition key value fills.
func partitionFill(bytesPerSec float64, series, shards int, headroom float64) Partition {
	perHour := 3600 * bytesPerSec / float64(series) / float64(shards)
	usable := PartitionBytes * headroom
	return Partition{
		Bytes:           PartitionBytes,
		Headroom:        headroom,
		UsableBytes:     usable,
		BytesPerHour:    perHour,
		FillHours:       PartitionBytes / perHour,
		UsableFillHours: usable / perHour,
	}
}

// cheapestTolerance and cheapestSlack let a longer period win over a
// cheaper shorter one that saves less than this fraction of the bill plus
// one unit of currency a month: fewer tables for next to nothing.
const (
	cheapestTolerance = 0.005
	cheapestSlack     = 1.0
)

// choosePeriod returns the index of the recommended candidate: the
// cheapest of those within 80% of the table quota, a longer one winning
// when it costs at most cheapestTolerance and cheapestSlack more; when none is within the
// quota, the one with the fewest tables.
func choosePeriod(cs []Candidate) int {
	low := math.Inf(1)
	for _, c := range cs {
		if c.WithinQuota {
			low = math.Min(low, c.MonthlyCost)
		}
	}
	for i := len(cs) - 1; i >= 0; i-- {
		if cs[i].WithinQuota && cs[i].MonthlyCost <= low*(1+cheapestTolerance)+cheapestSlack {
			return i
		}
	}
	fewest := 0
	for i, c := range cs {
		if c.Tables < cs[fewest].Tables {
			fewest = i
		}
	}
	return fewest
}
