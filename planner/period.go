package planner

import (
	"fmt"
	"math"
)

// PartitionBytes is what one DynamoDB partition holds before it splits:
// 10 GB, which AWS counts in binary units (10 × 2^30 bytes).
const PartitionBytes = 10 << 30

// PartitionWriteUnits is the write capacity one partition serves.
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

// Partition is the arithmetic of the AWS guide's steps 2 and 3: how fast
// one partition fills.
type Partition struct {
	// Bytes is a partition's size limit, 10 × 2^30.
	Bytes int64 `json:"bytes"`
	// Headroom is the fraction of Bytes a period's data may fill.
	Headroom float64 `json:"headroom"`
	// UsableBytes is Bytes × Headroom.
	UsableBytes float64 `json:"usable_bytes"`
	// BytesPerHour is what one partition (one shard) receives per hour at
	// the average rate.
	BytesPerHour float64 `json:"bytes_per_hour"`
	// FillHours is how long one partition takes to reach Bytes.
	FillHours float64 `json:"fill_hours"`
	// UsableFillHours is how long it takes to reach UsableBytes; the
	// period is the longest that is no longer than this.
	UsableFillHours float64 `json:"usable_fill_hours"`
}

// Candidate is one period length considered.
type Candidate struct {
	// Period is the period's name: hour, 6h, 12h, day, week, month or
	// quarter.
	Period string `json:"period"`
	// Hours is the length of the period's longest instance.
	Hours float64 `json:"hours"`
	// PartitionBytes is what one partition receives in that time.
	PartitionBytes float64 `json:"partition_bytes"`
	// Fill is PartitionBytes as a fraction of the usable partition.
	Fill float64 `json:"fill"`
	// Fits reports whether Fill is at most 1.
	Fits bool `json:"fits"`
}

// layout is the outcome of the period and shard choice.
type layout struct {
	kind       periodKind
	shards     int
	peakShards int
	partition  Partition
	candidates []Candidate
}

// choose picks the shard count and the period for a stream of
// bytesPerSec on average whose peak needs peakUnits write units per
// second: shards for the peak at 1,000 write units a partition, then the
// longest period whose data fits one partition's usable bytes. When not
// even an hour fits, it raises the shard count until an hour does. That
// takes a headroom below 0.35: a partition written at its full 1,000 write
// units of at most 1 KB each receives at most 3.7 GB an hour, which fits
// 10 GiB with room to spare.
func choose(bytesPerSec, peakUnits, headroom float64) (layout, error) {
	usable := PartitionBytes * headroom
	l := layout{peakShards: max(1, int(math.Ceil(peakUnits/PartitionWriteUnits-fitTolerance)))}
	l.shards = l.peakShards
	fits := func(hours float64, shards int) bool {
		return hours*3600*bytesPerSec/float64(shards) <= usable*(1+fitTolerance)
	}
	if l.shards > MaxShards {
		return l, fmt.Errorf("%w: the peak needs %d shards at %d write units each, over the limit of %d", ErrTooFast, l.shards, PartitionWriteUnits, MaxShards)
	}
	if !fits(periodKinds[0].longest, l.shards) {
		need := int(math.Ceil(3600 * bytesPerSec / usable * (1 - fitTolerance)))
		if need > MaxShards {
			return l, fmt.Errorf("%w: an hour of data needs %d shards to fit %.2f GiB partitions, over the limit of %d", ErrTooFast, need, usable/(1<<30), MaxShards)
		}
		l.shards = need
	}
	perHour := 3600 * bytesPerSec / float64(l.shards)
	for _, k := range periodKinds {
		c := Candidate{
			Period:         k.name,
			Hours:          k.longest,
			PartitionBytes: k.longest * perHour,
			Fits:           fits(k.longest, l.shards),
		}
		c.Fill = c.PartitionBytes / usable
		if c.Fits {
			l.kind = k
		}
		l.candidates = append(l.candidates, c)
	}
	l.partition = Partition{
		Bytes:           PartitionBytes,
		Headroom:        headroom,
		UsableBytes:     usable,
		BytesPerHour:    perHour,
		FillHours:       PartitionBytes / perHour,
		UsableFillHours: usable / perHour,
	}
	return l, nil
}
