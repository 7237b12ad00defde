package planner

import (
	"fmt"
	"math"
	"strings"

	"github.com/timetabledb/timetable/storage"
)

// SchemaVersion is the version of the JSON schema of Report. It changes
// only when a field changes meaning or is removed; fields may be added
// without a change. Version 4 provisions at auto scaling's target, gives
// tiers no read capacity the input does not ask for, and adds the bill's
// categories (backup, archiving, free tier) to every Cost's total.
const SchemaVersion = 4

// Report is a capacity plan and its working. Its JSON form is the stable
// schema of `timetable plan --format json`; sizes are in bytes, durations
// in hours, rates per second, money per month in Prices.Currency.
type Report struct {
	SchemaVersion int      `json:"schema_version"`
	Workload      Workload `json:"workload"`
	Item          Item     `json:"item"`
	// BytesPerHour and BytesPerDay are what the whole stream stores at
	// the average rate.
	BytesPerHour float64   `json:"bytes_per_hour"`
	BytesPerDay  float64   `json:"bytes_per_day"`
	Partition    Partition `json:"partition"`
	// Candidates are the periods considered, shortest first.
	Candidates []Candidate `json:"periods"`
	// Period is the recommended period, PeriodHours its mean length.
	Period      string  `json:"period"`
	PeriodHours float64 `json:"period_hours"`
	// Shards is the recommended shard count: what the peak of one series
	// needs at PartitionWriteUnits a partition key.
	Shards int           `json:"shards"`
	Reads  *Reads        `json:"reads,omitempty"`
	Tiers  []PlannedTier `json:"tiers"`
	Tables Tables        `json:"tables"`
	// CostedAt says when the monthly costs apply: "steady state" once
	// the retention is reached, or "month N" when data is kept forever.
	CostedAt string  `json:"costed_at"`
	Storage  Storage `json:"storage"`
	Cost     Costs   `json:"monthly_cost"`
	// Usage is what the recommended deployment uses a month when costed
	// (CostedAt), and Bill what AWS bills for it, line by line: its
	// total is Cost.Recommended's.
	Usage Usage `json:"usage"`
	Bill  Bill  `json:"bill"`
	// Stored is what an event costs in the plan's layout; Layouts the
	// recommended bill in each layout, when the input chose none.
	Stored  StoredEvent  `json:"stored"`
	Layouts []LayoutCost `json:"layouts,omitempty"`
	// PackedLater prices chunks for events written one at a time and
	// packed when their table leaves the hot tier, an option the plan
	// does not apply; nil when events come in batches.
	PackedLater *PackedLater `json:"packed_later,omitempty"`
	// Packed is, in the chunk layout, what the lifecycle's packing of
	// each table as it leaves the hot tier stores and costs, priced in
	// the bill: the hot tier stores Stored's chunks, the later tiers
	// Packed.Event's; nil for rows, which are not packed. Reads of warm
	// tables are priced on the chunks as written, an upper bound.
	Packed *Packing `json:"packed,omitempty"`
	// Billing sums up the tiers' billing: provisioned or on_demand when
	// every tier has it, BillingMixed otherwise.
	Billing  string  `json:"recommended_billing"`
	Family   Family  `json:"family"`
	Timeline []Month `json:"timeline"`
	Prices   Prices  `json:"prices"`
	// Working explains each figure, step by step.
	Working []string `json:"working"`
	// Warnings are what needs the reader's attention.
	Warnings []string `json:"warnings"`
}

// Workload echoes the input, defaults applied.
type Workload struct {
	Rate              float64 `json:"rate_per_sec"`
	Peak              float64 `json:"peak_per_sec"`
	RetentionHours    float64 `json:"retention_hours"`
	HorizonHours      float64 `json:"horizon_hours"`
	Series            int     `json:"series"`
	ReadsPerSec       float64 `json:"reads_per_sec"`
	ReadRangeHours    float64 `json:"read_range_hours"`
	ArchiveAfterHours float64 `json:"archive_after_hours,omitempty"`
	ArchiveRatio      float64 `json:"archive_ratio,omitempty"`
	WriteTimeGrouping string  `json:"write_time_grouping"`
	PrebuildHours     float64 `json:"prebuild_hours"`
	GraceHours        float64 `json:"grace_hours"`
}

