package planner

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable writes the report as text for a terminal: the recommendation
// first, then each step's figures, the working and the warnings.
func (r Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	money := func(f float64) string { return FormatMoney(f, r.Prices.Currency) }
	row := func(cells ...string) { fmt.Fprintln(tw, strings.Join(cells, "\t")) }
	section := func(title string) { fmt.Fprintf(tw, "\n%s\n", title) }

	fmt.Fprintf(tw, "Recommended: %s tables, %s, %s a month", r.Period, plural(r.Shards, "shard"), money(r.Cost.Recommended.Total))
	var bills []string
	for _, t := range r.Tiers {
		bills = append(bills, fmt.Sprintf("%s %s %s", t.Name, strings.ReplaceAll(t.Billing, "_", "-"), className(t.Class)))
	}
	fmt.Fprintf(tw, " (%s)\n", strings.Join(bills, ", "))
	if rs := r.Bill.Reserved; rs != nil {
		fmt.Fprintf(tw, "With a commitment: %s: %s a month\n", rs.Buy(r.Prices.Currency), money(rs.Total))
	}

	section("WORKLOAD")
	row("  average rate", FormatNumber(r.Workload.Rate)+" events/s")
	row("  peak rate", FormatNumber(r.Workload.Peak)+" events/s")
	retention := "forever"
	if r.Workload.RetentionHours > 0 {
		retention = FormatHours(r.Workload.RetentionHours)
	}
	row("  retention", retention)
	if r.Workload.ArchiveAfterHours > 0 {
		row("  archive after", FormatHours(r.Workload.ArchiveAfterHours))
	}
	reads := "none given"
	if r.Reads != nil {
		reads = fmt.Sprintf("%s queries/s over %s of one series (of %d)", FormatNumber(r.Workload.ReadsPerSec), FormatHours(r.Workload.ReadRangeHours), r.Workload.Series)
	}
	row("  read load", reads)

	section("ITEM")
	row("  item size", formatBytes(r.Item.Bytes))
	if d := r.Item.Sample; d != nil {
		row("  sample", fmt.Sprintf("%d events: min %d B, p50 %d B, p90 %d B, p99 %d B, max %d B", d.Count, d.Min, d.P50, d.P90, d.P99, d.Max))
	}
	row("  write units per event", FormatNumber(r.Item.WriteUnits))
	row("  bytes per hour", formatBytes(r.BytesPerHour))
	row("  bytes per day", formatBytes(r.BytesPerDay))

	section("SHARDS")
	row("  shards", fmt.Sprintf("%d (the peak of one series at %s write units a partition key)", r.Shards, FormatNumber(PartitionWriteUnits)))
	p := r.Partition
	row("  per partition key", fmt.Sprintf("%s per hour, 10 GiB in %s h (binds only with local secondary indexes)", formatBytes(p.BytesPerHour), FormatNumber(p.FillHours)))
	if rd := r.Reads; rd != nil {
		row("  read units per query", FormatNumber(rd.UnitsPerQuery)+" (hot, strongly consistent), "+FormatNumber(rd.WarmUnitsPerQuery)+" (warm, eventually consistent)")
		row("  read capacity", FormatNumber(rd.Capacity)+" units/s hot, "+FormatNumber(rd.WarmCapacity)+" warm")
	}

	section("PERIODS")
	row("  PERIOD", "TABLES", "MONTHLY", "")
	for _, c := range r.Candidates {
		note := ""
		if !c.WithinQuota {
			note = "over 80% of the table quota"
		}
		if c.Period == r.Period {
			note = "<- recommended"
		}
		row("  "+c.Period, FormatNumber(float64(c.Tables)), money(c.MonthlyCost), note)
	}

	if len(r.Layouts) > 0 || r.PackedLater != nil {
		section("LAYOUTS")
		row("  LAYOUT", "EVENTS AN ITEM", "WRITE UNITS AN EVENT", "BYTES AN EVENT", "PERIOD", "MONTHLY", "WITH RESERVED", "")
		withReserved := func(rs *Reserved) string {
			if rs == nil {
				return "-"
			}
			return money(rs.Total)
		}
		for _, l := range r.Layouts {
			note := ""
			if l.Event.Layout == r.Stored.Layout {
				note = "<- recommended"
			}
			row("  "+l.Event.Layout, FormatNumber(l.Event.EventsPerItem), FormatNumber(l.Event.WriteUnits), FormatNumber(l.Event.Bytes), l.Period, money(l.Total), withReserved(l.Reserved), note)
		}
		if p := r.PackedLater; p != nil {
			row("  chunk, packed later", FormatNumber(p.Event.EventsPerItem), FormatNumber(p.Event.WriteUnits), FormatNumber(p.Event.Bytes), r.Period, money(p.Bill.Total), withReserved(p.Bill.Reserved), "option: layout chunk, each table rewritten packed as it leaves the hot tier")
		}
	}

	section("TIERS (" + r.CostedAt + ")")
	row("  TIER", "AGE", "BILLING", "CLASS", "WRITE", "READ", "TABLES", "STORED", "CAPACITY", "STORAGE", "MONTHLY")
	for _, t := range r.Tiers {
		w, rd := "-", "-"
		if t.Billing == BillingProvisioned {
			w, rd = FormatNumber(float64(t.Write)), FormatNumber(float64(t.Read))
		}
		row("  "+t.Name, t.Age, strings.ReplaceAll(t.Billing, "_", "-"), className(t.Class), w, rd, FormatNumber(t.Tables),
			FormatNumber(t.StoredGB)+" GB", money(t.CapacityCost), money(t.StorageCost), money(t.MonthlyCost))
	}

	section("TABLES")
	row("  per period", FormatNumber(r.Tables.PerPeriod))
	row("  per year", FormatNumber(r.Tables.PerYear))
	alive := FormatNumber(float64(r.Tables.Alive))
	if r.Workload.RetentionHours == 0 {
		alive += " after " + FormatHours(r.Workload.HorizonHours)
	}
	row("  alive at most", fmt.Sprintf("%s (quota %s per region, raised on request to at most %s)", alive, FormatNumber(float64(r.Tables.Quota)), FormatNumber(float64(r.Tables.HardQuota))))

	section("MONTHLY COST (" + r.CostedAt + ")")
	row("  BILLING", "WRITE", "READ", "STORAGE", "BACKUP", "ARCHIVE", "ARCHIVING", "FREE TIER", "TOTAL")
	for _, c := range []struct {
		name string
		c    Cost
	}{{"recommended", r.Cost.Recommended}, {"all provisioned", r.Cost.ProvisionedTiers}, {"all on demand", r.Cost.OnDemand}, {"no tiering", r.Cost.NoTiering}} {
		row("  "+c.name, money(c.c.Write), money(c.c.Read), money(c.c.Storage), money(c.c.Backup), money(c.c.Archive), money(c.c.Archiving), money(c.c.FreeTier), money(c.c.Total))
	}
	stored := fmt.Sprintf("%s GB in DynamoDB (%s GB Standard-IA)", FormatNumber(r.Storage.GB), FormatNumber(r.Storage.StandardIAGB))
	if r.Storage.ArchiveGB > 0 {
		stored += fmt.Sprintf(", %s GB archived", FormatNumber(r.Storage.ArchiveGB))
	}
	row("  stored", stored)

	section("BILL (" + r.CostedAt + ", as recommended)")
	row("  ITEM", "QUANTITY", "UNIT", "PRICE", "MONTHLY", "PRICE CHECKED")
	for _, l := range r.Bill.Lines {
		row("  "+l.Item, FormatNumber(l.Quantity), l.Unit, FormatNumber(l.UnitPrice), money(l.Monthly), l.Check)
	}
	row("  total", "", "", "", money(r.Bill.Total))
	if rs := r.Bill.Reserved; rs != nil {
		row(fmt.Sprintf("  commitment: reserved capacity, %s WCU and %s RCU for %s", FormatNumber(float64(rs.WCU)), FormatNumber(float64(rs.RCU)), TermName(rs.TermMonths)),
			"", "", "", "", r.Prices.Check("reserved_wcu_hour"))
		row("    upfront, once", "", "", "", money(rs.Upfront))
		row("    hourly, every hour of the term", FormatNumber(hoursPerMonth), "hours", FormatNumber(rs.Hourly), money(rs.Hourly*hoursPerMonth))
		row("    the whole term", "", "", "", money(rs.Commitment))
		row("    a month, upfront spread over the term", "", "", "", money(rs.Monthly))
		row("    provisioned capacity it replaces", "", "", "", money(-rs.Replaces))
		row("    total with it", "", "", "", money(rs.Total))
	}

	section("WORKING")
	for _, s := range r.Working {
		row("  " + s)
	}
	if len(r.Warnings) > 0 {
		section("WARNINGS")
		for _, s := range r.Warnings {
			row("  ! " + s)
		}
	}
	return tw.Flush()
}

// FormatHours prints hours as the plan's reports do: "48 h", or "2 d"
// when they make whole days.
func FormatHours(h float64) string {
	if h >= 24 && h == float64(int64(h)) && int64(h)%24 == 0 {
		return FormatNumber(h/24) + " d"
	}
	return FormatNumber(h) + " h"
}

// plural prints a count and a noun, with an s when the count is not 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%s %ss", FormatNumber(float64(n)), noun)
}
