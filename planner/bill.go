package planner

import (
	"fmt"
	"math"

	"github.com/timetabledb/timetable/storage"
)

// Bill is one month of what AWS bills for a deployment, line by line, as
// its invoice itemises it: each tier's provisioned capacity (unit-hours)
// or on-demand requests, each tier's storage in its table class,
// point-in-time recovery, the export of tables to S3 and the imports of
// restores, the scans that check a table before its delete, S3's storage
// and requests, and DynamoDB's free tier taken off. Every line names the
// price it is billed at (a key of PriceTable) and what is known of it.
// Usage.Bill makes one from quantities, whether a plan's or a recorded
// deployment's, so both are priced by one model.
type Bill struct {
	Currency string     `json:"currency"`
	Lines    []BillLine `json:"lines"`
	// Total is the month's total, free tier taken off.
	Total float64 `json:"total"`
	// Reserved is reserved capacity for the hot tier's steady capacity,
	// a commitment the total does not include (Reserved.Total does);
	// nil when no term within the plan's horizon saves anything.
	Reserved *Reserved `json:"reserved,omitempty"`
}

// BillLine is one line of a Bill: Quantity of Unit at UnitPrice makes
// Monthly. Free-tier lines have a negative quantity.
type BillLine struct {
	Item string `json:"item"`
	// Category groups lines as Cost does: write, read, storage, backup,
	// archive (S3 storage), archiving (export, import, scans, S3
	// requests) or free_tier.
	Category  string  `json:"category"`
	Quantity  float64 `json:"quantity"`
	Unit      string  `json:"unit"`
	UnitPrice float64 `json:"unit_price"`
	// Price is the key of the price in PriceTable and price files, and
	// Check what is known of it (Prices.Check).
	Price   string  `json:"price"`
	Check   string  `json:"check"`
	Monthly float64 `json:"monthly"`
}

// Categories of BillLine.
const (
	CategoryWrite     = "write"
	CategoryRead      = "read"
	CategoryStorage   = "storage"
	CategoryBackup    = "backup"
	CategoryArchive   = "archive"
	CategoryArchiving = "archiving"
	CategoryFreeTier  = "free_tier"
)

// Reserved is reserved capacity bought for a deployment's steady
// provisioned capacity: blocks of 100 units for a term, paid partly
// upfront and then by the hour, which replace as many provisioned units
// at the hourly list price. It is a commitment: the hourly price is paid
// for every hour of the term whatever is used, and a reservation cannot
// be cancelled, sold or moved.
type Reserved struct {
	// TermMonths is the term: the one-year term's (Prices.
	// ReservedTermMonths) or ReservedLongTermMonths, whichever saves more
	// of those no longer than the plan's horizon.
	TermMonths float64 `json:"term_months"`
	// WCU and RCU are the units reserved, multiples of 100.
	WCU int64 `json:"wcu"`
	RCU int64 `json:"rcu"`
	// Upfront is paid once at the start of the term; Hourly every hour
	// of it.
	Upfront float64 `json:"upfront"`
	Hourly  float64 `json:"hourly"`
	// Monthly is a month of the hourly price plus the upfront spread over
	// the term; Replaces is what the units it covers cost a month at the
	// provisioned price, Saves the difference.
	Monthly  float64 `json:"monthly"`
	Replaces float64 `json:"replaces"`
	Saves    float64 `json:"saves"`
	// Total is the bill's total with the reservation.
	Total float64 `json:"total"`
	// Commitment is what the term costs in all: the upfront payment and
	// every hour of the term.
	Commitment float64 `json:"commitment"`
}

// reservedTerm is one term reserved capacity is sold for and its prices
// of a block of 100 units.
type reservedTerm struct {
	months                                   float64
	wcuUpfront, wcuHour, rcuUpfront, rcuHour float64
}

// reservedTerms returns the terms p prices: the one-year term, and the
// three-year term unless its prices are all zero.
func (p Prices) reservedTerms() []reservedTerm {
	terms := []reservedTerm{{p.ReservedTermMonths, p.ReservedWCUUpfront, p.ReservedWCUHour, p.ReservedRCUUpfront, p.ReservedRCUHour}}
	long := reservedTerm{ReservedLongTermMonths, p.ReservedWCUUpfront3y, p.ReservedWCUHour3y, p.ReservedRCUUpfront3y, p.ReservedRCUHour3y}
	if long.wcuUpfront+long.wcuHour+long.rcuUpfront+long.rcuHour > 0 {
		terms = append(terms, long)
	}
	return terms
}