// Tables counts the family's physical tables.
type Tables struct {
	// PerPeriod is the mean number of tables a period gets: more than 1
	// when write-time grouping splits periods that straddle months.
	PerPeriod float64 `json:"per_period"`
	// Alive is the most tables alive at once (at the horizon when data is
	// kept forever), counting the prebuilt next table.
	Alive int `json:"alive"`
	// PerYear is the number of tables created per year.
	PerYear float64 `json:"per_year"`
	// Quota is DynamoDB's default table quota per region, which AWS
	// raises on request up to HardQuota.
	Quota     int `json:"quota"`
	HardQuota int `json:"hard_quota"`
	// DaysToQuota is, when data is kept forever, after how many days the
	// family alone reaches Quota.
	DaysToQuota float64 `json:"days_to_quota,omitempty"`
}

// Plan works out a capacity plan for the input: size the item, shard for
// the peak of one series at 1,000 write units a partition key, then for
// every period length count the tables and cost them, each tier billed
// on demand or provisioned, whichever is cheaper, and stored in its table
// class; the recommended period is the cheapest within the table quota.
// It returns an error wrapping ErrInvalidInput, ErrItemTooLarge or
// ErrTooFast when no plan can be made.
//
// With no Input.Layout it plans both layouts, rows and chunks, and
// recommends chunks where they save more than half a percent and one
// unit of currency a month; Report.Layouts shows both.
func Plan(in Input) (Report, error) {
	in = in.withDefaults()
	if err := in.validate(); err != nil {
		return Report{}, err
	}
	layouts := []string{in.Layout}
	if in.Layout == "" {
		layouts = []string{LayoutRow, LayoutChunk}
	}
	var best Report
	var costs []LayoutCost
	var rows []Report
	for i, l := range layouts {
		li := in
		li.Layout = l
		r, err := planLayout(li)
		if err != nil && in.Layout == "" && i > 0 {
			// Chunks cannot be planned (a chunk of one event over the
			// shards' limit): rows are.
			continue
		}
		if err != nil {
			return Report{}, err
		}
		costs = append(costs, LayoutCost{Event: r.Stored, Period: r.Period, Total: r.Cost.Recommended.Total, Reserved: r.Bill.Reserved})
		if l == LayoutRow {
			rows = append(rows, r)
		}
		// Events written one at a time stay rows where a chunk of one
		// is larger than its row, even though packed it costs less:
		// packing them later is the option PackedLater shows, not the
		// recommendation, which prices events as they are written.
		larger := l == LayoutChunk && in.BatchEvents <= 1 && len(rows) > 0 &&
			r.Stored.Bytes+r.Stored.OverheadBytes >= rows[0].Stored.Bytes+rows[0].Stored.OverheadBytes
		if i == 0 || !larger && r.Cost.Recommended.Total < best.Cost.Recommended.Total*(1-cheapestTolerance)-cheapestSlack {
			best = r
		}
	}
	best.Layouts = costs
	if best.PackedLater == nil && best.Stored.Layout == LayoutChunk && len(rows) > 0 {
		best.PackedLater = rows[0].PackedLater
	}
	best.explainLayouts(in)
	return best, nil
}

