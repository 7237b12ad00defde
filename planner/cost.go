package planner

import (
	"math"

	"github.com/timetabledb/timetable/storage"
)

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
	// Archive is what the archives on S3 cost to store.
	Archive float64 `json:"archive"`
	Total   float64 `json:"total"`
}

// Costs puts the ways of paying side by side.
type Costs struct {
	// Recommended bills each tier the way PlannedTier.Billing says: on demand,
	// or provisioned where that is cheaper.
	Recommended Cost `json:"recommended"`
	// ProvisionedTiers provisions every tier with its capacity, as the
	// AWS blog does.
	ProvisionedTiers Cost `json:"provisioned_tiers"`
	// OnDemand pays per request in every tier: every event's write units
	// and the read load's read units.
	OnDemand Cost `json:"on_demand"`
	// NoTiering provisions every table alive with the hot tier's
	// capacity in the Standard class, as if old tables were never
	// dialled down.
	NoTiering Cost `json:"no_tiering"`
}

// Storage is the stored data when the plan is costed.
type Storage struct {
	// RetainedHours is the mean age of the oldest data kept in DynamoDB.
	RetainedHours float64 `json:"retained_hours"`
	// GB is the billed size in DynamoDB in GB of 2^30 bytes: item bytes
	// plus StorageOverheadBytes per item. StandardGB and StandardIAGB
	// split it by table class.
	GB           float64 `json:"gb"`
	StandardGB   float64 `json:"standard_gb"`
	StandardIAGB float64 `json:"standard_ia_gb"`
	// MonthlyCost is what storing GB in DynamoDB costs per month.
	MonthlyCost float64 `json:"monthly_cost"`
	// ArchivedHours is the hours of data kept in archives, ArchiveGB
	// their size (item bytes times the archive ratio) and
	// ArchiveMonthlyCost what S3 charges for them.
	ArchivedHours      float64 `json:"archived_hours,omitempty"`
	ArchiveGB          float64 `json:"archive_gb,omitempty"`
	ArchiveMonthlyCost float64 `json:"archive_monthly_cost,omitempty"`
}

// Month is one month of the timeline, costed as recommended.
type Month struct {
	// Month counts from 1, the first month of operation.
	Month int `json:"month"`
	// StoredGB is the billed data in DynamoDB at the month's end;
	// ArchiveGB the archives'.
	StoredGB  float64 `json:"stored_gb"`
	ArchiveGB float64 `json:"archive_gb,omitempty"`
	// Tables is the mean number of tables alive.
	Tables float64 `json:"tables"`
	// Tiers holds each tier's capacity or request cost, in tier order.
	Tiers []TierCost `json:"tiers"`
	// Storage is the month's storage cost, DynamoDB and archives.
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
	prices  Prices
	tiers   []PlannedTier
	options []TierOptions
	fleet   fleet
	// billedBytesPerHour is the storage the stream adds per hour in
	// DynamoDB, archiveBytesPerHour in archives.
	billedBytesPerHour, archiveBytesPerHour float64
	// writeUnitsPerHour is the write request units on demand, all taken
	// by the hot table; hotReadUnitsPerHour and warmReadUnitsPerHour the
	// read request units of the read load.
	writeUnitsPerHour, hotReadUnitsPerHour, warmReadUnitsPerHour float64
}

func (c costing) capacityCost(class storage.Class, write, read int64, tables float64) (w, r float64) {
	p := c.prices.class(class)
	return tables * float64(write) * p.wcuHour * hoursPerMonth,
		tables * float64(read) * p.rcuHour * hoursPerMonth
}

// onDemandCost returns what tier i's requests cost per month on demand.
func (c costing) onDemandCost(i int, class storage.Class) (w, r float64) {
	p := c.prices.class(class)
	var writes, reads float64
	switch i {
	case 0:
		writes, reads = c.writeUnitsPerHour, c.hotReadUnitsPerHour
	case 1:
		reads = c.warmReadUnitsPerHour
	}
	return writes * hoursPerMonth / 1e6 * p.writeMillion, reads * hoursPerMonth / 1e6 * p.readMillion
}

func (c costing) gb(hours float64) float64 { return c.billedBytesPerHour * hours / (1 << 30) }

