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

// Cost is one month's bill, split by what is paid for: the sums of a
// Bill's categories.
type Cost struct {
	Write   float64 `json:"write"`
	Read    float64 `json:"read"`
	Storage float64 `json:"storage"`
	// Backup is point-in-time recovery.
	Backup float64 `json:"backup"`
	// Archive is what the archives on S3 cost to store.
	Archive float64 `json:"archive"`
	// Archiving is what moving tables to S3 costs: the export, imports,
	// the scans that check a table before its delete, S3 requests.
	Archiving float64 `json:"archiving"`
	// FreeTier is DynamoDB's free tier, taken off (zero or negative).
	FreeTier float64 `json:"free_tier"`
	Total    float64 `json:"total"`
}

// costOf sums a bill by category.
func costOf(b Bill) Cost {
	return Cost{
		Write:     b.Sum(CategoryWrite),
		Read:      b.Sum(CategoryRead),
		Storage:   b.Sum(CategoryStorage),
		Backup:    b.Sum(CategoryBackup),
		Archive:   b.Sum(CategoryArchive),
		Archiving: b.Sum(CategoryArchiving),
		FreeTier:  b.Sum(CategoryFreeTier),
		Total:     b.Total,
	}
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
	// itemBytesPerHour is the item bytes the stream adds per hour, which
	// a scan reads; nativeExport reports whether tables are archived by
	// DynamoDB's export to S3 (an s3:// target) rather than by a scan;
	// restoreGB is the GB imported from archives a month.
	itemBytesPerHour float64
	nativeExport     bool
	restoreGB        float64
	// hotBilledBytesPerHour, when set, is the storage the stream adds per
	// hour to the hot tier, billedBytesPerHour being the later tiers':
	// rows packed into chunks as tables leave the hot tier, whose scan
	// and writes are compactReadUnitsPerHour and compactWriteUnitsPerHour.
	hotBilledBytesPerHour                             float64
	compactReadUnitsPerHour, compactWriteUnitsPerHour float64
}

// compactionTier names the usage of packing tables into chunks.
const compactionTier = "compaction"

func (c costing) capacityCost(class storage.Class, write, read int64, tables float64) (w, r float64) {
	p := c.prices.class(class)
	return tables * float64(write) * p.wcuHour * hoursPerMonth,
		tables * float64(read) * p.rcuHour * hoursPerMonth
}

// onDemandCost returns what tier i's requests cost per month on demand.
func (c costing) onDemandCost(i int, class storage.Class) (w, r float64) {
	p := c.prices.class(class)
	writes, reads := c.onDemandUnits(i)
	return writes / 1e6 * p.writeMillion, reads / 1e6 * p.readMillion
}

func (c costing) gb(hours float64) float64 { return c.billedBytesPerHour * hours / (1 << 30) }

// tierGB returns the GB tier i's tables hold at elapsed hours.
func (c costing) tierGB(i int, elapsed float64) float64 {
	hours := c.fleet.tierDataHours(i, elapsed)
	if i == 0 && c.hotBilledBytesPerHour > 0 {
		return c.hotBilledBytesPerHour * hours / (1 << 30)
	}
	return c.gb(hours)
}

// at returns the monthly bills, the tiers with their tables, billing and
// costs, the storage, and the usage and bill as recommended, at elapsed
// hours into the deployment.
func (c costing) at(elapsed float64) (Costs, []PlannedTier, Storage, Usage, Bill) {
	s := Storage{RetainedHours: c.fleet.retainedHours(elapsed)}
	if c.fleet.archived {
		s.ArchivedHours = math.Max(0, c.fleet.keptHours(elapsed)-s.RetainedHours)
		s.ArchiveGB = c.archiveBytesPerHour * s.ArchivedHours / (1 << 30)
		s.ArchiveMonthlyCost = s.ArchiveGB * c.prices.ArchiveGBMonth
	}
	tiers := make([]PlannedTier, len(c.tiers))
	var rec, prov, dem Usage
	for i, t := range c.tiers {
		o := c.options[i]
		t.Class = o.Class
		t.Tables = c.fleet.inTier(i, elapsed)
		t.StoredGB = c.tierGB(i, elapsed)
		s.GB += t.StoredGB
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
		t.CapacityCost = dw + dr
		if t.Billing == BillingProvisioned {
			t.CapacityCost = pw + pr
		}
		t.MonthlyCost = t.CapacityCost + t.StorageCost
		tiers[i] = t

		base := TierUsage{Tier: t.Name, Class: t.Class, StorageGBMonth: t.StoredGB}
		if t.PITR {
			base.PITRGBMonth = t.StoredGB
		}
		pu, du := base, base
		pu.WCUHours = float64(t.Write) * t.Tables * hoursPerMonth
		pu.RCUHours = float64(t.Read) * t.Tables * hoursPerMonth
		du.WriteUnits, du.ReadUnits = c.onDemandUnits(i)
		prov.Tiers = append(prov.Tiers, pu)
		dem.Tiers = append(dem.Tiers, du)
		if t.Billing == BillingProvisioned {
			rec.Tiers = append(rec.Tiers, pu)
		} else {
			rec.Tiers = append(rec.Tiers, du)
		}
	}
	if c.compactWriteUnitsPerHour > 0 && len(tiers) > 1 {
		// Tables are packed as they leave the hot tier, a month's a
		// month, into the warm tier's class, on demand.
		share := math.Max(0, math.Min(1, (elapsed-c.fleet.starts[1])/hoursPerMonth))
		cu := TierUsage{Tier: compactionTier, Class: tiers[1].Class,
			ReadUnits: c.compactReadUnitsPerHour * hoursPerMonth * share, WriteUnits: c.compactWriteUnitsPerHour * hoursPerMonth * share}
		for _, u := range []*Usage{&rec, &prov, &dem} {
			u.Tiers = append(u.Tiers, cu)
		}
	}
	hot, last := tiers[0], tiers[len(tiers)-1]
	// No tiering: every table alive keeps the hot tier's capacity and
	// point-in-time recovery, in the Standard class.
	all := c.fleet.tables(elapsed)
	flat := Usage{Tiers: []TierUsage{{Tier: "every table", Class: storage.ClassStandard,
		WCUHours: float64(hot.Write) * all * hoursPerMonth, RCUHours: float64(hot.Read) * all * hoursPerMonth,
		StorageGBMonth: s.GB, PITRGBMonth: s.GB}}}
	var cs Costs
	var bill Bill
	for _, u := range []struct {
		usage *Usage
		cost  *Cost
		last  bool
	}{{&rec, &cs.Recommended, last.Billing == BillingProvisioned}, {&prov, &cs.ProvisionedTiers, true}, {&dem, &cs.OnDemand, false}, {&flat, &cs.NoTiering, true}} {
		c.archiving(u.usage, elapsed, s, last.Class, u.last)
		b := u.usage.Bill(c.prices)
		*u.cost = costOf(b)
		if u.cost == &cs.Recommended {
			bill = b
		}
	}
	return cs, tiers, s, rec, bill
}

