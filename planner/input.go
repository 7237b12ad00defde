package planner

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
)

// Defaults of Input, used where a field is zero.
const (
	// DefaultPKBytes is the assumed length of a partition key,
	// tenant#table#series#shard: a 12-byte tenant, a 12-byte logical
	// table, a 12-byte series, a one-digit shard and three separators.
	DefaultPKBytes = 40
	// SKBytes is the length of a row-layout sort key: an RFC 3339 time
	// with nine fractional digits (30 bytes), "#" and a 22-byte event id.
	SKBytes = 30 + 1 + 22
	// DefaultHeadroom is the fraction of a partition's 10 GiB a period's
	// data may fill: the guide's "little room for administrative
	// overhead".
	DefaultHeadroom = 0.95
	// DefaultPrebuild and DefaultGrace are the default family's: the next
	// table exists an hour before its period, and a table keeps its write
	// capacity 15 minutes past its period.
	DefaultPrebuild = time.Hour
	DefaultGrace    = 15 * time.Minute
	// DefaultHorizon is how far costs are projected when data is kept
	// forever: twelve billing months.
	DefaultHorizon = 12 * hoursPerMonth * time.Hour
	// DefaultFamily is the name of the family the plan recommends.
	DefaultFamily = "events"
)

// Input is what the planner needs to know about a workload. The zero value
// of every optional field means its default.
type Input struct {
	// The item size comes from exactly one of FieldBytes, ItemBytes and
	// Sample.
	//
	// FieldBytes is the size of an event's fields as DynamoDB counts them
	// (names plus values, see storage.ItemSize); the planner adds the key
	// attributes: "pk" and a PKBytes-long partition key, "sk" and a
	// SKBytes-long sort key.
	FieldBytes int
	// ItemBytes is the size of the whole stored item, keys included, as
	// the AWS guide's "180 bytes in DynamoDB".
	ItemBytes int
	// Sample holds the stored item sizes of sample events (the CLI
	// measures them with storage.ItemSize).
	Sample []int
	// PKBytes is the typical partition key length for FieldBytes;
	// 0 means DefaultPKBytes.
	PKBytes int

	// Rate is the average number of events written per second.
	Rate float64
	// Peak is the highest number of events written per second; 0 means
	// Rate. It may not be below Rate.
	Peak float64
	// Retention is how long a table is kept after its period ends; 0
	// keeps data forever.
	Retention time.Duration

	// Series is the number of series the events are spread over; a query
	// reads one series. 0 means 1.
	Series int
	// ReadsPerSec is the number of queries per second; 0 means no
	// planned read load, and the tiers get the AWS blog's read capacity.
	ReadsPerSec float64
	// ReadRange is the time range a typical query covers, ending now.
	// Required when ReadsPerSec is set.
	ReadRange time.Duration

	// Prices are the prices to cost the plan with; the zero value means
	// DefaultPrices().
	Prices Prices
	// Headroom is the fraction of a partition a period may fill; 0 means
	// DefaultHeadroom.
	Headroom float64
	// WriteTimeGrouping is "month" (the default, as in the default
	// family) or "none".
	WriteTimeGrouping string
	// Prebuild and Grace are the family's; 0 means DefaultPrebuild and
	// DefaultGrace.
	Prebuild, Grace time.Duration
	// Horizon is how far to project when Retention is 0, and the span
	// reserved capacity is weighed over (a term longer than it is not
	// offered); 0 means DefaultHorizon, a year.
	Horizon time.Duration
	// Family names the recommended family; "" means DefaultFamily.
	Family string
	// Period, when set, is the period to plan with (hour, 6h, 12h, day,
	// week, month or quarter) instead of the cheapest.
	Period string

	// Hot, Warm and Cold say how each tier is billed and stored. The zero
	// value lets the planner choose the billing (on demand, or provisioned
	// where the rate makes it cheaper) and takes the table class of the
	// lifecycle's default tiers: Standard for hot and warm, Standard-IA
	// for cold.
	Hot, Warm, Cold TierOptions

	// ArchiveAfter, when set, moves a table out of DynamoDB into an
	// archive on S3 this long after its period ends (the family's
	// retention, with ArchiveTarget as its archive); the archive is kept
	// until Retention, or forever when Retention is 0. It must be shorter
	// than Retention, and needs ArchiveTarget.
	ArchiveAfter time.Duration
	// ArchiveTarget is where the family's tables are archived
	// (s3://bucket/prefix, or file://DIR; see package config): required
	// with ArchiveAfter, refused without it, for a family that deletes
	// its tables at ArchiveAfter without archiving them would lose what
	// the plan keeps.
	ArchiveTarget string
	// ArchiveFormat is the archives' format, family.ArchiveParquet
	// (the default, which DefaultArchiveRatio is measured on) or
	// family.ArchiveNDJSON.
	ArchiveFormat family.ArchiveFormat
	// ArchiveRatio is the size of an archive over the item bytes it holds;
	// 0 means DefaultArchiveRatio.
	ArchiveRatio float64
	// RestoreGB is the GB of archives restored (imported from S3) a
	// month, priced with archiving; 0 restores nothing.
	RestoreGB float64

	// Layout is the item layout to plan with, LayoutRow or LayoutChunk;
	// "" prices both and recommends chunks where they save more than
	// half a percent and one unit of currency a month.
	Layout string
	// BatchEvents is how many events of one series a request writes at
	// once, which the chunk layout packs into one item: Telegraf's
	// batches hold ten readings of each series; 0 means 1, events one at
	// a time.
	BatchEvents float64
	// ChunkFixedBytes and ChunkEventBytes size a chunk item, as measured
	// on a sample; 0 means what follows from the row item (see
	// DefaultChunkExtraBytes).
	ChunkFixedBytes, ChunkEventBytes float64
	// ChunkWindow is a chunk's time window; 0 means
	// family.DefaultChunkWindow.
	ChunkWindow time.Duration
}

