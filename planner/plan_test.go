package planner

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

const day = 24 * time.Hour

// The AWS developer guide's worked example: "around 600 events per second,
// each taking up about 180 bytes in DynamoDB. At this rate, 10 GB would
// fill up in around 26 or 27 hours, so this design puts a new table into
// service every day at midnight."
func TestGuideExampleDailyTables(t *testing.T) {
	r, err := Plan(Input{ItemBytes: 180, Rate: 600})
	require.NoError(t, err)
	require.Equal(t, 1.0, r.Item.WriteUnits)
	require.Equal(t, 600*180*3600.0, r.BytesPerHour)
	require.Equal(t, 600*180*86400.0, r.BytesPerDay)
	require.GreaterOrEqual(t, r.Partition.UsableFillHours, 26.0)
	require.LessOrEqual(t, r.Partition.UsableFillHours, 27.0)
	require.InDelta(t, 27.6, r.Partition.FillHours, 0.05, "the full 10 GiB")
	require.Equal(t, "day", r.Period)
	require.Equal(t, 1, r.Shards)
	require.Equal(t, SchemaVersion, r.SchemaVersion)
	require.Equal(t, "day", r.Family.Period)
}

// "If you anticipate an average event frequency around 5,000 events per
// second with a maximum of 6,000 per second, your application can append
// to the partition key a sharding suffix that rotates from _1 through _6
// [...] and you can provision your table with 6,000 WCUs."
func TestGuideExampleSixShards(t *testing.T) {
	r, err := Plan(Input{ItemBytes: 180, Rate: 5000, Peak: 6000})
	require.NoError(t, err)
	require.Equal(t, 6, r.PeakShards)
	require.Equal(t, 6, r.Shards)
	require.Equal(t, int64(6000), r.Tiers[0].Write)
	require.Equal(t, 6, r.Family.Shards)
	// Each shard's partition gets a sixth of 5,000 events/s.
	require.InDelta(t, 5000.0/6*180*3600, r.Partition.BytesPerHour, 1e-6)
}

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

// usableFor returns the rate at which one partition fills its usable
// bytes in exactly the given hours with items of the given size.
func usableFor(hours float64, item int) float64 {
	return PartitionBytes * DefaultHeadroom / (hours * 3600 * float64(item))
}

func TestPeriodChoice(t *testing.T) {
	tests := []struct {
		name   string
		in     Input
		period string
	}{
		{"tiny events, slow", Input{ItemBytes: 1, Rate: 1}, "quarter"},
		{"a day fills the partition exactly", Input{ItemBytes: 1000, Rate: usableFor(24, 1000)}, "day"},
		{"a little more and a day overflows", Input{ItemBytes: 1000, Rate: usableFor(24, 1000) * 1.000001}, "12h"},
		{"a quarter fits exactly", Input{ItemBytes: 100, Rate: usableFor(92*24, 100)}, "quarter"},
		{"a 31-day month must fit, not a 30-day one", Input{ItemBytes: 100, Rate: usableFor(30*24, 100)}, "week"},
		{"an hour fits exactly", Input{ItemBytes: 1000, Rate: usableFor(1, 1000), Headroom: 0, Peak: 0}, "hour"},
		{"six hours exactly", Input{ItemBytes: 500, Rate: usableFor(6, 500)}, "6h"},
		{"twelve hours exactly", Input{ItemBytes: 500, Rate: usableFor(12, 500)}, "12h"},
		{"a week exactly", Input{ItemBytes: 200, Rate: usableFor(168, 200)}, "week"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Plan(tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.period, r.Period)
			for _, c := range r.Candidates {
				require.Equal(t, c.Fill <= 1+fitTolerance, c.Fits, c.Period)
				if c.Period == r.Period {
					require.True(t, c.Fits)
				}
			}
		})
	}
}