// onDemandUnits returns the request units tier i takes per month on
// demand: every write goes to the hot tier; reads as the load gives.
func (c costing) onDemandUnits(i int) (writes, reads float64) {
	switch i {
	case 0:
		return c.writeUnitsPerHour * hoursPerMonth, c.hotReadUnitsPerHour * hoursPerMonth
	case 1:
		return 0, c.warmReadUnitsPerHour * hoursPerMonth
	}
	return 0, 0
}

// Archive requests: an archive's files are written to S3 in parts of
// archivePartBytes (package archive's S3Options.PartSize), each a PUT,
// and a few more PUTs make it (the multipart uploads' creations and
// completions, the manifest written, then rewritten verified); it is
// read back whole to verify it, and the export's files and manifests are
// read once to make it.
const (
	archivePartBytes     = 16 << 20
	archiveFixedPuts     = 6
	archiveFixedGets     = 4
	archiveGetsPerPart   = 2
	scanBytesPerReadUnit = readUnitBytes * 2 // eventually consistent
)

// archiving fills in the usage of moving tables to S3 at elapsed hours:
// each table is exported (DynamoDB's export, or a scan for another
// target) and scanned to check it before its delete, once, when it
// leaves DynamoDB; in steady state a month of data leaves a month. The
// scans read tables of the last tier, of class last, provisioned or not.
func (c costing) archiving(u *Usage, elapsed float64, s Storage, last storage.Class, provisioned bool) {
	if !c.fleet.archived {
		return
	}
	u.Archived = true
	u.ArchiveGBMonth = s.ArchiveGB
	u.ImportGB = c.restoreGB
	// The share of the month in which tables leave DynamoDB: none before
	// the first table's end, all of it from the month after.
	first := c.fleet.lifetime - c.fleet.prebuild
	share := math.Max(0, math.Min(1, (elapsed-first)/hoursPerMonth))
	if share == 0 {
		return
	}
	scans := 1.0 // the check before the delete
	if c.nativeExport {
		u.ExportGB = c.billedBytesPerHour * hoursPerMonth * share / (1 << 30)
	} else {
		scans++ // the archive's own scan
	}
	u.ScanReadUnits = scans * c.itemBytesPerHour * hoursPerMonth * share / scanBytesPerReadUnit
	u.ScanClass, u.ScanProvisioned = last, provisioned
	tables := hoursPerMonth * share / c.fleet.period * c.fleet.perPeriod
	puts, gets := ArchiveRequests(c.archiveBytesPerHour * c.fleet.period / c.fleet.perPeriod)
	u.S3Puts, u.S3Gets = tables*puts, tables*gets
}

// ArchiveRequests returns the S3 PUT and GET requests that make and
// verify the archive of a table, of archiveBytes on S3.
func ArchiveRequests(archiveBytes float64) (puts, gets float64) {
	parts := math.Max(1, math.Ceil(archiveBytes/archivePartBytes))
	return parts + archiveFixedPuts, archiveGetsPerPart*parts + archiveFixedGets
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
		cs, tiers, s, _, _ := c.at(elapsed)
		m := Month{Month: k + 1, StoredGB: s.GB, ArchiveGB: s.ArchiveGB, Tables: c.fleet.tables(elapsed), Storage: s.MonthlyCost + s.ArchiveMonthlyCost, Total: cs.Recommended.Total}
		for _, t := range tiers {
			m.Tiers = append(m.Tiers, TierCost{Name: t.Name, Tables: t.Tables, Cost: t.CapacityCost})
		}
		months[k] = m
	}
	return months
}
