package planner

import (
	"math"

	"github.com/timetabledb/timetable/storage"
)

// Quotas the plan warns about.
const (
	// TableQuota is DynamoDB's default quota of tables per account and
	// region, an adjustable (soft) quota: AWS raises it on request.
	TableQuota = storage.DefaultTableQuota
	// TableHardQuota is the most tables per account and region AWS
	// raises TableQuota to on request: 10,000.
	TableHardQuota = 10000
	// FineoTableLimit is the per-region table limit DynamoDB had when
	// Fineo chose weekly tables.
	FineoTableLimit = 256
	// TableWriteQuota is DynamoDB's default quota of provisioned write
	// capacity units per table.
	TableWriteQuota = 40000
)

// fleet models the tables of one family in steady operation, counting in
// hours. A table is created Prebuild before its period starts, is hot
// through its period and Grace after it, then takes each later tier at
// its age (counted from the period's start, plus Grace, as the lifecycle
// manager does), and is deleted Retention after its period ends. Tables
// start one per period, so by Little's law the mean number of tables in
// an age band is the band's length divided by the period.
type fleet struct {
	// period is the mean period length.
	period float64
	// perPeriod is the mean number of tables per period: 1, plus the
	// splits of write-time grouping.
	perPeriod float64
	prebuild  float64
	// lifetime is a table's mean life from creation to deletion, +Inf
	// when data is kept forever; worstLifetime is the longest.
	lifetime, worstLifetime float64
	// starts holds, per tier, when a table enters it, from creation.
	starts []float64
	// kept is how long data is kept after its period ends, archives
	// included: +Inf when forever. archived reports whether tables leave
	// DynamoDB for an archive before then.
	kept     float64
	archived bool
}

// newFleet models the tables of a period kind under the input's policy.
// With write-time grouping by month, a table is deleted only when its
// write month, too, is past retention: a table of a period shorter than a
// month lives on until its month ends, (730 − period)/2 hours more on
// average and up to (744 − period) hours more.
func newFleet(in Input, k periodKind, tierAges []int) fleet {
	f := fleet{
		period:    k.average,
		perPeriod: 1,
		prebuild:  in.Prebuild.Hours(),
		lifetime:  math.Inf(1),
	}
	f.worstLifetime = f.lifetime
	grouping := in.WriteTimeGrouping == "month"
	if grouping {
		f.perPeriod += k.splits
	}
	f.kept = math.Inf(1)
	if in.Retention > 0 {
		f.kept = in.Retention.Hours()
	}
	inDynamo := in.Retention
	if in.ArchiveAfter > 0 {
		inDynamo, f.archived = in.ArchiveAfter, true
	}
	if inDynamo > 0 {
		base := f.prebuild + k.average + inDynamo.Hours()
		f.lifetime, f.worstLifetime = base, base
		if grouping && k.longest < 31*24 {
			f.lifetime += (hoursPerMonth - k.average) / 2
			f.worstLifetime += 31*24 - k.average
		}
	}
	for i, age := range tierAges {
		start := 0.0
		if i > 0 {
			start = f.prebuild + float64(age)*k.average + in.Grace.Hours()
		}
		f.starts = append(f.starts, start)
	}
	return f
}

// existed returns how long the oldest table has existed at elapsed hours
// into the deployment (counted from the start of the first period), capped
// at a table's lifetime.
func (f fleet) existed(elapsed float64) float64 {
	return math.Min(elapsed+f.prebuild, f.lifetime)
}

// tables returns the mean number of tables alive at elapsed hours.
func (f fleet) tables(elapsed float64) float64 {
	return f.existed(elapsed) / f.period * f.perPeriod
}

// inTier returns the mean number of tables in tier i at elapsed hours.
func (f fleet) inTier(i int, elapsed float64) float64 {
	end := math.Inf(1)
	if i+1 < len(f.starts) {
		end = f.starts[i+1]
	}
	span := math.Max(0, math.Min(end, f.existed(elapsed))-f.starts[i])
	extra := f.perPeriod - 1
	switch {
	case extra == 0 || i > 1:
		return span / f.period * f.perPeriod
	case i == 0:
		// A period that write-time grouping splits has a table for
		// each write month, and each of them but the last goes warm as
		// its month ends (family.TierStart): together they are hot for
		// one period, and the prebuild and grace of each.
		return span/f.period + extra*math.Max(0, span-f.period)/f.period
	}
	// ... and warm for half a period longer on average.
	return span/f.period*f.perPeriod + extra*math.Min(span, f.period/2)/f.period
}

// retainedHours returns the mean age of the oldest data kept at elapsed
// hours: data lives from its event time, half a period on average before
// its period ends, until its table is deleted.
func (f fleet) retainedHours(elapsed float64) float64 {
	return math.Min(elapsed, f.lifetime-f.prebuild-f.period/2)
}

// keptHours returns the mean age of the oldest data kept anywhere,
// DynamoDB or archive, at elapsed hours.
func (f fleet) keptHours(elapsed float64) float64 {
	if !f.archived {
		return f.retainedHours(elapsed)
	}
	return math.Min(elapsed, f.kept+f.period/2)
}

// tierDataHours returns the hours of data the tables of tier i hold at
// elapsed hours: data is on average half a period old when its period
// ends, so a table entering a tier s hours after its creation holds data
// about s − prebuild − period/2 hours old.
func (f fleet) tierDataHours(i int, elapsed float64) float64 {
	held := f.retainedHours(elapsed)
	age := func(start float64) float64 { return math.Min(held, math.Max(0, start-f.prebuild-f.period/2)) }
	from, to := 0.0, held
	if i > 0 {
		from = age(f.starts[i])
	}
	if i+1 < len(f.starts) {
		to = age(f.starts[i+1])
	}
	return math.Max(0, to-from)
}

// mostTables returns the most tables alive at once: in steady state when
// data has a retention, at elapsed hours when it is kept forever.
func (f fleet) mostTables(elapsed float64) int {
	life := math.Min(elapsed+f.prebuild, f.worstLifetime)
	return int(math.Ceil(life/f.period*f.perPeriod - fitTolerance))
}