// planLayout plans for the input's layout, which is set.
func planLayout(in Input) (Report, error) {
	it, err := in.item()
	if err != nil {
		return Report{}, err
	}
	st := in.storedEvent(it)
	bytesPerSec := in.Rate * st.Bytes
	rateUnits, peakUnits := in.Rate*st.WriteUnits, in.Peak*st.WriteUnits
	n, err := shards(peakUnits, in.Series)
	if err != nil {
		return Report{}, err
	}
	r := Report{
		SchemaVersion: SchemaVersion,
		Workload: Workload{
			Rate:              in.Rate,
			Peak:              in.Peak,
			RetentionHours:    in.Retention.Hours(),
			HorizonHours:      in.Horizon.Hours(),
			Series:            in.Series,
			ReadsPerSec:       in.ReadsPerSec,
			ReadRangeHours:    in.ReadRange.Hours(),
			WriteTimeGrouping: in.WriteTimeGrouping,
			PrebuildHours:     in.Prebuild.Hours(),
			GraceHours:        in.Grace.Hours(),
			ArchiveAfterHours: in.ArchiveAfter.Hours(),
		},
		Item:         it,
		BytesPerHour: bytesPerSec * 3600,
		BytesPerDay:  bytesPerSec * 86400,
		Partition:    partitionFill(bytesPerSec, in.Series, n, in.Headroom),
		Shards:       n,
		Reads:        in.reads(Item{Bytes: st.Bytes}, n),
		Stored:       st,
		Prices:       in.Prices,
		Working:      []string{},
		Warnings:     []string{},
	}
	if in.ArchiveAfter > 0 {
		r.Workload.ArchiveRatio = in.ArchiveRatio
	}
	costAt := math.Inf(1)
	r.CostedAt = "steady state"
	if in.Retention == 0 {
		costAt = in.Horizon.Hours()
		r.CostedAt = fmt.Sprintf("month %d", int(math.Ceil(costAt/hoursPerMonth-fitTolerance)))
	}
	tiers, ages := tierSchedule(rateUnits, peakUnits, r.Reads)
	costings := make([]costing, len(periodKinds))
	for i, k := range periodKinds {
		fl := newFleet(in, k, ages)
		c := costing{
			prices:              in.Prices,
			tiers:               tiers,
			options:             in.tierOptions(),
			fleet:               fl,
			billedBytesPerHour:  in.Rate * (st.Bytes + st.OverheadBytes) * 3600,
			archiveBytesPerHour: in.Rate * it.Bytes * 3600 * in.ArchiveRatio,
			writeUnitsPerHour:   in.Rate * st.WriteUnits * 3600,
			itemBytesPerHour:    bytesPerSec * 3600,
			nativeExport:        strings.HasPrefix(in.ArchiveTarget, "s3://"),
			restoreGB:           in.RestoreGB,
		}
		if in.Layout == LayoutChunk {
			// The lifecycle packs every chunk table as it leaves the
			// hot tier (a rewrite into its next physical table).
			in.packing(&c, st, it)
		}
		if rd := r.Reads; rd != nil {
			c.hotReadUnitsPerHour = in.ReadsPerSec * rd.UnitsPerQuery * 3600
			// A query reaches back into the warm table when its range
			// crosses the period's start.
			c.warmReadUnitsPerHour = in.ReadsPerSec * rd.WarmUnitsPerQuery * 3600 * math.Min(1, in.ReadRange.Hours()/k.average)
		}
		costings[i] = c
		cs, _, _, _, _ := c.at(costAt)
		alive := fl.mostTables(costAt)
		r.Candidates = append(r.Candidates, Candidate{
			Period:         k.name,
			Hours:          k.longest,
			PartitionBytes: k.longest * r.Partition.BytesPerHour,
			Fill:           k.longest * r.Partition.BytesPerHour / r.Partition.UsableBytes,
			Tables:         alive,
			MonthlyCost:    cs.Recommended.Total,
			WithinQuota:    alive*5 < TableQuota*4,
		})
	}
	chosen := choosePeriod(r.Candidates)
	if in.Period != "" {
		chosen = periodIndex(in.Period)
	}
	k, c := periodKinds[chosen], costings[chosen]
	r.Period, r.PeriodHours = k.name, k.average
	r.Cost, r.Tiers, r.Storage, r.Usage, r.Bill = c.at(costAt)
	if in.Layout == LayoutChunk {
		r.Packed = &Packing{Event: in.packedEvent(it)}
		r.Packed.ReadUnits, r.Packed.WriteUnits = compactionUnits(r.Usage)
	}
	r.Bill.Reserved = in.reservation(r.Tiers, r.Bill)
	r.Timeline = c.timeline(in.Horizon.Hours())
	fl := c.fleet
	r.Tables = Tables{
		PerPeriod: fl.perPeriod,
		Alive:     fl.mostTables(costAt),
		PerYear:   365 * 24 / fl.period * fl.perPeriod,
		Quota:     TableQuota,
		HardQuota: TableHardQuota,
	}
	if math.IsInf(fl.lifetime, 1) {
		r.Tables.DaysToQuota = TableQuota / r.Tables.PerYear * 365
	}
	r.Billing = ""
	for _, t := range r.Tiers {
		switch {
		case r.Billing == "":
			r.Billing = t.Billing
		case r.Billing != t.Billing:
			r.Billing = BillingMixed
		}
	}
	r.Family = in.family(r.Period, r.Shards, r.Tiers)
	if in.Layout == LayoutRow && in.BatchEvents == 1 {
		r.PackedLater = in.packedLater(c, it, costAt)
	}
	r.explain(in)
	return r, nil
}

