package planner

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

const day = 24 * time.Hour

func TestItemSize(t *testing.T) {
	keys := len("pk") + DefaultPKBytes + len("sk") + SKBytes
	tests := []struct {
		name       string
		in         Input
		bytes      float64
		writeUnits float64
	}{
		{"one byte of fields", Input{FieldBytes: 1}, float64(keys + 1), 1},
		{"one byte item", Input{ItemBytes: 1}, 1, 1},
		{"fields fill one unit exactly", Input{FieldBytes: 1024 - keys}, 1024, 1},
		{"one byte more takes two units", Input{FieldBytes: 1025 - keys}, 1025, 2},
		{"a longer partition key", Input{FieldBytes: 100, PKBytes: 60}, float64(2 + 60 + 2 + SKBytes + 100), 1},
		{"the largest item", Input{ItemBytes: storage.MaxItemSize}, storage.MaxItemSize, 400},
		{"a sample averages write units", Input{Sample: []int{1000, 1100}}, 1050, 1.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Rate = 1
			r, err := Plan(tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.bytes, r.Item.Bytes)
			require.Equal(t, tt.writeUnits, r.Item.WriteUnits)
		})
	}
}

func TestItemOverLimit(t *testing.T) {
	keys := len("pk") + DefaultPKBytes + len("sk") + SKBytes
	for name, in := range map[string]Input{
		"item bytes":  {ItemBytes: storage.MaxItemSize + 1, Rate: 1},
		"field bytes": {FieldBytes: storage.MaxItemSize - keys + 1, Rate: 1},
		"sample":      {Sample: []int{100, storage.MaxItemSize + 10, 200}, Rate: 1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Plan(in)
			require.ErrorIs(t, err, ErrItemTooLarge)
		})
	}
	_, err := Plan(Input{FieldBytes: storage.MaxItemSize - keys, Rate: 1})
	require.NoError(t, err, "an item of exactly 400 KB is allowed")
}

func TestSampleDistribution(t *testing.T) {
	var sample []int
	for i := 100; i >= 1; i-- {
		sample = append(sample, i*10)
	}
	r, err := Plan(Input{Sample: sample, Rate: 10})
	require.NoError(t, err)
	require.Equal(t, &Distribution{Count: 100, Min: 10, P50: 500, P90: 900, P99: 990, Max: 1000, Mean: 505}, r.Item.Sample)
	require.Equal(t, 505.0, r.Item.Bytes)

	r, err = Plan(Input{Sample: []int{300}, Rate: 10})
	require.NoError(t, err)
	require.Equal(t, &Distribution{Count: 1, Min: 300, P50: 300, P90: 300, P99: 300, Max: 300, Mean: 300}, r.Item.Sample)
}