// TierOptions are the billing and the table class of one tier; "" lets
// the planner choose.
type TierOptions struct {
	// Billing is BillingProvisioned, BillingOnDemand or "" for the
	// cheaper of the two.
	Billing string
	// Class is storage.ClassStandard, storage.ClassInfrequentAccess or ""
	// for the lifecycle's default: Standard-IA for the cold tier,
	// Standard otherwise.
	Class storage.Class
}

// DefaultArchiveRatio is the archive bytes per item byte assumed when the
// input does not say, for archives in the Parquet format (package
// archive: gzip-compressed DynamoDB JSON lines and, beside them, Parquet).
// It is the sum of the two files for telemetry whose ids and field
// names repeat, each file compressing to a fraction of the item bytes,
// rounded up; NDJSON archives alone take about half of it. Data that
// compresses worse takes more: archive a sample, compare the archive's
// size with the table's, and give the ratio.
const DefaultArchiveRatio = 0.6

// Errors of Plan.
var (
	// ErrInvalidInput marks an input the planner cannot work with.
	ErrInvalidInput = errors.New("timetable: invalid plan input")
	// ErrItemTooLarge marks an item over DynamoDB's 400 KB item limit.
	ErrItemTooLarge = errors.New("timetable: item larger than DynamoDB's 400 KB limit")
	// ErrTooFast marks a rate that needs more shards than a family may
	// have.
	ErrTooFast = errors.New("timetable: rate needs more shards than a family may have")
)

// tierOptions returns the options of the three tiers, in tier order.
func (in Input) tierOptions() []TierOptions { return []TierOptions{in.Hot, in.Warm, in.Cold} }

// MaxShards is the most shards a family may have.
const MaxShards = 1000

