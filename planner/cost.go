package planner

import "math"

// StorageOverheadBytes is what DynamoDB adds to every item when it bills
// storage.
const StorageOverheadBytes = 100

// maxTimelineMonths bounds the timeline of a long retention.
const maxTimelineMonths = 120

// Cost is one month's bill, split by what is paid for.
type Cost struct {
	Write   float64 `json:"write"`
	Read    float64 `json:"read"`
	Storage float64 `json:"storage"`
	Total   float64 `json:"total"`
}

// Costs puts the three ways of paying side by side.
type Costs struct {
	// ProvisionedTiers pays for the tier schedule's provisioned capacity.
	ProvisionedTiers Cost `json:"provisioned_tiers"`
	// OnDemand pays per request: every event's write units and the read
	// load's read units.
	OnDemand Cost `json:"on_demand"`
	// NoTiering provisions every table alive with the hot tier's
	// capacity, as if old tables were never dialled down.
	NoTiering Cost `json:"no_tiering"`
}

// Storage is the stored data when the plan is costed.
type Storage struct {
	// RetainedHours is the mean age of the oldest data kept.
	RetainedHours float64 `json:"retained_hours"`
	// GB is the billed size in GB of 2^30 bytes: item bytes plus
	// StorageOverheadBytes per item.
	GB float64 `json:"gb"`
	// MonthlyCost is what storing it costs per month.
	MonthlyCost float64 `json:"monthly_cost"`
}

// Month is one month of the timeline, costed with provisioned tiers.
type Month struct {
	// Month counts from 1, the first month of operation.
	Month int `json:"month"`
	// StoredGB is the billed data at the month's end.
	StoredGB float64 `json:"stored_gb"`
	// Tables is the mean number of tables alive.
	Tables float64 `json:"tables"`
	// Tiers holds each tier's capacity cost, in tier order.
	Tiers []TierCost `json:"tiers"`
	// Storage is the month's storage cost.
	Storage float64 `json:"storage"`
	// Total adds it all up.
	Total float64 `json:"total"`
}

// TierCost is one tier's share of a month.
type TierCost struct {
	Name   string  `json:"name"`
	Tables float64 `json:"tables"`
	Cost   float64 `json:"cost"`
}

// costing prices a plan at any point of its life.
type costing struct {
	prices Prices
	tiers  []Tier
	fleet  fleet
	// billedBytesPerHour is the storage the stream adds per hour.
	billedBytesPerHour float64
	// writeUnitsPerHour and readUnitsPerHour are the request units on
	// demand.
	writeUnitsPerHour, readUnitsPerHour float64
}

func (c costing) capacityCost(write, read int64, tables float64) (w, r float64) {
	return tables * float64(write) * c.prices.WCUHour * hoursPerMonth,
		tables * float64(read) * c.prices.RCUHour * hoursPerMonth
}

func (c costing) storedGB(elapsed float64) float64 {
	return c.billedBytesPerHour * c.fleet.retainedHours(elapsed) / (1 << 30)
}

// at returns the three monthly bills, the tiers with their tables and
// costs, and the storage, at elapsed hours into the deployment.
func (c costing) at(elapsed float64) (Costs, []Tier, Storage) {
	s := Storage{RetainedHours: c.fleet.retainedHours(elapsed), GB: c.storedGB(elapsed)}
	s.MonthlyCost = s.GB * c.prices.StorageGBMonth

	var cs Costs
	tiers := make([]Tier, len(c.tiers))
	for i, t := range c.tiers {
		t.Tables = c.fleet.inTier(i, elapsed)
		w, r := c.capacityCost(t.Write, t.Read, t.Tables)
		t.MonthlyCost = w + r
		cs.ProvisionedTiers.Write += w
		cs.ProvisionedTiers.Read += r
		tiers[i] = t
	}
	hot := c.tiers[0]
	cs.NoTiering.Write, cs.NoTiering.Read = c.capacityCost(hot.Write, hot.Read, c.fleet.tables(elapsed))
	cs.OnDemand.Write = c.writeUnitsPerHour * hoursPerMonth / 1e6 * c.prices.WriteRequestMillion
	cs.OnDemand.Read = c.readUnitsPerHour * hoursPerMonth / 1e6 * c.prices.ReadRequestMillion
	for _, b := range []*Cost{&cs.ProvisionedTiers, &cs.OnDemand, &cs.NoTiering} {
		b.Storage = s.MonthlyCost
		b.Total = b.Write + b.Read + b.Storage
	}
	return cs, tiers, s
}

// timeline returns month after month of the provisioned-tier bill: up to
// the month after the oldest table reaches its end of life, or over the
// horizon when data is kept forever.
func (c costing) timeline(horizon float64) []Month {
	n := int(math.Ceil(horizon/hoursPerMonth - fitTolerance))
	if !math.IsInf(c.fleet.lifetime, 1) {
		n = int(math.Ceil((c.fleet.lifetime-c.fleet.prebuild)/hoursPerMonth)) + 1
	}
	n = min(max(n, 1), maxTimelineMonths)
	months := make([]Month, n)
	for k := range months {
		elapsed := float64(k+1) * hoursPerMonth
		cs, tiers, s := c.at(elapsed)
		m := Month{Month: k + 1, StoredGB: s.GB, Tables: c.fleet.tables(elapsed), Storage: s.MonthlyCost, Total: cs.ProvisionedTiers.Total}
		for _, t := range tiers {
			m.Tiers = append(m.Tiers, TierCost{Name: t.Name, Tables: t.Tables, Cost: t.MonthlyCost})
		}
		months[k] = m
	}
	return months
}
