package planner

import (
	"math"

	"github.com/timetabledb/timetable/storage"
)

// PlannedTier is one step of the tier schedule as the plan prices it:
// how a table is billed and stored from a given age on (family.Tier is
// such a step as configuration sets it).
type PlannedTier struct {
	// Name is hot, warm or cold.
	Name string `json:"name"`
	// Age is when a table enters the tier, as configuration files spell
	// it: "0", "1 period", "2 periods".
	Age string `json:"age"`
	// Billing is how the tier is billed: BillingProvisioned or
	// BillingOnDemand.
	Billing string `json:"billing"`
	// Class is the tier's table class: storage.ClassStandard or
	// storage.ClassInfrequentAccess.
	Class storage.Class `json:"class"`
	// Write and Read are the capacity units the tier is provisioned with
	// when Billing is BillingProvisioned: the load over the auto scaling
	// target (TargetUtilization), the write load at its peak.
	Write int64 `json:"write"`
	Read  int64 `json:"read"`
	// MinWrite, when below Write, is the write capacity at the average
	// rate, where auto scaling may take the tier down to: the family
	// gets it as its write units and Write as its max_write.
	MinWrite int64 `json:"min_write,omitempty"`
	// PITR reports whether the tier's tables have point-in-time recovery,
	// as the configuration gives every tier but the last.
	PITR bool `json:"pitr"`
	// Tables is the mean number of tables in the tier when the plan is
	// costed.
	Tables float64 `json:"tables"`
	// StoredGB is the data the tier's tables hold.
	StoredGB float64 `json:"stored_gb"`
	// ProvisionedCost and OnDemandCost are what the tier's reads and
	// writes cost per month billed either way; CapacityCost is the one
	// Billing chose.
	ProvisionedCost float64 `json:"provisioned_cost"`
	OnDemandCost    float64 `json:"on_demand_cost"`
	CapacityCost    float64 `json:"capacity_cost"`
	// StorageCost is what storing StoredGB in Class costs per month.
	StorageCost float64 `json:"storage_cost"`
	// MonthlyCost is CapacityCost plus StorageCost.
	MonthlyCost float64 `json:"monthly_cost"`
}

// Reads is the read load's arithmetic. Queries end now: they read the hot
// table, which the engine reads strongly consistent, and, when their range
// crosses the period's start, the warm table, which takes no more writes
// but a late event now and then and which the engine reads eventually
// consistent (registry.Entry.Settled; storage.Query.Eventual sends
// ConsistentRead false), priced so.
type Reads struct {
	// EventsPerQuery is the events one query reads: one series over the
	// read range.
	EventsPerQuery float64 `json:"events_per_query"`
	// BytesPerQuery is their size.
	BytesPerQuery float64 `json:"bytes_per_query"`
	// UnitsPerQuery is the read units one query takes from the hot table:
	// strongly consistent reads, one unit per 4 KB started, in every
	// shard.
	UnitsPerQuery float64 `json:"units_per_query"`
	// WarmUnitsPerQuery is the read units a query takes from a warm
	// table: eventually consistent, half a unit per 4 KB started.
	WarmUnitsPerQuery float64 `json:"warm_units_per_query"`
	// Capacity is the read units per second the load needs from the hot
	// table; WarmCapacity from a warm one.
	Capacity     float64 `json:"capacity"`
	WarmCapacity float64 `json:"warm_capacity"`
}

// TargetUtilization is the consumed share of provisioned capacity that
// the plan provisions for, as auto scaling's target tracking holds it
// (dynamostore.TargetUtilization, 70%): a tier provisioned for a load
// has load / TargetUtilization units.
const TargetUtilization = 0.70

// minUnits is the least capacity DynamoDB provisions: a tier with no
// read load given has one read unit per table.
const minUnits = 1

// reads works out the read load, or returns nil when there is none. A
// query reads one series over the read range from every shard; DynamoDB
// rounds each shard's read up to 4 KB; a strongly consistent read takes a
// unit per 4 KB, an eventually consistent one half.
func (in Input) reads(it Item, shards int) *Reads {
	if in.ReadsPerSec == 0 {
		return nil
	}
	r := &Reads{EventsPerQuery: in.Rate / float64(in.Series) * in.ReadRange.Seconds()}
	r.BytesPerQuery = r.EventsPerQuery * it.Bytes
	perShard := math.Max(1, math.Ceil(r.BytesPerQuery/float64(shards)/readUnitBytes-fitTolerance))
	r.UnitsPerQuery = float64(shards) * perShard
	r.WarmUnitsPerQuery = r.UnitsPerQuery / 2
	r.Capacity = in.ReadsPerSec * r.UnitsPerQuery
	r.WarmCapacity = in.ReadsPerSec * r.WarmUnitsPerQuery
	return r
}

// tierSchedule returns the AWS blog's hot, warm and cold tiers with the
// capacity each would be provisioned with: the hot tier's write capacity
// sized for the peak at TargetUtilization (the guide's 6,000 events/s
// peak takes 8,572 write units), read capacities for the read load as
// given, or DynamoDB's minimum of one unit when none is; the hot and warm
// tiers have point-in-time recovery. Billing and class are decided when
// the plan is costed.
func tierSchedule(rateUnits, peakUnits float64, r *Reads) (tiers []PlannedTier, ages []int) {
	units := func(load float64) int64 {
		return max(minUnits, int64(math.Ceil(load/TargetUtilization-fitTolerance)))
	}
	hotRead, warmRead := int64(minUnits), int64(minUnits)
	if r != nil {
		hotRead, warmRead = units(r.Capacity), units(r.WarmCapacity)
	}
	hot := PlannedTier{Name: "hot", Age: "0", Write: units(peakUnits), Read: hotRead, PITR: true}
	if low := units(rateUnits); low < hot.Write {
		hot.MinWrite = low
	}
	return []PlannedTier{
		hot,
		{Name: "warm", Age: "1 period", Write: minUnits, Read: warmRead, PITR: true},
		{Name: "cold", Age: "2 periods", Write: minUnits, Read: minUnits},
	}, []int{0, 1, 2}
}