func TestShardsRaisedWhenAnHourOverflows(t *testing.T) {
	// With 1 KB items a partition written at 1,000 units takes 3.7 GB an
	// hour; a headroom of 0.3 leaves only 3.2 GB usable.
	r, err := Plan(Input{ItemBytes: 1024, Rate: 2000, Peak: 2000, Headroom: 0.3})
	require.NoError(t, err)
	require.Equal(t, 2, r.PeakShards)
	require.Equal(t, 3, r.Shards)
	require.Equal(t, "hour", r.Period)
	require.NotEmpty(t, r.Warnings)
	require.Contains(t, r.Warnings[0], "hourly tables with 3 shards")
	require.LessOrEqual(t, r.Candidates[0].Fill, 1.0)

	_, err = Plan(Input{ItemBytes: 1024, Rate: 100000, Headroom: 0.01})
	require.ErrorIs(t, err, ErrTooFast)
	_, err = Plan(Input{ItemBytes: 1024, Rate: 1000001})
	require.ErrorIs(t, err, ErrTooFast, "the peak alone needs 1,001 shards")
	_, err = Plan(Input{ItemBytes: 1024, Rate: 1000000})
	require.NoError(t, err, "1,000 shards is the limit")
}

func TestInvalidInput(t *testing.T) {
	tests := map[string]Input{
		"no size":              {Rate: 1},
		"two sizes":            {FieldBytes: 10, ItemBytes: 100, Rate: 1},
		"empty sample":         {Sample: []int{}, Rate: 1},
		"zero-size sample":     {Sample: []int{10, 0}, Rate: 1},
		"negative size":        {ItemBytes: -1, Rate: 1},
		"zero rate":            {ItemBytes: 100},
		"negative rate":        {ItemBytes: 100, Rate: -5},
		"NaN rate":             {ItemBytes: 100, Rate: math.NaN()},
		"infinite rate":        {ItemBytes: 100, Rate: math.Inf(1)},
		"peak below rate":      {ItemBytes: 100, Rate: 10, Peak: 5},
		"negative retention":   {ItemBytes: 100, Rate: 1, Retention: -time.Hour},
		"reads without range":  {ItemBytes: 100, Rate: 1, ReadsPerSec: 1},
		"headroom above one":   {ItemBytes: 100, Rate: 1, Headroom: 1.5},
		"negative headroom":    {ItemBytes: 100, Rate: 1, Headroom: -0.5},
		"unknown grouping":     {ItemBytes: 100, Rate: 1, WriteTimeGrouping: "week"},
		"negative price":       {ItemBytes: 100, Rate: 1, Prices: Prices{WCUHour: -1}},
		"negative series":      {ItemBytes: 100, Rate: 1, Series: -1},
		"negative read range":  {ItemBytes: 100, Rate: 1, ReadsPerSec: 1, ReadRange: -time.Hour},
		"negative prebuild":    {ItemBytes: 100, Rate: 1, Prebuild: -time.Hour},
		"negative pk length":   {FieldBytes: 100, Rate: 1, PKBytes: -1},
		"negative reads":       {ItemBytes: 100, Rate: 1, ReadsPerSec: -1, ReadRange: time.Hour},
		"negative field bytes": {FieldBytes: -100, Rate: 1},
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Plan(in)
			require.ErrorIs(t, err, ErrInvalidInput)
		})
	}
}

