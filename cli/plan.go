package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/planner"
	"github.com/timetabledb/timetable/planner/chart"
	"github.com/timetabledb/timetable/storage"
)

// Placeholders the keys of sample events are sized with: a tenant and a
// logical table of 12 bytes each, as planner.DefaultPKBytes assumes.
const (
	sampleTenant = "tenant-00001"
	sampleTable  = "table-000001"
)

// sampleFutureSkew lets sample events lie in the future: only their sizes
// matter.
const sampleFutureSkew = 100 * 365 * 24 * time.Hour

// planFlags holds the flags of `timetable plan`.
type planFlags struct {
	fieldBytes, itemBytes, pkBytes int
	sample, tenant, table          string
	rate, peak, peakFactor         float64
	restoreGB, batchEvents         float64
	layout                         string
	retention, horizon             string
	series                         int
	readsPerSec                    float64
	readRange                      string
	pricesFile                     string
	prices                         planner.Prices
	headroom                       float64
	grouping, family, period       string
	format, apply, svg             string
	archiveAfter, archiveTarget    string
	archiveFormat                  string
	archiveRatio                   float64
	tierBilling, tierClass         [3]string
}

// newPlanCmd returns `timetable plan`, the capacity planner: see package
// planner for the arithmetic.
func newPlanCmd() *cobra.Command {
	return newPlanCmdWithClock(clock.Real{})
}