func TestInvalidInput(t *testing.T) {
	tests := map[string]Input{
		"no size":                 {Rate: 1},
		"two sizes":               {FieldBytes: 10, ItemBytes: 100, Rate: 1},
		"empty sample":            {Sample: []int{}, Rate: 1},
		"zero-size sample":        {Sample: []int{10, 0}, Rate: 1},
		"negative size":           {ItemBytes: -1, Rate: 1},
		"zero rate":               {ItemBytes: 100},
		"negative rate":           {ItemBytes: 100, Rate: -5},
		"NaN rate":                {ItemBytes: 100, Rate: math.NaN()},
		"infinite rate":           {ItemBytes: 100, Rate: math.Inf(1)},
		"peak below rate":         {ItemBytes: 100, Rate: 10, Peak: 5},
		"negative retention":      {ItemBytes: 100, Rate: 1, Retention: -time.Hour},
		"reads without range":     {ItemBytes: 100, Rate: 1, ReadsPerSec: 1},
		"headroom above one":      {ItemBytes: 100, Rate: 1, Headroom: 1.5},
		"negative headroom":       {ItemBytes: 100, Rate: 1, Headroom: -0.5},
		"unknown grouping":        {ItemBytes: 100, Rate: 1, WriteTimeGrouping: "week"},
		"negative price":          {ItemBytes: 100, Rate: 1, Prices: Prices{WCUHour: -1}},
		"negative series":         {ItemBytes: 100, Rate: 1, Series: -1},
		"negative read range":     {ItemBytes: 100, Rate: 1, ReadsPerSec: 1, ReadRange: -time.Hour},
		"negative prebuild":       {ItemBytes: 100, Rate: 1, Prebuild: -time.Hour},
		"negative pk length":      {FieldBytes: 100, Rate: 1, PKBytes: -1},
		"negative reads":          {ItemBytes: 100, Rate: 1, ReadsPerSec: -1, ReadRange: time.Hour},
		"negative field bytes":    {FieldBytes: -100, Rate: 1},
		"archive after retention": {ItemBytes: 100, Rate: 1, Retention: 30 * day, ArchiveAfter: 30 * day, ArchiveTarget: "s3://b/a"},
		// Tables would be deleted at archive-after with nothing archived.
		"archive after without target": {ItemBytes: 100, Rate: 1, Retention: 365 * day, ArchiveAfter: 30 * day},
		"archive target without after": {ItemBytes: 100, Rate: 1, Retention: 365 * day, ArchiveTarget: "s3://b/a"},
		"archive format without after": {ItemBytes: 100, Rate: 1, Retention: 365 * day, ArchiveFormat: "parquet"},
		"unknown archive format":       {ItemBytes: 100, Rate: 1, Retention: 365 * day, ArchiveAfter: 30 * day, ArchiveTarget: "s3://b/a", ArchiveFormat: "csv"},
		"negative archive after":       {ItemBytes: 100, Rate: 1, ArchiveAfter: -day},
		"unknown billing":              {ItemBytes: 100, Rate: 1, Hot: TierOptions{Billing: "reserved"}},
		"unknown class":                {ItemBytes: 100, Rate: 1, Cold: TierOptions{Class: "glacier"}},
		"negative archive ratio":       {ItemBytes: 100, Rate: 1, ArchiveRatio: -1},
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Plan(in)
			require.ErrorIs(t, err, ErrInvalidInput)
		})
	}
}

func TestHotTierOverTheTableQuota(t *testing.T) {
	r, err := Plan(Input{ItemBytes: 180, Rate: 45000, Retention: 7 * day})
	require.NoError(t, err)
	require.Equal(t, int64(64286), r.Tiers[0].Write, "45,000 units at 70%")
	require.Equal(t, 45, r.Shards)
	require.Len(t, r.Warnings, 1)
	require.Contains(t, r.Warnings[0], "over DynamoDB's default quota of 40,000 per table")
}

func TestTablesForever(t *testing.T) {
	r, err := Plan(Input{ItemBytes: 180, Rate: 600})
	require.NoError(t, err)
	require.Equal(t, 365.0, r.Tables.PerYear)
	require.InDelta(t, 2500, r.Tables.DaysToQuota, 1e-9)
	require.Equal(t, "day", r.Period)
	require.Equal(t, 366, r.Tables.Alive, "a year of daily tables and the prebuilt next one")
	require.Equal(t, "month 12", r.CostedAt)
	require.Contains(t, r.Warnings[0], "kept forever")
}

func TestTimelineForever(t *testing.T) {
	r, err := Plan(Input{ItemBytes: 180, Rate: 600, Horizon: 24 * 730 * time.Hour})
	require.NoError(t, err)
	require.Len(t, r.Timeline, 24)
	require.Equal(t, "month 24", r.CostedAt)
	for i := 1; i < len(r.Timeline); i++ {
		require.Greater(t, r.Timeline[i].StoredGB, r.Timeline[i-1].StoredGB)
		require.Greater(t, r.Timeline[i].Tables, r.Timeline[i-1].Tables)
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                            "0",
		time.Hour:                    "1h",
		15 * time.Minute:             "15m",
		90 * time.Minute:             "1h30m",
		90 * day:                     "90d",
		84 * day:                     "12w",
		36 * time.Hour:               "36h",
		time.Hour + 30*time.Second:   "1h0m30s",
		1500 * time.Millisecond:      "1.5s",
		24*time.Hour + 1*time.Minute: "24h1m",
	} {
		require.Equal(t, want, FormatDuration(d), d.String())
	}
}