// packedLater prices chunks for events written one at a time and packed
// as their table leaves the hot tier: the row costing c with the data of
// later tiers in chunks of a window of each series (packing). (In place,
// each row deleted would cost a write unit more, which on DynamoDB costs
// more than the rows it saves.) The hot tier is the rows', and so is its
// reserved capacity (Bill.Reserved).
func (in Input) packedLater(c costing, it Item, costAt float64) *PackedLater {
	in.packing(&c, in.storedEvent(it), it)
	_, tiers, _, u, b := c.at(costAt)
	b.Reserved = in.reservation(tiers, b)
	p := &PackedLater{Packing: Packing{Event: in.packedEvent(it)}, Bill: b}
	p.ReadUnits, p.WriteUnits = compactionUnits(u)
	return p
}

// packedEvent returns what an event costs once its table is packed: a
// chunk a window of each series, split under DynamoDB's item limit.
func (in Input) packedEvent(it Item) StoredEvent {
	return in.chunkEvent(it, in.windowEvents())
}

// packing makes c price tables packed as they leave the hot tier, as the
// lifecycle packs a chunk table (and a table of events written one at a
// time, packed later) on DynamoDB: rewritten into its next physical
// table (compact.NextGeneration), by an eventually consistent scan of
// its items as written (hot, an event's share), the writes of the
// chunks, a strongly consistent scan of the chunks to verify them, and
// the old table dropped for free. The hot tier stores the items as
// written, the later tiers the chunks. Archives are sized as the rows'
// (item bytes times the archive ratio): their Parquet holds the events
// whatever the layout, and the export kept beside it holds the chunks,
// smaller than the rows, so the archive line is an upper bound.
func (in Input) packing(c *costing, hot StoredEvent, it Item) {
	ch := in.packedEvent(it)
	c.hotBilledBytesPerHour = in.Rate * (hot.Bytes + hot.OverheadBytes) * 3600
	c.billedBytesPerHour = in.Rate * (ch.Bytes + ch.OverheadBytes) * 3600
	c.itemBytesPerHour = in.Rate * ch.Bytes * 3600
	c.compactReadUnitsPerHour = in.Rate*hot.Bytes*3600/scanBytesPerReadUnit + in.Rate*ch.Bytes*3600/readUnitBytes
	c.compactWriteUnitsPerHour = in.Rate * ch.WriteUnits * 3600
}

