package planner

import (
	"fmt"
	"math"
	"strings"
)

// SchemaVersion is the version of the JSON schema of Report. It changes
// only when a field changes meaning or is removed; fields may be added
// without a change.
const SchemaVersion = 1

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
	// Shards is the recommended shard count; PeakShards is what the peak
	// alone needs. Shards is more when an hour of data overflows a
	// partition.
	Shards     int    `json:"shards"`
	PeakShards int    `json:"peak_shards"`
	Reads      *Reads `json:"reads,omitempty"`
	Tiers      []Tier `json:"tiers"`
	Tables     Tables `json:"tables"`
	// CostedAt says when the monthly costs apply: "steady state" once
	// the retention is reached, or "month N" when data is kept forever.
	CostedAt string  `json:"costed_at"`
	Storage  Storage `json:"storage"`
	Cost     Costs   `json:"monthly_cost"`
	// Billing is the cheaper billing mode: provisioned or on_demand.
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
	// Quota is DynamoDB's default table quota per region.
	Quota int `json:"quota"`
	// DaysToQuota is, when data is kept forever, after how many days the
	// family alone reaches Quota.
	DaysToQuota float64 `json:"days_to_quota,omitempty"`
}

// Plan works out a capacity plan for the input, following the AWS
// developer guide's steps for time-series tables: size the item, see how
// long one partition takes to fill 10 GB, take the longest period that
// fits with headroom, shard for the peak at 1,000 write units a partition,
// then count tables and cost them. It returns an error wrapping
// ErrInvalidInput, ErrItemTooLarge or ErrTooFast when no plan can be
// made.
func Plan(in Input) (Report, error) {
	in = in.withDefaults()
	if err := in.validate(); err != nil {
		return Report{}, err
	}
	it, err := in.item()
	if err != nil {
		return Report{}, err
	}
	bytesPerSec := in.Rate * it.Bytes
	peakUnits := in.Peak * it.WriteUnits
	lay, err := choose(bytesPerSec, peakUnits, in.Headroom)
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
		},
		Item:         it,
		BytesPerHour: bytesPerSec * 3600,
		BytesPerDay:  bytesPerSec * 86400,
		Partition:    lay.partition,
		Candidates:   lay.candidates,
		Period:       lay.kind.name,
		PeriodHours:  lay.kind.average,
		Shards:       lay.shards,
		PeakShards:   lay.peakShards,
		Reads:        in.reads(it, lay.shards),
		Prices:       in.Prices,
		Working:      []string{},
		Warnings:     []string{},
	}
	tiers, ages := tierSchedule(peakUnits, r.Reads)
	fl := newFleet(in, lay.kind, ages)
	c := costing{
		prices:             in.Prices,
		tiers:              tiers,
		fleet:              fl,
		billedBytesPerHour: in.Rate * (it.Bytes + StorageOverheadBytes) * 3600,
		writeUnitsPerHour:  in.Rate * it.WriteUnits * 3600,
	}
	if r.Reads != nil {
		c.readUnitsPerHour = r.Reads.Capacity * 3600
	}
	costAt := math.Inf(1)
	r.CostedAt = "steady state"
	if in.Retention == 0 {
		costAt = in.Horizon.Hours()
		r.CostedAt = fmt.Sprintf("month %d", int(math.Ceil(costAt/hoursPerMonth-fitTolerance)))
	}
	r.Cost, r.Tiers, r.Storage = c.at(costAt)
	r.Timeline = c.timeline(in.Horizon.Hours())
	r.Tables = Tables{
		PerPeriod: fl.perPeriod,
		Alive:     fl.mostTables(costAt),
		PerYear:   365 * 24 / fl.period * fl.perPeriod,
		Quota:     TableQuota,
	}
	if in.Retention == 0 {
		r.Tables.DaysToQuota = TableQuota / r.Tables.PerYear * 365
	}
	r.Billing = BillingProvisioned
	if r.Cost.OnDemand.Total < r.Cost.ProvisionedTiers.Total {
		r.Billing = BillingOnDemand
	}
	r.Family = in.family(r.Period, r.Shards, r.Tiers, r.Billing)
	r.explain(in)
	return r, nil
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
	p := r.Partition
	into := "one partition"
	if r.Shards > 1 {
		into = fmt.Sprintf("each of %d shard partitions", r.Shards)
	}
	say("partition: 10 GiB × %s headroom = %s usable; at %s per hour into %s it fills in %s h (%s h to the full 10 GiB)",
		FormatNumber(p.Headroom), formatBytes(p.UsableBytes), formatBytes(p.BytesPerHour), into, FormatNumber(p.UsableFillHours), FormatNumber(p.FillHours))
	var chosen, next *Candidate
	for i := range r.Candidates {
		if r.Candidates[i].Period == r.Period {
			chosen = &r.Candidates[i]
			if i+1 < len(r.Candidates) {
				next = &r.Candidates[i+1]
			}
		}
	}
	line := fmt.Sprintf("period: %s, the longest period whose longest instance (%s h) fits: it fills %s of the usable partition",
		r.Period, FormatNumber(chosen.Hours), formatPercent(chosen.Fill))
	if next != nil {
		line += fmt.Sprintf("; %s tables would fill %s", next.Period, formatPercent(next.Fill))
	}
	say("%s", line)
	say("shards: ceil(%s events/s peak × %s / 1000) = %d", FormatNumber(r.Workload.Peak), count(it.WriteUnits, "write unit"), r.PeakShards)
	if r.Shards > r.PeakShards {
		say("shards raised to %d: even an hour of data (%s) overflows a partition with %d", r.Shards, formatBytes(r.BytesPerHour), r.PeakShards)
		warn("even hourly tables overflow one partition at this rate: the plan uses hourly tables with %d shards instead of the %d the peak needs", r.Shards, r.PeakShards)
	}
	hot := r.Tiers[0]
	say("hot tier: %s for the peak (%s events/s × %s), %s", count(float64(hot.Write), "write unit"), FormatNumber(r.Workload.Peak), count(it.WriteUnits, "write unit"), count(float64(hot.Read), "read unit"))
	if rd := r.Reads; rd != nil {
		say("reads: %s queries/s × %s read units (%s events, %s from one series over %s, in %s) = %s read units/s",
			FormatNumber(r.Workload.ReadsPerSec), FormatNumber(rd.UnitsPerQuery), FormatNumber(rd.EventsPerQuery), formatBytes(rd.BytesPerQuery), FormatHours(r.Workload.ReadRangeHours), count(float64(r.Shards), "shard"), FormatNumber(rd.Capacity))
	}
	t := r.Tables
	if in.Retention == 0 {
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
	case t.Alive > t.Quota:
		warn("about %s tables alive exceeds DynamoDB's default quota of %s tables per region (every table in the region counts): ask AWS for more, or choose a longer period or a shorter retention", FormatNumber(float64(t.Alive)), FormatNumber(float64(t.Quota)))
	case t.Alive*5 >= t.Quota*4:
		warn("about %s tables alive is near DynamoDB's default quota of %s tables per region (every table in the region counts)", FormatNumber(float64(t.Alive)), FormatNumber(float64(t.Quota)))
	case t.Alive > FineoTableLimit:
		warn("about %s tables alive is more than the %d tables per region DynamoDB allowed when Fineo designed write-time grouping; today's default quota is %s", FormatNumber(float64(t.Alive)), FineoTableLimit, FormatNumber(float64(t.Quota)))
	}
	if hot.Write > TableWriteQuota {
		warn("hot tables need %s write units, over DynamoDB's default quota of %s per table: request an increase", FormatNumber(float64(hot.Write)), FormatNumber(TableWriteQuota))
	}
	cs := r.Cost
	say("cost (%s, per month): provisioned tiers %s, on demand %s, no tiering %s; storage %s GB adds %s to each",
		r.CostedAt, FormatMoney(cs.ProvisionedTiers.Total, r.Prices.Currency), FormatMoney(cs.OnDemand.Total, r.Prices.Currency),
		FormatMoney(cs.NoTiering.Total, r.Prices.Currency), FormatNumber(r.Storage.GB), FormatMoney(r.Storage.MonthlyCost, r.Prices.Currency))
	if r.Reads == nil {
		say("no read load given: provisioned tiers pay for the AWS blog's read capacity, on demand pays for no reads")
	}
	say("prices: %s", r.Prices.Label)
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