// The AWS developer guide's example, 600 events/s of 180 bytes kept for a
// year, at the built-in prices: a provisioned hot tier (600 write units
// used all the time at auto scaling's 70% target: 858 units, far above
// the break-even), warm and cold tables on demand, the cold ones in
// Standard-IA, which hold almost all the data.
func TestGuideExample(t *testing.T) {
	r, err := Plan(Input{ItemBytes: 180, Rate: 600, Retention: 365 * day})
	require.NoError(t, err)
	require.Equal(t, SchemaVersion, r.SchemaVersion)
	require.Equal(t, "day", r.Period)
	require.Equal(t, 1, r.Shards)
	require.Equal(t, []string{BillingProvisioned, BillingOnDemand, BillingOnDemand}, billings(r.Tiers))
	require.Equal(t, []storage.Class{storage.ClassStandard, storage.ClassStandard, storage.ClassInfrequentAccess}, classes(r.Tiers))
	require.Equal(t, BillingMixed, r.Billing)
	require.InDelta(t, 932.48, r.Cost.Recommended.Total, 0.01)
	require.Less(t, r.Cost.Recommended.Total, r.Cost.ProvisionedTiers.Total)
	require.Less(t, r.Cost.Recommended.Total, r.Cost.OnDemand.Total)
	require.Greater(t, r.Storage.StandardIAGB, 0.99*r.Storage.GB)
	// The hot tier writes 600 units at 70%, 25.25/24 tables on average,
	// and has the least read capacity, no read load being given.
	p := DefaultPrices()
	require.Equal(t, int64(858), r.Tiers[0].Write)
	require.Equal(t, int64(1), r.Tiers[0].Read)
	require.InDelta(t, 25.25/24*(858*p.WCUHour+1*p.RCUHour)*730, r.Tiers[0].CapacityCost, 1e-9)
	require.InDelta(t, 600*3600*730/1e6*p.WriteRequestMillion, r.Tiers[0].OnDemandCost, 1e-9)
	require.Equal(t, "day", r.Family.Period)
	require.Equal(t, BillingProvisioned, r.Family.Billing)
	require.Equal(t, FamilyTier{Name: "cold", Age: "2 periods", Billing: BillingOnDemand, Class: storage.ClassInfrequentAccess}, r.Family.Tiers[2])

	// Archived to S3 after 30 days, the same year of data.
	a, err := Plan(Input{ItemBytes: 180, Rate: 600, Retention: 365 * day, ArchiveAfter: 30 * day, ArchiveTarget: "s3://bucket/archive"})
	require.NoError(t, err)
	require.InDelta(t, 564.58, a.Cost.Recommended.Total, 0.01)
	require.InDelta(t, 365*24+12, a.Storage.RetainedHours+a.Storage.ArchivedHours, 1e-9, "the same year of data, from half a day before its period ends")
	require.InDelta(t, 600*180*3600*a.Storage.ArchivedHours*DefaultArchiveRatio/(1<<30), a.Storage.ArchiveGB, 1e-6)
	require.InDelta(t, a.Storage.ArchiveGB*p.ArchiveGBMonth, a.Cost.Recommended.Archive, 1e-9)
	require.Equal(t, "30d", a.Family.Retention)
}

func billings(ts []PlannedTier) []string {
	var s []string
	for _, t := range ts {
		s = append(s, t.Billing)
	}
	return s
}

func classes(ts []PlannedTier) []storage.Class {
	var s []storage.Class
	for _, t := range ts {
		s = append(s, t.Class)
	}
	return s
}