// TierUsage is one tier's share of a month's usage.
type TierUsage struct {
	Tier  string        `json:"tier"`
	Class storage.Class `json:"class"`
	// WCUHours and RCUHours are provisioned capacity unit-hours;
	// WriteUnits and ReadUnits on-demand request units.
	WCUHours   float64 `json:"wcu_hours"`
	RCUHours   float64 `json:"rcu_hours"`
	WriteUnits float64 `json:"write_units"`
	ReadUnits  float64 `json:"read_units"`
	// StorageGBMonth is the data the tier's tables hold over the month;
	// PITRGBMonth the part of it under point-in-time recovery.
	StorageGBMonth float64 `json:"storage_gb_month"`
	PITRGBMonth    float64 `json:"pitr_gb_month"`
}

// Usage is what a deployment uses in a month, the quantities AWS bills.
type Usage struct {
	Tiers []TierUsage `json:"tiers"`
	// Archived reports whether tables are archived: the archiving lines
	// are shown, zero or not.
	Archived bool `json:"archived"`
	// ExportGB is the table size DynamoDB's export to S3 exported;
	// ImportGB what restores imported from S3.
	ExportGB float64 `json:"export_gb"`
	ImportGB float64 `json:"import_gb"`
	// ScanReadUnits are the read request units of scans of whole tables
	// (the check before a delete, and archives made by scanning), of
	// tables in ScanClass billed on demand; ScanProvisioned when the
	// tables scanned are provisioned, whose units then cost nothing more.
	ScanReadUnits   float64       `json:"scan_read_units"`
	ScanClass       storage.Class `json:"scan_class"`
	ScanProvisioned bool          `json:"scan_provisioned,omitempty"`
	// ArchiveGBMonth is the archives kept on S3 over the month; S3Puts
	// and S3Gets the requests that wrote and read them.
	ArchiveGBMonth float64 `json:"archive_gb_month"`
	S3Puts         float64 `json:"s3_puts"`
	S3Gets         float64 `json:"s3_gets"`
}

// Bill prices the usage at p, line by line.
func (u Usage) Bill(p Prices) Bill {
	b := Bill{Currency: p.Currency, Lines: []BillLine{}}
	line := func(item, category string, q float64, unit, key string, show bool) {
		if q == 0 && !show {
			return
		}
		price := *p.field(key)
		b.Lines = append(b.Lines, BillLine{Item: item, Category: category, Quantity: q, Unit: unit,
			UnitPrice: price, Price: key, Check: p.Check(key), Monthly: q * price})
	}
	var standardGB, standardWCUHours, standardRCUHours, pitrGB float64
	for _, t := range u.Tiers {
		cp := p.class(t.Class)
		name := t.Tier + ", " + className(t.Class)
		line(name+": write capacity, provisioned", CategoryWrite, t.WCUHours, "WCU-hour", "wcu_hour"+cp.suffix, false)
		line(name+": read capacity, provisioned", CategoryRead, t.RCUHours, "RCU-hour", "rcu_hour"+cp.suffix, false)
		line(name+": write requests, on demand", CategoryWrite, t.WriteUnits/1e6, "million WRU", "write_request_million"+cp.suffix, false)
		line(name+": read requests, on demand", CategoryRead, t.ReadUnits/1e6, "million RRU", "read_request_million"+cp.suffix, false)
		line(name+": storage", CategoryStorage, t.StorageGBMonth, "GB-month", "storage_gb_month"+cp.suffix, false)
		pitrGB += t.PITRGBMonth
		if t.Class != storage.ClassInfrequentAccess {
			standardGB += t.StorageGBMonth
			standardWCUHours += t.WCUHours
			standardRCUHours += t.RCUHours
		}
	}
	line("point-in-time recovery", CategoryBackup, pitrGB, "GB-month", "pitr_gb_month", false)
	if u.Archived {
		line("export to S3", CategoryArchiving, u.ExportGB, "GB", "export_gb", true)
		line("import from S3 (restores)", CategoryArchiving, u.ImportGB, "GB", "import_gb", true)
	}
	if u.ScanReadUnits > 0 {
		key := "read_request_million" + p.class(u.ScanClass).suffix
		item := "scans of whole tables, eventually consistent, on demand"
		q := u.ScanReadUnits / 1e6
		if u.ScanProvisioned {
			// Within the tables' provisioned capacity: shown, not
			// billed again.
			item, q = "scans of whole tables, eventually consistent, in provisioned capacity (not billed again)", 0
		}
		line(item, CategoryArchiving, q, "million RRU", key, true)
	}
	line("S3 Standard: archives", CategoryArchive, u.ArchiveGBMonth, "GB-month", "archive_gb_month", u.Archived)
	line("S3: PUT requests", CategoryArchiving, u.S3Puts/1000, "1,000 requests", "s3_put_thousand", false)
	line("S3: GET requests", CategoryArchiving, u.S3Gets/1000, "1,000 requests", "s3_get_thousand", false)
	line("free tier: storage", CategoryFreeTier, -math.Min(p.FreeStorageGB, standardGB), "GB-month", "storage_gb_month", false)
	line("free tier: write capacity", CategoryFreeTier, -math.Min(p.FreeWCU*hoursPerMonth, standardWCUHours), "WCU-hour", "wcu_hour", false)
	line("free tier: read capacity", CategoryFreeTier, -math.Min(p.FreeRCU*hoursPerMonth, standardRCUHours), "RCU-hour", "rcu_hour", false)
	for _, l := range b.Lines {
		b.Total += l.Monthly
	}
	return b
}