func TestTablesAlive(t *testing.T) {
	// 900 events/s of 1,000 bytes fill a partition in about 3 hours:
	// hourly tables.
	hourly := Input{ItemBytes: 1000, Rate: 900}
	tests := []struct {
		name      string
		in        Input
		period    string
		alive     int
		perPeriod float64
		warning   string
	}{
		// Alive spans prebuild + period + retention, over the period.
		{"daily, 90 days, no grouping", Input{ItemBytes: 180, Rate: 600, Retention: 90 * day, WriteTimeGrouping: "none"}, "day", 92, 1, ""},
		// A table also waits up to 744-24 hours for its write month.
		{"daily, 90 days, grouping", Input{ItemBytes: 180, Rate: 600, Retention: 90 * day}, "day", 122, 1, ""},
		{"hourly, 90 days, grouping", with(hourly, 90*day, "month"), "hour", 2905, 1, "exceeds DynamoDB's default quota of 2,500"},
		{"hourly, 60 days, grouping", with(hourly, 60*day, "month"), "hour", 2185, 1, "near DynamoDB's default quota"},
		{"hourly, 60 days, no grouping", with(hourly, 60*day, "none"), "hour", 1442, 1, "more than the 256 tables"},
		{"hourly, 7 days, no grouping", with(hourly, 7*day, "none"), "hour", 170, 1, ""},
		// (1 + 168 + 8,736 + 576 hours) / 168 × 1.197 tables a week.
		{"weekly tables split at months", Input{ItemBytes: 100, Rate: 100, Retention: 364 * day}, "week", 68, 1 + 144.0/730, ""},
		// (1 + 2,190 + 17,520 hours) / 2,190 × 3 tables a quarter.
		{"quarterly tables span three write months", Input{ItemBytes: 10, Rate: 1, Retention: 2 * 365 * day}, "quarter", 28, 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Plan(tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.period, r.Period)
			require.Equal(t, tt.alive, r.Tables.Alive)
			require.InDelta(t, tt.perPeriod, r.Tables.PerPeriod, 1e-12)
			if tt.warning == "" {
				require.Empty(t, r.Warnings)
				return
			}
			require.Len(t, r.Warnings, 1)
			require.Contains(t, r.Warnings[0], tt.warning)
		})
	}
}

func with(in Input, retention time.Duration, grouping string) Input {
	in.Retention, in.WriteTimeGrouping = retention, grouping
	return in
}

func TestHotTierOverTheTableQuota(t *testing.T) {
	r, err := Plan(Input{ItemBytes: 180, Rate: 45000, Retention: 7 * day})
	require.NoError(t, err)
	require.Equal(t, int64(45000), r.Tiers[0].Write)
	require.Equal(t, 45, r.Shards)
	require.Len(t, r.Warnings, 1)
	require.Contains(t, r.Warnings[0], "over DynamoDB's default quota of 40,000 per table")
}

func TestTablesForever(t *testing.T) {
	r, err := Plan(Input{ItemBytes: 180, Rate: 600})
	require.NoError(t, err)
	require.Equal(t, 365.0, r.Tables.PerYear)
	require.InDelta(t, 2500, r.Tables.DaysToQuota, 1e-9)
	require.Equal(t, 366, r.Tables.Alive, "a year of daily tables and the prebuilt next one")
	require.Equal(t, "month 12", r.CostedAt)
	require.Contains(t, r.Warnings[0], "kept forever")
}

func TestCosts(t *testing.T) {
	in := Input{ItemBytes: 180, Rate: 600, Retention: 30 * day, WriteTimeGrouping: "none"}
	r, err := Plan(in)
	require.NoError(t, err)
	p := DefaultPrices()
	require.Equal(t, "steady state", r.CostedAt)

	// On demand: 600 events/s × 1 unit × 3,600 s × 730 h = 1,576.8
	// million write units at $0.625 a million.
	require.InDelta(t, 985.50, r.Cost.OnDemand.Write, 1e-9)
	require.Zero(t, r.Cost.OnDemand.Read)

	// A daily table is hot from an hour before its day to 15 minutes
	// after it: 25.25/24 tables on average, at 600 write and 300 read
	// units.
	hot := r.Tiers[0]
	require.InDelta(t, 25.25/24, hot.Tables, 1e-12)
	require.InDelta(t, 25.25/24*(600*p.WCUHour+300*p.RCUHour)*730, hot.MonthlyCost, 1e-9)
	require.InDelta(t, 1, r.Tiers[1].Tables, 1e-12)
	// Cold from 49.25 hours after creation to deletion, 1 + 24 + 720
	// hours after it.
	require.InDelta(t, (745-49.25)/24, r.Tiers[2].Tables, 1e-12)

	// Data is kept from its event time, half a day before its period
	// ends on average, until 30 days after: 732 hours, with 100 bytes of
	// overhead per item.
	require.InDelta(t, 732, r.Storage.RetainedHours, 1e-9)
	gb := 600 * 280 * 3600 * 732.0 / (1 << 30)
	require.InDelta(t, gb, r.Storage.GB, 1e-9)
	require.InDelta(t, gb*0.25, r.Cost.ProvisionedTiers.Storage, 1e-9)

	for _, c := range []Cost{r.Cost.ProvisionedTiers, r.Cost.OnDemand, r.Cost.NoTiering} {
		require.InDelta(t, c.Write+c.Read+c.Storage, c.Total, 1e-9)
	}
	require.Greater(t, r.Cost.NoTiering.Total, r.Cost.ProvisionedTiers.Total)
	require.Equal(t, BillingProvisioned, r.Billing)

	// The timeline runs past the first table's deletion and ends in the
	// steady state.
	require.Len(t, r.Timeline, 3)
	last := r.Timeline[len(r.Timeline)-1]
	require.InDelta(t, r.Cost.ProvisionedTiers.Total, last.Total, 1e-9)
	require.InDelta(t, r.Storage.GB, last.StoredGB, 1e-9)
	require.Less(t, r.Timeline[0].StoredGB, last.StoredGB)
}