func TestBreakEven(t *testing.T) {
	p := DefaultPrices()
	require.InDelta(t, 0.00065/(3600*0.625/1e6), p.BreakEven(storage.ClassStandard), 1e-12)
	require.InDelta(t, 0.289, p.BreakEven(storage.ClassStandard), 0.001)
	require.InDelta(t, 0.00081/(3600*0.78125/1e6), p.BreakEven(storage.ClassInfrequentAccess), 1e-12)
	require.True(t, math.IsInf(Prices{WCUHour: 1}.BreakEven(storage.ClassStandard), 1))
}

// The hot tier is provisioned for the peak; it is cheaper than on demand
// when the average uses more of it than the break-even, prebuild, grace
// and read capacity included.
func TestHotTierBilling(t *testing.T) {
	tests := []struct {
		name    string
		in      Input
		billing string
	}{
		{"used all the time", Input{ItemBytes: 180, Rate: 10000}, BillingProvisioned},
		// The break-even, 29% of a unit's use, is 41% of the peak at
		// auto scaling's 70% target.
		{"used half the time", Input{ItemBytes: 180, Rate: 5000, Peak: 10000}, BillingProvisioned},
		{"used a third of the time", Input{ItemBytes: 180, Rate: 3500, Peak: 10000}, BillingOnDemand},
		{"a slow stream", Input{ItemBytes: 200, Rate: 0.1}, BillingOnDemand},
		{"forced on demand", Input{ItemBytes: 180, Rate: 10000, Hot: TierOptions{Billing: BillingOnDemand}}, BillingOnDemand},
		{"forced provisioned", Input{ItemBytes: 200, Rate: 0.1, Hot: TierOptions{Billing: BillingProvisioned}}, BillingProvisioned},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Retention = 90 * day
			r, err := Plan(tt.in)
			require.NoError(t, err)
			hot := r.Tiers[0]
			require.Equal(t, tt.billing, hot.Billing)
			require.Equal(t, tt.billing, r.Family.Tiers[0].Billing)
			if tt.in.Hot.Billing == "" {
				require.InDelta(t, math.Min(hot.ProvisionedCost, hot.OnDemandCost), hot.CapacityCost, 1e-9)
			}
		})
	}
}

func TestTierClass(t *testing.T) {
	in := Input{ItemBytes: 180, Rate: 600, Retention: 90 * day}
	r, err := Plan(in)
	require.NoError(t, err)
	p := DefaultPrices()
	cold := r.Tiers[2]
	require.InDelta(t, cold.StoredGB*p.StorageGBMonthIA, cold.StorageCost, 1e-9)
	in.Cold.Class = storage.ClassStandard
	s, err := Plan(in)
	require.NoError(t, err)
	require.InDelta(t, s.Tiers[2].StoredGB*p.StorageGBMonth, s.Tiers[2].StorageCost, 1e-9)
	require.Greater(t, s.Cost.Recommended.Total, r.Cost.Recommended.Total)
	require.Zero(t, s.Storage.StandardIAGB)
}

// Shards come from the peak of one series: a partition key value is one
// series' shard, and takes at most 1,000 write units a second.
func TestShards(t *testing.T) {
	tests := []struct {
		name   string
		in     Input
		shards int
	}{
		// "an average event frequency around 5,000 events per second
		// with a maximum of 6,000 per second [...] rotates from _1
		// through _6": the guide's stream is one series.
		{"the guide's six shards", Input{ItemBytes: 180, Rate: 5000, Peak: 6000}, 6},
		{"spread over 100 series", Input{ItemBytes: 180, Rate: 5000, Peak: 6000, Series: 100}, 1},
		{"spread over 4 series", Input{ItemBytes: 180, Rate: 5000, Peak: 6000, Series: 4}, 2},
		{"two units an event", Input{ItemBytes: 1500, Rate: 600}, 2},
		{"1,000 shards is the limit", Input{ItemBytes: 1024, Rate: 1000000}, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Plan(tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.shards, r.Shards)
			require.Equal(t, tt.shards, r.Family.Shards)
			require.Equal(t, int64(math.Ceil(tt.in.max()*r.Item.WriteUnits/TargetUtilization)), r.Tiers[0].Write, "the hot tier takes the whole stream's peak at 70%")
		})
	}
	_, err := Plan(Input{ItemBytes: 1024, Rate: 1000001})
	require.ErrorIs(t, err, ErrTooFast, "the peak alone needs 1,001 shards")
}

