package planner

import "math"

// Tier is one step of the tier schedule: the capacity a table gets from a
// given age on.
type Tier struct {
	// Name is hot, warm or cold.
	Name string `json:"name"`
	// Age is when a table enters the tier, as configuration files spell
	// it: "0", "1 period", "2 periods".
	Age string `json:"age"`
	// Write and Read are the provisioned capacity units.
	Write int64 `json:"write"`
	Read  int64 `json:"read"`
	// Tables is the mean number of tables in the tier when the plan is
	// costed.
	Tables float64 `json:"tables"`
	// MonthlyCost is what those tables' capacity costs per month.
	MonthlyCost float64 `json:"monthly_cost"`
}

// Reads is the read load's arithmetic.
type Reads struct {
	// EventsPerQuery is the events one query reads: one series over the
	// read range.
	EventsPerQuery float64 `json:"events_per_query"`
	// BytesPerQuery is their size.
	BytesPerQuery float64 `json:"bytes_per_query"`
	// UnitsPerQuery is the read units one query takes: eventually
	// consistent reads, half a unit per 4 KB started, in every shard.
	UnitsPerQuery float64 `json:"units_per_query"`
	// Capacity is the read units per second the load needs.
	Capacity float64 `json:"capacity"`
}

// The AWS blog's read capacities, used when the input has no read load.
const (
	blogHotRead  = 300
	blogWarmRead = 100
)

// reads works out the read load, or returns nil when there is none. A
// query reads one series over the read range from every shard; DynamoDB
// rounds each shard's read up to 4 KB, and an eventually consistent read
// takes half a unit per 4 KB.
func (in Input) reads(it Item, shards int) *Reads {
	if in.ReadsPerSec == 0 {
		return nil
	}
	r := &Reads{EventsPerQuery: in.Rate / float64(in.Series) * in.ReadRange.Seconds()}
	r.BytesPerQuery = r.EventsPerQuery * it.Bytes
	perShard := math.Max(1, math.Ceil(r.BytesPerQuery/float64(shards)/readUnitBytes-fitTolerance))
	r.UnitsPerQuery = float64(shards) * perShard / 2
	r.Capacity = in.ReadsPerSec * r.UnitsPerQuery
	return r
}

// tierSchedule returns the AWS blog's hot, warm and cold tiers, with the
// hot tier's write capacity sized for the peak, as the guide provisions
// 6,000 write units for a 6,000 events/s peak, and read capacity sized for
// the read load when there is one. Queries end now, so they read the hot
// table and, across a period boundary, the warm one: both get the load's
// read capacity.
func tierSchedule(peakUnits float64, r *Reads) (tiers []Tier, ages []int) {
	hotRead, warmRead := int64(blogHotRead), int64(blogWarmRead)
	if r != nil {
		hotRead = max(1, int64(math.Ceil(r.Capacity-fitTolerance)))
		warmRead = hotRead
	}
	hotWrite := max(1, int64(math.Ceil(peakUnits-fitTolerance)))
	return []Tier{
		{Name: "hot", Age: "0", Write: hotWrite, Read: hotRead},
		{Name: "warm", Age: "1 period", Write: 1, Read: warmRead},
		{Name: "cold", Age: "2 periods", Write: 1, Read: 1},
	}, []int{0, 1, 2}
}