// newPlanCmdWithClock returns `timetable plan` reading the time, which
// only sample decoding needs, from clk.
func newPlanCmdWithClock(clk clock.Clock) *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:   "plan --item-bytes N --rate EV_PER_S [--peak EV_PER_S] [--retention DUR] [--format table|json]",
		Short: "Work out the period, shards, tiers, table count and monthly cost of a workload",
		Long: `plan works out, for a workload, the shards the peak of one series needs
at 1,000 write units a partition key, and for every period (hour, 6h, 12h,
day, week, month, quarter) the tables alive under the retention and the
monthly bill: each tier (hot, warm, cold) billed on demand or provisioned
for its load at auto scaling's 70% target (the write load at its peak),
whichever is cheaper, and stored in its table class (Standard, the cold
tier Standard-IA), with point-in-time recovery on the hot and warm tiers,
plus, with --archive-after and --archive-target, the export of each table
to S3, the scan that checks it before its delete and the archives on S3
with their requests; DynamoDB's free tier is taken off. It recommends the
cheapest period whose tables stay under 80% of the 2,500-table quota,
shows every tier provisioned, every tier on demand and no tiering beside
it, and prints the recommended month's bill line by line, each price
with what is known of it (verified against an AWS page, or unverified),
and reserved capacity for the hot tier's steady capacity beside the
total, a commitment: the term (one or three years, no longer than
--horizon) that saves the most, its upfront payment spread over it. It prices both item
layouts, rows and chunks (a series' events of a window in one item,
compressed: --batch-events says how many of a series' events a request
brings, --sample measures the compression), and recommends chunks where
they are cheaper; chunks packed later, for events written one at a time
into a chunk family (each table rewritten packed as it leaves the hot
tier), are priced as an option.

Give the event size one way:
  --item-bytes N    the size of the whole stored item, keys included (what
                    the web console's planner asks for)
  --field-bytes N   the size of the event's fields alone, as DynamoDB counts
                    them; the key attributes (pk of --pk-bytes, sk of 53
                    bytes) are added
  --sample FILE     NDJSON events, each sized exactly as timetable stores it
--event-bytes is the old name of --field-bytes (the fields alone, not the
item), kept for scripts that use it.

Durations are Go durations (36h, 90m) or whole days or weeks (90d, 12w).
Prices are built-in us-east-1 list prices, labelled with their date; override
them with --prices FILE (YAML or JSON with the keys wcu_hour, rcu_hour,
write_request_million, read_request_million, storage_gb_month, the same with
_ia for Standard-IA, archive_gb_month, pitr_gb_month, export_gb, import_gb,
s3_put_thousand, s3_get_thousand, free_storage_gb, free_wcu, free_rcu,
reserved_wcu_upfront, reserved_wcu_hour, reserved_rcu_upfront,
reserved_rcu_hour, reserved_term_months, the four reserved_ prices with
_3y for the three-year term, currency, label) or the --price-*
flags.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPlan(cmd, f, clk)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.itemBytes, "item-bytes", 0, "size of a whole stored item in bytes, keys included")
	fl.IntVar(&f.fieldBytes, "field-bytes", 0, "size of an event's fields alone in bytes; the key attributes are added")
	// The old name of --field-bytes: "event bytes" read as the size of
	// the event, which is --item-bytes, everywhere else.
	fl.IntVar(&f.fieldBytes, "event-bytes", 0, "")
	_ = fl.MarkHidden("event-bytes")
	fl.StringVar(&f.sample, "sample", "", "NDJSON file of sample events to size")
	fl.IntVar(&f.pkBytes, "pk-bytes", planner.DefaultPKBytes, "typical partition key length (tenant#table#series#shard) for --field-bytes")
	fl.StringVar(&f.tenant, "tenant", sampleTenant, "tenant name the sample's keys are sized with")
	fl.StringVar(&f.table, "table", sampleTable, "logical table name the sample's keys are sized with")
	fl.Float64Var(&f.rate, "rate", 0, "average events per second")
	fl.Float64Var(&f.peak, "peak", 0, "peak events per second (default the average rate)")
	fl.Float64Var(&f.peakFactor, "peak-factor", 0, "the peak as a multiple of the average rate (instead of --peak)")
	fl.Float64Var(&f.restoreGB, "restore-gb", 0, "GB of archives restored (imported from S3) a month, with --archive-after")
	fl.StringVar(&f.layout, "layout", "", "item layout: row or chunk (default the cheaper, chunks when they save more than 0.5% and one unit a month)")
	fl.Float64Var(&f.batchEvents, "batch-events", 1, "events of one series a request writes at once, which the chunk layout packs into one item (Telegraf: 10)")
	fl.StringVar(&f.retention, "retention", "0", "how long tables are kept after their period; 0 keeps them forever")
	fl.StringVar(&f.horizon, "horizon", "8760h", "how far to project costs when data is kept forever, and the span reserved capacity's terms are weighed over (1095d weighs the three-year term)")
	fl.IntVar(&f.series, "series", 1, "number of series the events are spread over; a query reads one")
	fl.Float64Var(&f.readsPerSec, "reads-per-sec", 0, "queries per second")
	fl.StringVar(&f.readRange, "read-range", "0", "time range a typical query covers, ending now")
	fl.StringVar(&f.pricesFile, "prices", "", "YAML or JSON price file overriding the built-in prices")
	fl.Float64Var(&f.prices.WCUHour, "price-wcu-hour", 0, "price of a provisioned write capacity unit for an hour")
	fl.Float64Var(&f.prices.RCUHour, "price-rcu-hour", 0, "price of a provisioned read capacity unit for an hour")
	fl.Float64Var(&f.prices.WriteRequestMillion, "price-write-million", 0, "on-demand price of a million write request units")
	fl.Float64Var(&f.prices.ReadRequestMillion, "price-read-million", 0, "on-demand price of a million read request units")
	fl.Float64Var(&f.prices.StorageGBMonth, "price-storage-gb-month", 0, "price of a GB stored for a month")
	fl.Float64Var(&f.prices.WCUHourIA, "price-wcu-hour-ia", 0, "price of a provisioned write capacity unit for an hour, Standard-IA")
	fl.Float64Var(&f.prices.RCUHourIA, "price-rcu-hour-ia", 0, "price of a provisioned read capacity unit for an hour, Standard-IA")
	fl.Float64Var(&f.prices.WriteRequestMillionIA, "price-write-million-ia", 0, "on-demand price of a million write request units, Standard-IA")
	fl.Float64Var(&f.prices.ReadRequestMillionIA, "price-read-million-ia", 0, "on-demand price of a million read request units, Standard-IA")
	fl.Float64Var(&f.prices.StorageGBMonthIA, "price-storage-gb-month-ia", 0, "price of a GB stored for a month, Standard-IA")
	fl.Float64Var(&f.prices.ArchiveGBMonth, "price-archive-gb-month", 0, "price of a GB of archives stored for a month (S3 Standard)")
	fl.StringVar(&f.prices.Currency, "currency", "", "currency of the prices")
	fl.Float64Var(&f.headroom, "headroom", planner.DefaultHeadroom, "fraction of a partition key's 10 GiB the old item-collection rule let a period fill (shown for reference; it does not decide the period)")
	fl.StringVar(&f.grouping, "write-time-grouping", "month", "month (tables also split by write month) or none")
	fl.StringVar(&f.family, "family", planner.DefaultFamily, "name of the family --apply writes")
	fl.StringVar(&f.period, "period", "", "plan with this period (hour, 6h, 12h, day, week, month, quarter) instead of the cheapest")
	fl.StringVar(&f.archiveAfter, "archive-after", "0", "move tables to archives on S3 this long after their period (the family's retention); archives are kept for --retention; needs --archive-target")
	fl.StringVar(&f.archiveTarget, "archive-target", "", "where tables are archived with --archive-after: s3://bucket/prefix (or file://DIR)")
	fl.StringVar(&f.archiveFormat, "archive-format", "", "format of the archives with --archive-after: parquet (default, which --archive-ratio's default is measured on) or ndjson")
	fl.Float64Var(&f.archiveRatio, "archive-ratio", planner.DefaultArchiveRatio, "archive bytes per item byte")
	for i, tier := range []string{"hot", "warm", "cold"} {
		fl.StringVar(&f.tierBilling[i], tier+"-billing", "", "billing of the "+tier+" tier: provisioned or on_demand (default the cheaper)")
		fl.StringVar(&f.tierClass[i], tier+"-class", "", "table class of the "+tier+" tier: standard or infrequent_access (default infrequent_access for cold, standard otherwise)")
	}
	fl.StringVar(&f.format, "format", "table", "output format: table or json")
	fl.StringVar(&f.apply, "apply", "", "write the recommended family into this YAML config file")
	fl.StringVar(&f.svg, "svg", "", "draw stored data and monthly cost per tier into this SVG file")
	return cmd
}

// runPlan builds the planner's input from the flags, plans, and writes
// the outputs.
func runPlan(cmd *cobra.Command, f planFlags, clk clock.Clock) error {
	if f.format != "table" && f.format != "json" {
		return fmt.Errorf("plan: --format %q: use table or json", f.format)
	}
	if cmd.Flags().Changed("event-bytes") {
		// On standard error: pflag's own deprecation notice goes to
		// standard output, into the report.
		fmt.Fprintln(cmd.ErrOrStderr(), "timetable plan: --event-bytes is deprecated: it is --field-bytes, the size of the fields alone (keys are added); --item-bytes is the whole item's")
	}
	in := planner.Input{
		FieldBytes:        f.fieldBytes,
		ItemBytes:         f.itemBytes,
		PKBytes:           f.pkBytes,
		Rate:              f.rate,
		Peak:              f.peak,
		Series:            f.series,
		ReadsPerSec:       f.readsPerSec,
		Headroom:          f.headroom,
		WriteTimeGrouping: f.grouping,
		Family:            f.family,
		Period:            f.period,
		ArchiveRatio:      f.archiveRatio,
		ArchiveTarget:     f.archiveTarget,
		ArchiveFormat:     family.ArchiveFormat(f.archiveFormat),
		RestoreGB:         f.restoreGB,
		Layout:            f.layout,
		BatchEvents:       f.batchEvents,
		Hot:               planner.TierOptions{Billing: f.tierBilling[0]},
		Warm:              planner.TierOptions{Billing: f.tierBilling[1]},
		Cold:              planner.TierOptions{Billing: f.tierBilling[2]},
	}
	if cmd.Flags().Changed("peak-factor") {
		if cmd.Flags().Changed("peak") {
			return fmt.Errorf("plan: give --peak or --peak-factor, not both")
		}
		if !(f.peakFactor >= 1) {
			return fmt.Errorf("plan: --peak-factor %v: the peak is at least the average rate, a factor of 1 or more", f.peakFactor)
		}
		in.Peak = f.rate * f.peakFactor
	}
	if f.pkBytes <= 0 || f.series <= 0 || f.headroom <= 0 {
		return fmt.Errorf("plan: --pk-bytes, --series and --headroom must be positive")
	}
	var err error
	for i, o := range []*planner.TierOptions{&in.Hot, &in.Warm, &in.Cold} {
		if o.Class, err = storage.ParseClass(f.tierClass[i]); err != nil {
			return fmt.Errorf("plan: --%s-class: %w", []string{"hot", "warm", "cold"}[i], err)
		}
	}
	for _, d := range []struct {
		flag string
		in   string
		out  *time.Duration
	}{{"retention", f.retention, &in.Retention}, {"horizon", f.horizon, &in.Horizon}, {"read-range", f.readRange, &in.ReadRange}, {"archive-after", f.archiveAfter, &in.ArchiveAfter}} {
		if *d.out, err = period.ParseDuration(d.in); err != nil {
			return fmt.Errorf("plan: --%s: %w", d.flag, err)
		}
	}
	if f.sample != "" {
		if in.Sample, in.ChunkFixedBytes, in.ChunkEventBytes, err = sampleSizes(f.sample, f.tenant, f.table, clk.Now(), f.layout != "row"); err != nil {
			return fmt.Errorf("plan: %w", err)
		}
	}
	if in.Prices, err = planPrices(cmd.Flags(), f); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	r, err := planner.Plan(in)
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	// The family the plan recommends is one the configuration loader
	// accepts (an archive target of its form, say), or no report is
	// written.
	if _, err := familyConfig(nil, r.Family); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	if err := writePlan(cmd.OutOrStdout(), r, f.format); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	if f.svg != "" {
		var buf bytes.Buffer
		if err := chart.WriteSVG(&buf, r); err != nil {
			return fmt.Errorf("plan: %w", err)
		}
		if err := os.WriteFile(f.svg, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("plan: write svg: %w", err)
		}
	}
	if f.apply != "" {
		if err := applyPlan(f.apply, r.Family); err != nil {
			return fmt.Errorf("plan: %w", err)
		}
		fam := r.Family
		fmt.Fprintf(cmd.ErrOrStderr(), "wrote family %q (%s tables, %s) to %s\n", fam.Name, fam.Period, count(fam.Shards, "shard"), f.apply)
		if fam.Archive != nil {
			// The lifecycle never deletes an archive: the plan's price
			// holds when the bucket expires them at --retention.
			fmt.Fprintf(cmd.ErrOrStderr(), "tables are archived to %s and deleted from DynamoDB %s after their period; the plan prices the archives kept for %s: expire them then with an S3 lifecycle rule\n", fam.Archive.Target, fam.Retention, planner.FormatDuration(in.Retention))
		}
	}
	return nil
}

// writePlan writes the report as a table or as indented JSON.
func writePlan(w io.Writer, r planner.Report, format string) error {
	if format == "table" {
		return r.WriteTable(w)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// sampleSizes decodes an NDJSON file of events and returns the size of
// the item each would be stored as in the row layout (itemenc.RowItem, in
// shard 0), with the event's own id or the idempotent id timetable would
// give it in a table made now (event.LatestIDScheme).
//
// With chunks, it also measures the chunk layout on the sample
// (chunkSizes), when the sample has two events of a series; otherwise
// the planner's defaults stay.
func sampleSizes(path, tenant, table string, now time.Time, chunks bool) (sizes []int, chunkFixed, chunkEvent float64, err error) {
	body, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("read sample: %w", err)
	}
	events, err := event.DecodeNDJSON(body, event.Limits{MaxFutureSkew: sampleFutureSkew}, now)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("sample %s: %w", path, err)
	}
	if events.Len() == 0 {
		return nil, 0, 0, fmt.Errorf("sample %s: no events", path)
	}
	sizes = make([]int, events.Len())
	for i := range sizes {
		ev := events.Event(i)
		ev.AssignID(tenant, table, event.LatestIDScheme)
		sizes[i] = storage.ItemSize(itemenc.RowItem(tenant, table, ev, 0))
	}
	if chunks {
		if fixed, per, err := chunkSizes(events.Events(), tenant, table); err == nil {
			chunkFixed, chunkEvent = fixed, per
		}
	}
	return sizes, chunkFixed, chunkEvent, nil
}

// planPrices returns the built-in prices overridden by the price file,
// then by the price flags that were set. The label is the file's, if it
// has one, or the built-in one, followed by the overrides it does not
// describe.
func planPrices(flags *pflag.FlagSet, f planFlags) (planner.Prices, error) {
	p := planner.DefaultPrices()
	var from []string
	if f.pricesFile != "" {
		data, err := os.ReadFile(f.pricesFile)
		if err != nil {
			return p, fmt.Errorf("read prices: %w", err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&p); err != nil && !errors.Is(err, io.EOF) {
			return p, fmt.Errorf("prices %s: %w", f.pricesFile, err)
		}
		if p.Label == planner.DefaultPrices().Label {
			from = append(from, f.pricesFile)
		}
	}
	base := p.Label
	for _, o := range []struct {
		flag string
		dst  *float64
		v    float64
	}{
		{"price-wcu-hour", &p.WCUHour, f.prices.WCUHour},
		{"price-rcu-hour", &p.RCUHour, f.prices.RCUHour},
		{"price-write-million", &p.WriteRequestMillion, f.prices.WriteRequestMillion},
		{"price-read-million", &p.ReadRequestMillion, f.prices.ReadRequestMillion},
		{"price-storage-gb-month", &p.StorageGBMonth, f.prices.StorageGBMonth},
		{"price-wcu-hour-ia", &p.WCUHourIA, f.prices.WCUHourIA},
		{"price-rcu-hour-ia", &p.RCUHourIA, f.prices.RCUHourIA},
		{"price-write-million-ia", &p.WriteRequestMillionIA, f.prices.WriteRequestMillionIA},
		{"price-read-million-ia", &p.ReadRequestMillionIA, f.prices.ReadRequestMillionIA},
		{"price-storage-gb-month-ia", &p.StorageGBMonthIA, f.prices.StorageGBMonthIA},
		{"price-archive-gb-month", &p.ArchiveGBMonth, f.prices.ArchiveGBMonth},
	} {
		if flags.Changed(o.flag) {
			*o.dst = o.v
			from = append(from, "--"+o.flag)
		}
	}
	if flags.Changed("currency") {
		p.Currency = f.prices.Currency
		from = append(from, "--currency")
	}
	if len(from) > 0 {
		p.Label = base + "; overridden by " + strings.Join(from, ", ")
	}
	return p, nil
}

// familyConfig returns the configuration doc with the family written into
// it (planner.ApplyFamily), if the configuration loader reads it.
func familyConfig(doc []byte, fam planner.Family) ([]byte, error) {
	out, err := planner.ApplyFamily(doc, fam)
	if err != nil {
		return nil, err
	}
	if _, err := config.Parse(out); err != nil {
		return nil, fmt.Errorf("family %q: %w", fam.Name, err)
	}
	return out, nil
}

// applyPlan writes the family into the config file at path, creating the
// file if need be. It replaces the file in one rename, so a reader never
// sees half a file.
func applyPlan(path string, fam planner.Family) error {
	data, err := os.ReadFile(path)
	mode := fs.FileMode(0o644)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("read config: %w", err)
	default:
		if st, err := os.Stat(path); err == nil {
			mode = st.Mode().Perm()
		}
	}
	out, err := familyConfig(data, fam)
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	_, err = tmp.Write(out)
	err = errors.Join(err, tmp.Chmod(mode), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write config %s: %w", path, err)
	}
	return nil
}