func (in Input) max() float64 { return math.Max(in.Rate, in.Peak) }

// The period is chosen on cost among those within the table quota, not
// by the 10 GB rule: 600 events/s fill 10 GiB of one partition key in a
// day, but 60,000 spread over 1,000 series do not make hourly tables.
func TestPeriodChoice(t *testing.T) {
	tests := []struct {
		name   string
		in     Input
		period string
	}{
		{"the guide's example", Input{ItemBytes: 180, Rate: 600, Retention: 365 * day}, "day"},
		{"a fast stream over many series", Input{ItemBytes: 180, Rate: 60000, Series: 1000, Retention: 30 * day}, "day"},
		{"a slow stream: costs equal, fewest tables", Input{ItemBytes: 100, Rate: 1, Retention: 365 * day}, "quarter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Plan(tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.period, r.Period)
			require.Len(t, r.Candidates, len(periodKinds))
			low := math.Inf(1)
			for _, c := range r.Candidates {
				if c.WithinQuota {
					low = math.Min(low, c.MonthlyCost)
				}
				require.Equal(t, c.Tables*5 < TableQuota*4, c.WithinQuota)
			}
			chosen := r.Candidates[choosePeriod(r.Candidates)]
			require.Equal(t, r.Period, chosen.Period)
			require.LessOrEqual(t, chosen.MonthlyCost, low*(1+cheapestTolerance)+cheapestSlack)
			require.InDelta(t, r.Cost.Recommended.Total, chosen.MonthlyCost, 1e-9)
		})
	}
}

func TestChoosePeriod(t *testing.T) {
	c := func(cost float64, tables int) Candidate {
		return Candidate{MonthlyCost: cost, Tables: tables, WithinQuota: tables*5 < TableQuota*4}
	}
	tests := []struct {
		name string
		cs   []Candidate
		want int
	}{
		{"cheapest", []Candidate{c(100, 100), c(80, 50), c(90, 10)}, 1},
		{"a longer one within tolerance", []Candidate{c(1000, 100), c(1004, 50)}, 1},
		{"a longer one within a unit", []Candidate{c(1, 100), c(1.9, 50)}, 1},
		{"a longer one beyond tolerance", []Candidate{c(1000, 100), c(1010, 50)}, 0},
		{"over the quota is skipped", []Candidate{c(1, 3000), c(10, 100)}, 1},
		{"none within the quota: fewest tables", []Candidate{c(1, 9000), c(2, 3000), c(3, 4000)}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, choosePeriod(tt.cs))
		})
	}
}

func TestTableQuotaWarnings(t *testing.T) {
	in := Input{ItemBytes: 180, Rate: 600, Retention: 365 * day}
	tests := []struct {
		alive   int
		warning string
	}{
		{12000, "hard limit of 10,000 tables"},
		{3000, "ask AWS to raise it (to at most 10,000)"},
		{2100, "near DynamoDB's default quota of 2,500"},
		{300, "256 tables per region"},
	}
	for _, tt := range tests {
		t.Run(tt.warning, func(t *testing.T) {
			r, err := Plan(in)
			require.NoError(t, err)
			r.Tables.Alive, r.Warnings, r.Working = tt.alive, nil, nil
			r.explain(in.withDefaults())
			require.Len(t, r.Warnings, 1)
			require.Contains(t, r.Warnings[0], tt.warning)
		})
	}
}