// compactionUnits returns the compaction's read and write units in a
// month's usage.
func compactionUnits(u Usage) (read, write float64) {
	for _, t := range u.Tiers {
		if t.Tier == compactionTier {
			read, write = t.ReadUnits, t.WriteUnits
		}
	}
	return read, write
}

// explainLayouts says what each layout costs and which the plan took.
func (r *Report) explainLayouts(in Input) {
	if len(r.Layouts) < 2 {
		return
	}
	money := func(f float64) string { return FormatMoney(f, r.Prices.Currency) }
	row, chunk := r.Layouts[0], r.Layouts[1]
	say := func(format string, args ...any) { r.Working = append(r.Working, fmt.Sprintf(format, args...)) }
	say("layout: rows take %s and %s an event, %s a month; chunks of %s events of one series (a request's, --batch-events) take %s and %s an event, %s a month: %s",
		count(row.Event.WriteUnits, "write unit"), formatBytes(row.Event.Bytes), money(row.Total),
		FormatNumber(chunk.Event.EventsPerItem), count(chunk.Event.WriteUnits, "write unit"), formatBytes(chunk.Event.Bytes), money(chunk.Total), r.Stored.Layout)
	if p := r.PackedLater; p != nil {
		say("packed later (an option, not the recommendation: layout chunk with events written one at a time): rows while hot, then chunks of %s events a window, %s an event, each table rewritten into its next physical table as it leaves the hot tier, with the compaction's %s million read units (the rows' scan and the chunks' verification) and %s million write units a month: %s a month",
			FormatNumber(p.Event.EventsPerItem), formatBytes(p.Event.Bytes), FormatNumber(p.ReadUnits/1e6), FormatNumber(p.WriteUnits/1e6), money(p.Bill.Total))
		if rs := p.Bill.Reserved; rs != nil {
			say("packed later with reserved capacity (a commitment): %s: %s a month, the upfront spread over the term",
				rs.Buy(r.Prices.Currency), money(rs.Total))
		}
	}
}