func TestOnDemandWinsForASlowStream(t *testing.T) {
	r, err := Plan(Input{ItemBytes: 200, Rate: 0.5, Retention: 365 * day})
	require.NoError(t, err)
	require.Equal(t, BillingOnDemand, r.Billing)
	require.Equal(t, BillingOnDemand, r.Family.Billing)
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

func TestReads(t *testing.T) {
	in := Input{ItemBytes: 180, Rate: 600, Series: 100, ReadsPerSec: 10, ReadRange: time.Hour}
	r, err := Plan(in)
	require.NoError(t, err)
	require.NotNil(t, r.Reads)
	// One series: 6 events/s over an hour, 21,600 events of 180 bytes,
	// 949.2 blocks of 4 KB, 950 started, half a unit each.
	require.InDelta(t, 21600, r.Reads.EventsPerQuery, 1e-9)
	require.InDelta(t, 475, r.Reads.UnitsPerQuery, 1e-9)
	require.InDelta(t, 4750, r.Reads.Capacity, 1e-9)
	require.Equal(t, int64(4750), r.Tiers[0].Read)
	require.Equal(t, int64(4750), r.Tiers[1].Read)
	require.Equal(t, int64(1), r.Tiers[2].Read)
	require.InDelta(t, 4750*3600*730/1e6*0.125, r.Cost.OnDemand.Read, 1e-9)

	// A short query still takes half a unit in every shard.
	r, err = Plan(Input{ItemBytes: 180, Rate: 5000, Peak: 6000, ReadsPerSec: 2, ReadRange: time.Second, Series: 5000})
	require.NoError(t, err)
	require.InDelta(t, 3, r.Reads.UnitsPerQuery, 1e-9)
	require.Equal(t, int64(6), r.Tiers[0].Read)
}

func TestDefaultsApplied(t *testing.T) {
	// 180 bytes of fields make a 277-byte item: 12-hour tables, where a
	// 180-byte item gets daily ones.
	r, err := Plan(Input{FieldBytes: 180, Rate: 600})
	require.NoError(t, err)
	require.Equal(t, DefaultPrices(), r.Prices)
	require.Equal(t, DefaultHeadroom, r.Partition.Headroom)
	require.Equal(t, "month", r.Workload.WriteTimeGrouping)
	require.Equal(t, 1.0, r.Workload.PrebuildHours)
	require.Equal(t, 0.25, r.Workload.GraceHours)
	require.Equal(t, 1, r.Workload.Series)
	require.Equal(t, 600.0, r.Workload.Peak)
	require.Equal(t, Family{
		Name: "events", Prefix: "tt_events_", Period: "12h", Naming: "range", WriteTimeGrouping: "month",
		Shards: 1, Layout: "row", Billing: "provisioned",
		Tiers: []FamilyTier{
			{Name: "hot", Age: "0", Read: 300, Write: 600},
			{Name: "warm", Age: "1 period", Read: 100, Write: 1},
			{Name: "cold", Age: "2 periods", Read: 1, Write: 1},
		},
		Prebuild: "1h", Grace: "15m", Retention: "0",
	}, r.Family)
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