func TestCostsAddUp(t *testing.T) {
	for _, in := range []Input{
		{ItemBytes: 180, Rate: 600, Retention: 30 * day, WriteTimeGrouping: "none"},
		{ItemBytes: 180, Rate: 600, Retention: 365 * day, ArchiveAfter: 60 * day, ArchiveTarget: "s3://bucket/archive"},
		{ItemBytes: 180, Rate: 600, ArchiveAfter: 60 * day, ArchiveTarget: "s3://bucket/archive"},
		{ItemBytes: 800, Rate: 50, Peak: 400, Series: 20, ReadsPerSec: 5, ReadRange: 6 * time.Hour, Retention: 90 * day},
	} {
		r, err := Plan(in)
		require.NoError(t, err)
		var gb, storage float64
		for _, tr := range r.Tiers {
			gb += tr.StoredGB
			storage += tr.StorageCost
			require.InDelta(t, tr.CapacityCost+tr.StorageCost, tr.MonthlyCost, 1e-9)
		}
		require.InDelta(t, r.Storage.GB, gb, 1e-6)
		require.InDelta(t, r.Storage.GB, r.Storage.StandardGB+r.Storage.StandardIAGB, 1e-6)
		require.InDelta(t, r.Storage.MonthlyCost, storage, 1e-9)
		for _, c := range []Cost{r.Cost.Recommended, r.Cost.ProvisionedTiers, r.Cost.OnDemand, r.Cost.NoTiering} {
			require.InDelta(t, c.Write+c.Read+c.Storage+c.Backup+c.Archive+c.Archiving+c.FreeTier, c.Total, 1e-9)
			require.LessOrEqual(t, c.FreeTier, 0.0)
		}
		// The bill is the recommended cost, line by line.
		sum := 0.0
		for _, l := range r.Bill.Lines {
			require.InDelta(t, l.Quantity*l.UnitPrice, l.Monthly, 1e-9, l.Item)
			require.Equal(t, r.Prices.Check(l.Price), l.Check, l.Item)
			sum += l.Monthly
		}
		require.InDelta(t, r.Cost.Recommended.Total, r.Bill.Total, 1e-9)
		require.InDelta(t, sum, r.Bill.Total, 1e-9)
		require.LessOrEqual(t, r.Cost.Recommended.Total, math.Min(r.Cost.ProvisionedTiers.Total, r.Cost.OnDemand.Total)+1e-9)
		require.Greater(t, r.Cost.NoTiering.Total, r.Cost.Recommended.Total)
		last := r.Timeline[len(r.Timeline)-1]
		require.InDelta(t, r.Cost.Recommended.Total, last.Total, 1e-6)
		require.Less(t, r.Timeline[0].StoredGB+r.Timeline[0].ArchiveGB, last.StoredGB+last.ArchiveGB)
	}
}

// Reads are priced at the consistency the store reads with: strongly
// consistent from the hot table, eventually consistent from a warm one,
// which takes no more writes.
func TestReads(t *testing.T) {
	in := Input{ItemBytes: 180, Rate: 600, Series: 100, ReadsPerSec: 10, ReadRange: time.Hour}
	r, err := Plan(in)
	require.NoError(t, err)
	require.NotNil(t, r.Reads)
	// One series: 6 events/s over an hour, 21,600 events of 180 bytes,
	// 949.2 blocks of 4 KB, 950 started, a unit each.
	require.InDelta(t, 21600, r.Reads.EventsPerQuery, 1e-9)
	require.InDelta(t, 950, r.Reads.UnitsPerQuery, 1e-9)
	require.InDelta(t, 475, r.Reads.WarmUnitsPerQuery, 1e-9)
	require.InDelta(t, 9500, r.Reads.Capacity, 1e-9)
	// Provisioned at auto scaling's 70% target.
	require.Equal(t, int64(13572), r.Tiers[0].Read)
	require.Equal(t, int64(6786), r.Tiers[1].Read)
	require.Equal(t, int64(1), r.Tiers[2].Read)
	// On demand the warm table is read only by queries that cross the
	// period's start: an hour of a day.
	period := r.PeriodHours
	want := 9500*3600*730/1e6*0.125 + 4750*3600*730/1e6*0.125*math.Min(1, 1/period)
	require.InDelta(t, want, r.Cost.OnDemand.Read, 1e-6)

	// A short query still takes a unit in every shard.
	r, err = Plan(Input{ItemBytes: 180, Rate: 5000, Peak: 6000, ReadsPerSec: 2, ReadRange: time.Millisecond})
	require.NoError(t, err)
	require.Equal(t, 6, r.Shards)
	require.InDelta(t, 6, r.Reads.UnitsPerQuery, 1e-9)
	require.Equal(t, int64(18), r.Tiers[0].Read)
}