// explain fills in the working and the warnings.
func (r *Report) explain(in Input) {
	say := func(format string, args ...any) { r.Working = append(r.Working, fmt.Sprintf(format, args...)) }
	warn := func(format string, args ...any) { r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...)) }
	it := r.Item
	switch {
	case it.Sample != nil:
		say("item: mean %s over %d sample events (p50 %d B, p99 %d B, max %d B), %s per event on average",
			formatBytes(it.Bytes), it.Sample.Count, it.Sample.P50, it.Sample.P99, it.Sample.Max, count(it.WriteUnits, "write unit"))
	case it.FieldBytes != 0:
		say("item: %d B of keys (pk, sk and their names) + %d B of fields = %s, ceil(%s / 1024) = %s per event",
			it.KeyBytes, it.FieldBytes, formatBytes(it.Bytes), FormatNumber(it.Bytes), count(it.WriteUnits, "write unit"))
	default:
		say("item: %s as given, ceil(%s / 1024) = %s per event", formatBytes(it.Bytes), FormatNumber(it.Bytes), count(it.WriteUnits, "write unit"))
	}
	say("stream: %s events/s × %s = %s per hour, %s per day",
		FormatNumber(r.Workload.Rate), formatBytes(it.Bytes), formatBytes(r.BytesPerHour), formatBytes(r.BytesPerDay))
	money := func(f float64) string { return FormatMoney(f, r.Prices.Currency) }
	say("shards: ceil(%s events/s peak / %d series × %s / 1000) = %d: a partition key (one series' shard) takes at most 1,000 write units a second",
		FormatNumber(r.Workload.Peak), r.Workload.Series, count(it.WriteUnits, "write unit"), r.Shards)
	var chosen *Candidate
	for i := range r.Candidates {
		if r.Candidates[i].Period == r.Period {
			chosen = &r.Candidates[i]
		}
	}
	if in.Period != "" {
		say("period: %s as given, %s a month", r.Period, money(chosen.MonthlyCost))
	} else {
		say("period: %s, the cheapest period (%s a month) whose tables stay under 80%% of the %s-table quota; longer periods keep more data in the hot and warm tiers' Standard class, shorter ones pay the hot tier's prebuild and grace more often and make more tables",
			r.Period, money(chosen.MonthlyCost), FormatNumber(float64(r.Tables.Quota)))
	}
	p := r.Partition
	say("partition key: %s per hour into one series' shard, 10 GiB in %s h; the 10 GB item-collection limit binds only tables with local secondary indexes (timetable's have none), so it does not decide the period",
		formatBytes(p.BytesPerHour), FormatNumber(p.FillHours))
	hot := r.Tiers[0]
	say("hot tier: %s, if provisioned: %s events/s at the peak × %s over auto scaling's %s target utilisation, and %s",
		count(float64(hot.Write), "write unit"), FormatNumber(r.Workload.Peak), count(it.WriteUnits, "write unit"), formatPercent(TargetUtilization), count(float64(hot.Read), "read unit"))
	if hot.MinWrite > 0 {
		say("auto scaling: the peak is above the average rate, so the hot tier is auto scaled from %s (the average rate at %s) up to %s; the bill prices the top, an upper bound",
			count(float64(hot.MinWrite), "write unit"), formatPercent(TargetUtilization), count(float64(hot.Write), "write unit"))
	}
	if rd := r.Reads; rd != nil {
		say("reads: %s queries/s × %s read units (%s events, %s from one series over %s, in %s, strongly consistent as the store reads) = %s read units/s on the hot table; a warm table takes no more writes and is read eventually consistent, %s units/s",
			FormatNumber(r.Workload.ReadsPerSec), FormatNumber(rd.UnitsPerQuery), FormatNumber(rd.EventsPerQuery), formatBytes(rd.BytesPerQuery), FormatHours(r.Workload.ReadRangeHours), count(float64(r.Shards), "shard"), FormatNumber(rd.Capacity), FormatNumber(rd.WarmCapacity))
	}
	if p := r.Packed; p != nil {
		say("packed: the lifecycle rewrites each chunk table into its next physical table as it leaves the hot tier, a chunk of %s events a window of each series: %s and %s of storage overhead an event in the later tiers, where the hot tier's chunks take %s and %s; the compaction's %s million read units (the scan of the chunks as written and the verification of the packed ones) and %s million write units a month are billed on demand",
			FormatNumber(p.Event.EventsPerItem), formatBytes(p.Event.Bytes), formatBytes(p.Event.OverheadBytes), formatBytes(r.Stored.Bytes), formatBytes(r.Stored.OverheadBytes),
			FormatNumber(p.ReadUnits/1e6), FormatNumber(p.WriteUnits/1e6))
	}
	be := r.Prices.BreakEven(storage.ClassStandard)
	for _, t := range r.Tiers {
		say("%s tier (%s): provisioned %s, on demand %s a month: %s; %s GB in %s costs %s",
			t.Name, FormatNumber(t.Tables)+" tables", money(t.ProvisionedCost), money(t.OnDemandCost), strings.ReplaceAll(t.Billing, "_", "-"),
			FormatNumber(t.StoredGB), className(t.Class), money(t.StorageCost))
	}
	say("provisioned write capacity pays when it is used more than %s of the time: %s %s per WCU-hour against %s %s for the 3,600 writes it serves in an hour on demand",
		formatPercent(be), FormatNumber(r.Prices.WCUHour), r.Prices.Currency, FormatNumber(3600*r.Prices.WriteRequestMillion/1e6), r.Prices.Currency)
	if r.Storage.ArchiveGB > 0 || r.Workload.ArchiveAfterHours > 0 {
		say("archive: tables leave DynamoDB %s after their period; %s of data, %s GB of archives (%s × item bytes), costs %s a month on S3 at %s %s per GB",
			FormatHours(r.Workload.ArchiveAfterHours), FormatHours(r.Storage.ArchivedHours), FormatNumber(r.Storage.ArchiveGB), FormatNumber(r.Workload.ArchiveRatio), money(r.Storage.ArchiveMonthlyCost), FormatNumber(r.Prices.ArchiveGBMonth), r.Prices.Currency)
	}
	t := r.Tables
	if r.Tables.DaysToQuota > 0 {
		say("tables: %s per period, %s per year, about %s after %s; kept forever, the family alone reaches %s tables after %s days",
			FormatNumber(t.PerPeriod), FormatNumber(t.PerYear), FormatNumber(float64(t.Alive)), FormatHours(r.Workload.HorizonHours), FormatNumber(float64(t.Quota)), FormatNumber(t.DaysToQuota))
		warn("data is kept forever: tables accumulate at %s a year and reach DynamoDB's default quota of %s tables per region after %s days; set a retention or archive old tables",
			FormatNumber(t.PerYear), FormatNumber(float64(t.Quota)), FormatNumber(t.DaysToQuota))
	} else {
		extra := ""
		if in.WriteTimeGrouping == "month" && r.PeriodHours < hoursPerMonth {
			extra = ", and with write-time grouping a table also waits for its write month to end"
		}
		say("tables: %s per period; a table lives from %s before its period to %s after it%s: at most about %s alive",
			FormatNumber(t.PerPeriod), FormatHours(r.Workload.PrebuildHours), FormatHours(r.Workload.RetentionHours), extra, FormatNumber(float64(t.Alive)))
	}
	switch {
	case t.Alive > t.HardQuota:
		warn("about %s tables alive exceeds DynamoDB's hard limit of %s tables per region, which AWS does not raise: choose a longer period, a shorter retention or archiving", FormatNumber(float64(t.Alive)), FormatNumber(float64(t.HardQuota)))
	case t.Alive > t.Quota:
		warn("about %s tables alive exceeds DynamoDB's default quota of %s tables per region (every table in the region counts): ask AWS to raise it (to at most %s), or choose a longer period or a shorter retention", FormatNumber(float64(t.Alive)), FormatNumber(float64(t.Quota)), FormatNumber(float64(t.HardQuota)))
	case t.Alive*5 >= t.Quota*4:
		warn("about %s tables alive is near DynamoDB's default quota of %s tables per region (every table in the region counts)", FormatNumber(float64(t.Alive)), FormatNumber(float64(t.Quota)))
	case t.Alive > FineoTableLimit:
		warn("about %s tables alive is more than the %d tables per region DynamoDB allowed when Fineo designed write-time grouping; today's default quota is %s", FormatNumber(float64(t.Alive)), FineoTableLimit, FormatNumber(float64(t.Quota)))
	}
	if hot.Billing == BillingProvisioned && hot.Write > TableWriteQuota {
		warn("hot tables need %s write units, over DynamoDB's default quota of %s per table: request an increase", FormatNumber(float64(hot.Write)), FormatNumber(TableWriteQuota))
	}
	cs := r.Cost
	say("cost (%s, per month): as recommended %s; every tier provisioned %s, every tier on demand %s, no tiering %s; DynamoDB storage %s GB (%s GB Standard-IA) costs %s",
		r.CostedAt, money(cs.Recommended.Total), money(cs.ProvisionedTiers.Total), money(cs.OnDemand.Total),
		money(cs.NoTiering.Total), FormatNumber(r.Storage.GB), FormatNumber(r.Storage.StandardIAGB), money(r.Storage.MonthlyCost))
	if r.Reads == nil {
		say("no read load given: a provisioned table has DynamoDB's least read capacity, 1 unit, and on demand pays for no reads; give --reads-per-sec and --read-range to price queries")
	}
	r.explainBill(say, money)
	say("prices: %s", r.Prices.Label)
}