// at returns the monthly bills, the tiers with their tables, billing and
// costs, and the storage, at elapsed hours into the deployment.
func (c costing) at(elapsed float64) (Costs, []PlannedTier, Storage) {
	s := Storage{RetainedHours: c.fleet.retainedHours(elapsed), GB: c.gb(c.fleet.retainedHours(elapsed))}
	if c.fleet.archived {
		s.ArchivedHours = math.Max(0, c.fleet.keptHours(elapsed)-s.RetainedHours)
		s.ArchiveGB = c.archiveBytesPerHour * s.ArchivedHours / (1 << 30)
		s.ArchiveMonthlyCost = s.ArchiveGB * c.prices.ArchiveGBMonth
	}
	var cs Costs
	tiers := make([]PlannedTier, len(c.tiers))
	for i, t := range c.tiers {
		o := c.options[i]
		t.Class = o.Class
		t.Tables = c.fleet.inTier(i, elapsed)
		t.StoredGB = c.gb(c.fleet.tierDataHours(i, elapsed))
		t.StorageCost = t.StoredGB * c.prices.class(t.Class).storageGBMonth
		if t.Class == storage.ClassInfrequentAccess {
			s.StandardIAGB += t.StoredGB
		} else {
			s.StandardGB += t.StoredGB
		}
		s.MonthlyCost += t.StorageCost
		pw, pr := c.capacityCost(t.Class, t.Write, t.Read, t.Tables)
		dw, dr := c.onDemandCost(i, t.Class)
		t.ProvisionedCost, t.OnDemandCost = pw+pr, dw+dr
		t.Billing = o.Billing
		if t.Billing == "" {
			t.Billing = BillingOnDemand
			if t.ProvisionedCost < t.OnDemandCost {
				t.Billing = BillingProvisioned
			}
		}
		w, r := dw, dr
		if t.Billing == BillingProvisioned {
			w, r = pw, pr
		}
		t.CapacityCost = w + r
		t.MonthlyCost = t.CapacityCost + t.StorageCost
		cs.Recommended.Write += w
		cs.Recommended.Read += r
		cs.ProvisionedTiers.Write += pw
		cs.ProvisionedTiers.Read += pr
		cs.OnDemand.Write += dw
		cs.OnDemand.Read += dr
		tiers[i] = t
	}
	hot := c.tiers[0]
	cs.NoTiering.Write, cs.NoTiering.Read = c.capacityCost(storage.ClassStandard, hot.Write, hot.Read, c.fleet.tables(elapsed))
	for _, b := range []*Cost{&cs.Recommended, &cs.ProvisionedTiers, &cs.OnDemand} {
		b.Storage = s.MonthlyCost
	}
	cs.NoTiering.Storage = s.GB * c.prices.StorageGBMonth
	for _, b := range []*Cost{&cs.Recommended, &cs.ProvisionedTiers, &cs.OnDemand, &cs.NoTiering} {
		b.Archive = s.ArchiveMonthlyCost
		b.Total = b.Write + b.Read + b.Storage + b.Archive
	}
	return cs, tiers, s
}

// timeline returns month after month of the recommended bill: up to the
// month after the oldest data reaches its end of life, or over the
// horizon when data is kept forever.
func (c costing) timeline(horizon float64) []Month {
	n := int(math.Ceil(horizon/hoursPerMonth - fitTolerance))
	if end := c.fleet.period/2 + c.fleet.kept; !math.IsInf(c.fleet.lifetime, 1) || c.fleet.archived {
		life := c.fleet.lifetime - c.fleet.prebuild
		if c.fleet.archived {
			life = math.Max(life, end)
		}
		if !math.IsInf(life, 1) {
			n = int(math.Ceil(life/hoursPerMonth)) + 1
		}
	}
	n = min(max(n, 1), maxTimelineMonths)
	months := make([]Month, n)
	for k := range months {
		elapsed := float64(k+1) * hoursPerMonth
		cs, tiers, s := c.at(elapsed)
		m := Month{Month: k + 1, StoredGB: s.GB, ArchiveGB: s.ArchiveGB, Tables: c.fleet.tables(elapsed), Storage: s.MonthlyCost + s.ArchiveMonthlyCost, Total: cs.Recommended.Total}
		for _, t := range tiers {
			m.Tiers = append(m.Tiers, TierCost{Name: t.Name, Tables: t.Tables, Cost: t.CapacityCost})
		}
		months[k] = m
	}
	return months
}