func TestDefaultsApplied(t *testing.T) {
	r, err := Plan(Input{FieldBytes: 180, Rate: 600})
	require.NoError(t, err)
	require.Equal(t, DefaultPrices(), r.Prices)
	require.Equal(t, DefaultHeadroom, r.Partition.Headroom)
	require.Equal(t, "month", r.Workload.WriteTimeGrouping)
	require.Equal(t, 1.0, r.Workload.PrebuildHours)
	require.Equal(t, 0.25, r.Workload.GraceHours)
	require.Equal(t, 1, r.Workload.Series)
	require.Equal(t, 600.0, r.Workload.Peak)
	require.Zero(t, r.Workload.ArchiveRatio, "no archive")
	require.Equal(t, Family{
		Name: "events", Prefix: "tt_events_", Period: r.Period, Naming: "range", WriteTimeGrouping: "month",
		Shards: 1, Layout: "row", Billing: "provisioned",
		Tiers: []FamilyTier{
			{Name: "hot", Age: "0", Billing: "provisioned", Class: storage.ClassStandard, Read: 1, Write: 858, PITR: true},
			{Name: "warm", Age: "1 period", Billing: "on_demand", Class: storage.ClassStandard, PITR: true},
			{Name: "cold", Age: "2 periods", Billing: "on_demand", Class: storage.ClassInfrequentAccess},
		},
		Prebuild: "1h", Grace: "15m", Retention: "0",
	}, r.Family)
}

// Every built-in price is in PriceTable once, with an AWS page and a
// check that names that page when it says verified; a price changed by a
// file or flag is "given", and every key has a field.
func TestPriceTable(t *testing.T) {
	seen := map[string]bool{}
	p := DefaultPrices()
	for _, e := range PriceTable {
		require.False(t, seen[e.Key], "%s twice", e.Key)
		seen[e.Key] = true
		require.NotNil(t, p.field(e.Key), e.Key)
		require.Equal(t, e.Value, *p.field(e.Key), e.Key)
		require.Regexp(t, `^https://aws\.amazon\.com/`, e.Source, e.Key)
		require.Regexp(t, `^(unverified|verified https://aws\.amazon\.com/\S+)$`, e.Check, e.Key)
		require.Equal(t, e.Check, p.Check(e.Key), e.Key)
		q := p
		*q.field(e.Key) = e.Value + 1
		require.Equal(t, "given", q.Check(e.Key), e.Key)
	}
	require.Len(t, seen, len(PriceTable))
	require.Nil(t, p.field("no_such_price"))
	require.NoError(t, p.Validate())
}