// withDefaults returns the input with every zero optional field set.
func (in Input) withDefaults() Input {
	if in.PKBytes == 0 {
		in.PKBytes = DefaultPKBytes
	}
	if in.Peak == 0 {
		in.Peak = in.Rate
	}
	if in.Series == 0 {
		in.Series = 1
	}
	if in.Prices == (Prices{}) {
		in.Prices = DefaultPrices()
	}
	if in.Headroom == 0 {
		in.Headroom = DefaultHeadroom
	}
	if in.WriteTimeGrouping == "" {
		in.WriteTimeGrouping = "month"
	}
	if in.Prebuild == 0 {
		in.Prebuild = DefaultPrebuild
	}
	if in.Grace == 0 {
		in.Grace = DefaultGrace
	}
	if in.Horizon == 0 {
		in.Horizon = DefaultHorizon
	}
	if in.Family == "" {
		in.Family = DefaultFamily
	}
	if in.Cold.Class == "" {
		in.Cold.Class = storage.ClassInfrequentAccess
	}
	for _, t := range []*TierOptions{&in.Hot, &in.Warm} {
		if t.Class == "" {
			t.Class = storage.ClassStandard
		}
	}
	if in.ArchiveRatio == 0 {
		in.ArchiveRatio = DefaultArchiveRatio
	}
	if in.BatchEvents == 0 {
		in.BatchEvents = 1
	}
	if in.ChunkWindow == 0 {
		in.ChunkWindow = family.DefaultChunkWindow
	}
	if in.ArchiveAfter > 0 && in.ArchiveFormat == "" {
		in.ArchiveFormat = family.ArchiveParquet
	}
	return in
}