// Sum returns the monthly total of the bill's lines of a category.
func (b Bill) Sum(category string) float64 {
	s := 0.0
	for _, l := range b.Lines {
		if l.Category == category {
			s += l.Monthly
		}
	}
	return s
}

// reserved returns reserved capacity for the capacity a deployment has
// provisioned at every hour, Standard class (write and read units), in
// whole blocks of 100: of the terms no longer than horizonMonths, the
// one that saves the most a month, its upfront payment spread over the
// term; nil when none fits or none saves anything. A term longer than
// the horizon is not weighed: it commits to months the plan does not
// see.
func reserved(p Prices, bill Bill, write, read int64, horizonMonths float64) *Reserved {
	const block = 100
	wb, rb := write/block, read/block
	if wb == 0 && rb == 0 {
		return nil
	}
	var best *Reserved
	for _, t := range p.reservedTerms() {
		if t.months <= 0 || t.months > horizonMonths+fitTolerance {
			continue
		}
		r := &Reserved{TermMonths: t.months, WCU: wb * block, RCU: rb * block}
		r.Upfront = float64(wb)*t.wcuUpfront + float64(rb)*t.rcuUpfront
		r.Hourly = float64(wb)*t.wcuHour + float64(rb)*t.rcuHour
		r.Monthly = r.Hourly*hoursPerMonth + r.Upfront/r.TermMonths
		r.Replaces = float64(r.WCU)*p.WCUHour*hoursPerMonth + float64(r.RCU)*p.RCUHour*hoursPerMonth
		r.Saves = r.Replaces - r.Monthly
		r.Total = bill.Total - r.Saves
		r.Commitment = r.Upfront + r.Hourly*hoursPerMonth*r.TermMonths
		if r.Saves > 0 && (best == nil || r.Saves > best.Saves) {
			best = r
		}
	}
	return best
}

// reservation returns reserved capacity for a deployment whose tiers are
// tiers, billed bill: the hot tier's floor when it is provisioned in the
// Standard class (one hot table is always provisioned, at its floor when
// auto scaled), weighed over the input's horizon; nil otherwise.
func (in Input) reservation(tiers []PlannedTier, bill Bill) *Reserved {
	hot := tiers[0]
	if hot.Billing != BillingProvisioned || hot.Class != storage.ClassStandard {
		return nil
	}
	steady := hot.Write
	if hot.MinWrite > 0 {
		steady = hot.MinWrite
	}
	return reserved(in.Prices, bill, steady, hot.Read, in.Horizon.Hours()/hoursPerMonth)
}

// Buy says what to buy: "buy 800 reserved WCU for 1 year ($1,200.00
// upfront, then $74.75 a month)", its RCU too when it has any.
func (r Reserved) Buy(currency string) string {
	units := FormatNumber(float64(r.WCU)) + " reserved WCU"
	switch {
	case r.WCU == 0:
		units = FormatNumber(float64(r.RCU)) + " reserved RCU"
	case r.RCU > 0:
		units += " and " + FormatNumber(float64(r.RCU)) + " reserved RCU"
	}
	return fmt.Sprintf("buy %s for %s (%s upfront, then %s a month)", units, TermName(r.TermMonths),
		FormatMoney(r.Upfront, currency), FormatMoney(r.Hourly*hoursPerMonth, currency))
}

// TermName spells a reservation's term: "1 year", "3 years", or months.
func TermName(months float64) string {
	switch {
	case months == 12:
		return "1 year"
	case months > 0 && math.Mod(months, 12) == 0:
		return FormatNumber(months/12) + " years"
	}
	return count(months, "month")
}
