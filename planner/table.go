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

	fmt.Fprintf(tw, "Recommended: %s tables, %s, %s billing\n", r.Period, plural(r.Shards, "shard"), strings.ReplaceAll(r.Billing, "_", "-"))

	section("WORKLOAD")
	row("  average rate", FormatNumber(r.Workload.Rate)+" events/s")
	row("  peak rate", FormatNumber(r.Workload.Peak)+" events/s")
	retention := "forever"
	if r.Workload.RetentionHours > 0 {
		retention = FormatHours(r.Workload.RetentionHours)
	}
	row("  retention", retention)
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

	section("PARTITION")
	p := r.Partition
	row("  usable", fmt.Sprintf("%s of 10 GiB (headroom %s)", formatBytes(p.UsableBytes), FormatNumber(p.Headroom)))
	row("  per shard per hour", formatBytes(p.BytesPerHour))
	row("  fill time", fmt.Sprintf("%s h to usable, %s h to 10 GiB", FormatNumber(p.UsableFillHours), FormatNumber(p.FillHours)))

	section("PERIODS")
	row("  PERIOD", "LONGEST", "PER SHARD", "FILL", "FITS")
	for _, c := range r.Candidates {
		fits := "no"
		if c.Fits {
			fits = "yes"
		}
		if c.Period == r.Period {
			fits += "  <- recommended"
		}
		row("  "+c.Period, FormatHours(c.Hours), formatBytes(c.PartitionBytes), formatPercent(c.Fill), fits)
	}

	section("SHARDS")
	row("  shards", fmt.Sprintf("%d (the peak needs %d at %s write units a partition)", r.Shards, r.PeakShards, FormatNumber(PartitionWriteUnits)))
	if rd := r.Reads; rd != nil {
		row("  read units per query", FormatNumber(rd.UnitsPerQuery))
		row("  read capacity", FormatNumber(rd.Capacity)+" units/s")
	}

	section("TIERS (" + r.CostedAt + ")")
	row("  TIER", "AGE", "WRITE", "READ", "TABLES", "MONTHLY")
	for _, t := range r.Tiers {
		row("  "+t.Name, t.Age, FormatNumber(float64(t.Write)), FormatNumber(float64(t.Read)), FormatNumber(t.Tables), money(t.MonthlyCost))
	}

	section("TABLES")
	row("  per period", FormatNumber(r.Tables.PerPeriod))
	row("  per year", FormatNumber(r.Tables.PerYear))
	alive := FormatNumber(float64(r.Tables.Alive))
	if r.Workload.RetentionHours == 0 {
		alive += " after " + FormatHours(r.Workload.HorizonHours)
	}
	row("  alive at most", fmt.Sprintf("%s (quota %s per region)", alive, FormatNumber(float64(r.Tables.Quota))))

	section("MONTHLY COST (" + r.CostedAt + ")")
	row("  BILLING", "WRITE", "READ", "STORAGE", "TOTAL")
	for _, c := range []struct {
		name string
		c    Cost
	}{{"provisioned tiers", r.Cost.ProvisionedTiers}, {"on demand", r.Cost.OnDemand}, {"no tiering", r.Cost.NoTiering}} {
		row("  "+c.name, money(c.c.Write), money(c.c.Read), money(c.c.Storage), money(c.c.Total))
	}
	row("  stored", FormatNumber(r.Storage.GB)+" GB")

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