// explainBill says how the bill's lines beyond capacity and storage are
// worked out.
func (r *Report) explainBill(say func(string, ...any), money func(float64) string) {
	u, b := r.Usage, r.Bill
	pitr := 0.0
	for _, t := range u.Tiers {
		pitr += t.PITRGBMonth
	}
	if pitr > 0 {
		say("point-in-time recovery: on in the hot and warm tiers (the configuration's default: every tier but the last), billed on their tables' size, %s GB: %s",
			FormatNumber(pitr), money(b.Sum(CategoryBackup)))
	}
	if u.Archived {
		how := "DynamoDB's export to S3, billed on the table's size"
		if u.ExportGB == 0 {
			how = "a scan (the target is not s3://), eventually consistent"
		}
		say("archiving: a month's tables leave DynamoDB each month: each is exported by %s (%s GB a month), then scanned once more, eventually consistent as it is fenced, to check it before its delete (%s million read units); S3 takes %s PUT and %s GET requests; together %s",
			how, FormatNumber(u.ExportGB), FormatNumber(u.ScanReadUnits/1e6), FormatNumber(u.S3Puts), FormatNumber(u.S3Gets), money(b.Sum(CategoryArchiving)))
	}
	if f := b.Sum(CategoryFreeTier); f != 0 {
		say("free tier: DynamoDB's 25 GB of Standard storage and 25 provisioned write and read units a month, per account and region, taken off: %s", money(f))
	}
	if rs := b.Reserved; rs != nil {
		say("reserved capacity (a commitment, not in the total): %s, %s an hour, %s over the term, paid whatever is used; %s a month with the upfront spread over the term, against %s provisioned: it saves %s a month, %s in all (terms no longer than the %s horizon weighed, --horizon)",
			rs.Buy(r.Prices.Currency), FormatNumber(rs.Hourly), money(rs.Commitment),
			money(rs.Monthly), money(rs.Replaces), money(rs.Saves), money(rs.Total), FormatHours(r.Workload.HorizonHours))
	}
}