// validate reports what is wrong with an input whose defaults are set.
func (in Input) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidInput, fmt.Sprintf(format, args...))
	}
	sources := 0
	for _, set := range []bool{in.FieldBytes != 0, in.ItemBytes != 0, in.Sample != nil} {
		if set {
			sources++
		}
	}
	switch {
	case sources == 0:
		return bad("give the event size (field bytes, item bytes or a sample)")
	case sources > 1:
		return bad("give only one of field bytes, item bytes and a sample")
	case in.FieldBytes < 0 || in.ItemBytes < 0:
		return bad("event size must be positive")
	case in.Sample != nil && len(in.Sample) == 0:
		return bad("the sample holds no event")
	case in.PKBytes < 0:
		return bad("partition key length %d must be positive", in.PKBytes)
	}
	for i, n := range in.Sample {
		if n <= 0 {
			return bad("sample item %d has size %d", i, n)
		}
	}
	finite := func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
	switch {
	case !finite(in.Rate) || in.Rate <= 0:
		return bad("rate must be a positive number of events per second, not %v", in.Rate)
	case !finite(in.Peak) || in.Peak < 0:
		return bad("peak must be a positive number of events per second, not %v", in.Peak)
	case in.Peak < in.Rate:
		return bad("peak %v is below the average rate %v", in.Peak, in.Rate)
	case in.Retention < 0:
		return bad("retention %v is negative", in.Retention)
	case in.Series < 0:
		return bad("series count %d is negative", in.Series)
	case !finite(in.ReadsPerSec) || in.ReadsPerSec < 0:
		return bad("reads per second %v is negative", in.ReadsPerSec)
	case in.ReadRange < 0:
		return bad("read range %v is negative", in.ReadRange)
	case in.ReadsPerSec > 0 && in.ReadRange == 0:
		return bad("a read load needs the time range a query covers")
	case !finite(in.Headroom) || in.Headroom <= 0 || in.Headroom > 1:
		return bad("headroom %v must be above 0 and at most 1", in.Headroom)
	case in.WriteTimeGrouping != "month" && in.WriteTimeGrouping != "none":
		return bad("write-time grouping %q must be month or none", in.WriteTimeGrouping)
	case in.Prebuild < 0 || in.Grace < 0 || in.Horizon < 0:
		return bad("prebuild, grace and horizon cannot be negative")
	case in.Period != "" && periodIndex(in.Period) < 0:
		return bad("period %q must be hour, 6h, 12h, day, week, month or quarter", in.Period)
	case in.ArchiveAfter < 0:
		return bad("archive after %v is negative", in.ArchiveAfter)
	case in.ArchiveAfter > 0 && in.Retention > 0 && in.ArchiveAfter >= in.Retention:
		return bad("archive after %v must be shorter than the retention %v", in.ArchiveAfter, in.Retention)
	case in.ArchiveAfter > 0 && in.ArchiveTarget == "":
		return bad("archive after %s needs an archive target (s3://bucket/prefix): without one the tables would be deleted, not archived, %[1]s after their period", FormatDuration(in.ArchiveAfter))
	case in.ArchiveAfter == 0 && in.ArchiveTarget != "":
		return bad("archive target %q needs the time tables are archived after", in.ArchiveTarget)
	case in.ArchiveAfter == 0 && in.ArchiveFormat != "":
		return bad("archive format %q needs the time tables are archived after", in.ArchiveFormat)
	case in.ArchiveFormat != "" && in.ArchiveFormat != family.ArchiveNDJSON && in.ArchiveFormat != family.ArchiveParquet:
		return bad("archive format %q must be ndjson or parquet", in.ArchiveFormat)
	case !finite(in.ArchiveRatio) || in.ArchiveRatio < 0:
		return bad("archive ratio %v must be positive", in.ArchiveRatio)
	case !finite(in.RestoreGB) || in.RestoreGB < 0:
		return bad("restored GB %v must be positive", in.RestoreGB)
	case in.RestoreGB > 0 && in.ArchiveAfter == 0:
		return bad("restores need archives: give the time tables are archived after")
	case in.Layout != "" && in.Layout != LayoutRow && in.Layout != LayoutChunk:
		return bad("layout %q must be row or chunk", in.Layout)
	case !finite(in.BatchEvents) || in.BatchEvents < 1:
		return bad("events a batch %v must be 1 or more", in.BatchEvents)
	case !finite(in.ChunkFixedBytes) || in.ChunkFixedBytes < 0 || in.ChunkFixedBytes >= storage.MaxItemSize:
		return bad("chunk item bytes %v must be positive and under %d", in.ChunkFixedBytes, storage.MaxItemSize)
	case !finite(in.ChunkEventBytes) || in.ChunkEventBytes < 0:
		return bad("chunk bytes an event %v must be positive", in.ChunkEventBytes)
	case in.ChunkWindow < 0 || (24*time.Hour)%in.ChunkWindow != 0:
		return bad("chunk window %v must divide a day", in.ChunkWindow)
	}
	for _, t := range []struct {
		name string
		o    TierOptions
	}{{"hot", in.Hot}, {"warm", in.Warm}, {"cold", in.Cold}} {
		switch {
		case t.o.Billing != "" && t.o.Billing != BillingProvisioned && t.o.Billing != BillingOnDemand:
			return bad("%s tier billing %q must be provisioned or on_demand", t.name, t.o.Billing)
		case t.o.Class != storage.ClassStandard && t.o.Class != storage.ClassInfrequentAccess:
			return bad("%s tier class %q must be %s or %s", t.name, t.o.Class, storage.ClassStandard, storage.ClassInfrequentAccess)
		}
	}
	return in.Prices.Validate()
}

// itemSizes returns the key bytes and the item sizes the input describes:
// one size, or the sample's.
func (in Input) itemSizes() (keyBytes int, sizes []int) {
	keyBytes = len(storage.PKAttr) + in.PKBytes + len(storage.SKAttr) + SKBytes
	switch {
	case in.Sample != nil:
		return 0, in.Sample
	case in.ItemBytes != 0:
		return 0, []int{in.ItemBytes}
	}
	return keyBytes, []int{keyBytes + in.FieldBytes}
}