// Rows and chunks are priced side by side, a chunk table packed as it
// leaves the hot tier as the lifecycle packs it: a chunk of one event is
// larger than its row, and events one at a time stay rows (with chunks
// packed later shown as an option, not applied), though packed they cost
// less; Telegraf's ten readings of a series a request make chunks,
// recommended, within the aim of 200 USD a month for the guide's stream,
// packed into a chunk a window of each series past the hot tier.
func TestLayouts(t *testing.T) {
	base := Input{ItemBytes: 180, Rate: 600, Retention: 365 * day, ArchiveAfter: 30 * day, ArchiveTarget: "s3://bucket/events"}
	one, err := Plan(base)
	require.NoError(t, err)
	require.Equal(t, LayoutRow, one.Stored.Layout)
	require.Equal(t, LayoutRow, one.Family.Layout)
	require.Empty(t, one.Family.ChunkWindow)
	require.Len(t, one.Layouts, 2)
	require.Nil(t, one.Packed, "rows are not packed")
	require.InDelta(t, 180+DefaultChunkExtraBytes, one.Layouts[1].Event.Bytes, 1e-9)
	require.Less(t, one.Layouts[1].Total, one.Layouts[0].Total, "chunks of one event, packed later, cost less, and are the option, not the recommendation")
	p := one.PackedLater
	require.NotNil(t, p)
	require.Less(t, p.Bill.Total, one.Bill.Total)
	// The compaction scans the rows once, eventually consistent, writes
	// a chunk a window of the series, split under 400 KB, into the
	// table's next physical table, and reads the chunks back strongly
	// consistent to verify them.
	require.InDelta(t, 600*180*730*3600/8192.0+600*p.Event.Bytes*730*3600/4096.0, p.ReadUnits, 1)
	require.Greater(t, p.Event.EventsPerItem, 60000.0)
	require.LessOrEqual(t, 180+DefaultChunkExtraBytes+p.Event.EventsPerItem*180*DefaultChunkRatio, float64(storage.MaxItemSize))
	require.InDelta(t, p.WriteUnits, 600*3600*730*p.Event.WriteUnits, 1)

	telegraf := base
	telegraf.BatchEvents = 10
	r, err := Plan(telegraf)
	require.NoError(t, err)
	require.Equal(t, LayoutChunk, r.Stored.Layout)
	require.Equal(t, LayoutChunk, r.Family.Layout)
	require.Equal(t, "1h", r.Family.ChunkWindow)
	require.InDelta(t, 0.1, r.Stored.WriteUnits, 1e-9, "one write unit for ten events")
	require.Nil(t, r.PackedLater, "batches are packed as they are written")
	// and packed again as their table leaves the hot tier: scanned as
	// written, eventually consistent, a chunk a window of each series
	// written into the next physical table and read back strongly
	// consistent.
	pk := r.Packed
	require.NotNil(t, pk)
	require.Equal(t, one.PackedLater.Event.EventsPerItem, pk.Event.EventsPerItem, "a window of the series, split under 400 KB")
	require.Less(t, pk.Event.Bytes+pk.Event.OverheadBytes, (r.Stored.Bytes+r.Stored.OverheadBytes)/5)
	require.InDelta(t, 600*r.Stored.Bytes*730*3600/8192.0+600*pk.Event.Bytes*730*3600/4096.0, pk.ReadUnits, 1)
	require.InDelta(t, 600*3600*730*pk.Event.WriteUnits, pk.WriteUnits, 1)
	require.LessOrEqual(t, r.Bill.Total, 200.0)
	require.Less(t, r.Bill.Total, r.Layouts[0].Total)

	forced := telegraf
	forced.Layout = LayoutRow
	f, err := Plan(forced)
	require.NoError(t, err)
	require.Equal(t, LayoutRow, f.Stored.Layout)
	require.Len(t, f.Layouts, 1, "the forced layout alone")

	// A measured sample's sizes are the chunk's.
	measured := telegraf
	measured.ChunkFixedBytes, measured.ChunkEventBytes = 300, 20
	m, err := Plan(measured)
	require.NoError(t, err)
	require.InDelta(t, (300+10*20)/10.0, m.Stored.Bytes, 1e-9)

	_, err = Plan(Input{ItemBytes: 180, Rate: 1, Layout: "columns"})
	require.ErrorIs(t, err, ErrInvalidInput)
	_, err = Plan(Input{ItemBytes: 180, Rate: 1, BatchEvents: 0.5})
	require.ErrorIs(t, err, ErrInvalidInput)
}