// className spells a table class as AWS does.
func className(c storage.Class) string {
	if c == storage.ClassInfrequentAccess {
		return "Standard-IA"
	}
	return "Standard"
}

// FormatNumber prints a number as the plan's reports do: whole numbers and millions
// without decimals, thousands with one, smaller numbers with three
// significant digits, and thousands separators.
func FormatNumber(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Sprint(f)
	}
	var s string
	switch a := math.Abs(f); {
	case a == math.Trunc(a) || a >= 1e6:
		s = fmt.Sprintf("%.0f", f)
	case a >= 1000:
		s = strings.TrimSuffix(fmt.Sprintf("%.1f", f), ".0")
	case a >= 100:
		s = fmt.Sprintf("%.1f", f)
	case a >= 10:
		s = fmt.Sprintf("%.2f", f)
	default:
		s = fmt.Sprintf("%.3g", f)
	}
	return groupThousands(s)
}

// groupThousands puts commas in the integer part of a decimal number.
func groupThousands(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if frac != "" {
		frac = "." + frac
	}
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return sign + b.String() + frac
}

// formatBytes prints a size in binary units.
func formatBytes(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	if i == 0 {
		return FormatNumber(n) + " B"
	}
	return fmt.Sprintf("%.1f %s", n, units[i])
}

// formatPercent prints a fraction as a percentage.
func formatPercent(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }

// FormatMoney prints an amount with two decimals and thousands
// separators, after a $ for USD and before the currency's code otherwise.
func FormatMoney(f float64, currency string) string {
	s := groupThousands(fmt.Sprintf("%.2f", f))
	if currency == "USD" {
		if strings.HasPrefix(s, "-") {
			return "-$" + s[1:]
		}
		return "$" + s
	}
	return strings.TrimSpace(s + " " + currency)
}

// count prints a quantity and a unit, with an s unless the quantity is 1.
func count(f float64, unit string) string {
	if f == 1 {
		return "1 " + unit
	}
	return FormatNumber(f) + " " + unit + "s"
}
