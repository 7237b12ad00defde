package cli

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/planner"
	"github.com/timetabledb/timetable/storage"
)

// update rewrites golden files instead of comparing with them: go test
// ./cli -run Plan -update. The flag is shared with other golden tests of
// the package, whichever file registers it first.
var update = func() *bool {
	if f := flag.Lookup("update"); f != nil {
		v, _ := f.Value.(flag.Getter).Get().(bool)
		return &v
	}
	return flag.Bool("update", false, "rewrite golden files")
}()

// planClock stands at a fixed time, after every sample event.
var planClock = clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

// runPlanCmd runs `timetable plan` with args and returns its standard
// output and error output.
func runPlanCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := newPlanCmdWithClock(planClock)
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	cmd.SilenceUsage = true
	cmd.SilenceErrors = true
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "plan", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./cli -run Plan -update to create it")
	require.Equal(t, string(want), got)
}

func TestPlanGolden(t *testing.T) {
	sample := filepath.Join("testdata", "plan", "sample.ndjson")
	prices := filepath.Join("testdata", "plan", "prices.yaml")
	tests := []struct {
		name string
		args []string
	}{
		{"guide-daily", []string{"--item-bytes", "180", "--rate", "600"}},
		{"guide-year", []string{"--item-bytes", "180", "--rate", "600", "--retention", "365d"}},
		{"guide-year-archived", []string{"--item-bytes", "180", "--rate", "600", "--retention", "365d", "--archive-after", "30d", "--archive-target", "s3://bucket/events"}},
		{"forced-tiers", []string{"--item-bytes", "180", "--rate", "600", "--retention", "90d", "--hot-billing", "on_demand", "--cold-class", "standard", "--period", "week"}},
		{"guide-six-shards", []string{"--item-bytes", "180", "--rate", "5000", "--peak", "6000", "--retention", "90d"}},
		{"field-bytes", []string{"--field-bytes", "180", "--rate", "600", "--retention", "12w", "--write-time-grouping", "none"}},
		{"sample-reads", []string{"--sample", sample, "--rate", "200", "--peak", "400", "--retention", "2160h", "--reads-per-sec", "5", "--read-range", "1h", "--series", "50"}},
		{"hourly-quota", []string{"--item-bytes", "1000", "--rate", "900", "--retention", "90d"}},
		{"prices", []string{"--item-bytes", "180", "--rate", "600", "--retention", "30d", "--prices", prices, "--price-storage-gb-month", "0.1", "--currency", "EUR"}},
	}
	for _, tt := range tests {
		for _, format := range []string{"table", "json"} {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				out, _, err := runPlanCmd(t, append(tt.args, "--format", format)...)
				require.NoError(t, err)
				ext := ".txt"
				if format == "json" {
					ext = ".json"
					var r planner.Report
					require.NoError(t, json.Unmarshal([]byte(out), &r))
					require.Equal(t, planner.SchemaVersion, r.SchemaVersion)
				}
				golden(t, tt.name+ext, out)
			})
		}
	}
}

// --event-bytes, the old name of --field-bytes, still works, and says so.
func TestPlanEventBytesIsFieldBytes(t *testing.T) {
	args := []string{"--rate", "600", "--retention", "12w", "--write-time-grouping", "none"}
	want, _, err := runPlanCmd(t, append([]string{"--field-bytes", "180"}, args...)...)
	require.NoError(t, err)
	got, errOut, err := runPlanCmd(t, append([]string{"--event-bytes", "180"}, args...)...)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Contains(t, errOut, "--event-bytes is deprecated: it is --field-bytes")
}

func TestPlanGuideExample(t *testing.T) {
	out, _, err := runPlanCmd(t, "--item-bytes", "180", "--rate", "600", "--format", "json")
	require.NoError(t, err)
	var r planner.Report
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, "day", r.Period)
	require.InDelta(t, 26.5, r.Partition.UsableFillHours, 0.5)

	out, _, err = runPlanCmd(t, "--item-bytes", "180", "--rate", "5000", "--peak", "6000", "--format", "json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, 6, r.Shards)

	// A year of the guide's example costs at most $950 a month at the
	// built-in prices, as AWS bills it (capacity at auto scaling's 70%
	// target, point-in-time recovery, the free tier), and at most $600
	// with archives on S3 after 30 days (exports and checks included).
	for _, tc := range []struct {
		args []string
		most float64
	}{
		{[]string{"--retention", "365d"}, 950},
		{[]string{"--retention", "365d", "--archive-after", "30d", "--archive-target", "s3://bucket/events"}, 600},
	} {
		out, _, err = runPlanCmd(t, append([]string{"--item-bytes", "180", "--rate", "600", "--format", "json"}, tc.args...)...)
		require.NoError(t, err)
		r = planner.Report{}
		require.NoError(t, json.Unmarshal([]byte(out), &r))
		require.LessOrEqual(t, r.Cost.Recommended.Total, tc.most, tc.args)
	}
}

func TestPlanErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.ndjson")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	bad := filepath.Join(dir, "bad.ndjson")
	require.NoError(t, os.WriteFile(bad, []byte(`{"time": "yesterday"}`+"\n"), 0o644))
	big := filepath.Join(dir, "big.ndjson")
	require.NoError(t, os.WriteFile(big, []byte(`{"time": 1491825600123, "fields": {"blob": "`+strings.Repeat("x", 410000)+`"}}`+"\n"), 0o644))
	badPrices := filepath.Join(dir, "prices.yaml")
	require.NoError(t, os.WriteFile(badPrices, []byte("wcu_hours: 1\n"), 0o644))

	tests := []struct {
		name string
		args []string
		want error
		text string
	}{
		{"no size", []string{"--rate", "10"}, planner.ErrInvalidInput, "event size"},
		{"two sizes", []string{"--item-bytes", "100", "--event-bytes", "50", "--rate", "10"}, planner.ErrInvalidInput, "only one"},
		{"zero rate", []string{"--item-bytes", "100"}, planner.ErrInvalidInput, "rate"},
		{"negative rate", []string{"--item-bytes", "100", "--rate", "-1"}, planner.ErrInvalidInput, "rate"},
		{"peak below rate", []string{"--item-bytes", "100", "--rate", "10", "--peak", "5"}, planner.ErrInvalidInput, "below the average"},
		{"item over the limit", []string{"--item-bytes", "409601", "--rate", "10"}, planner.ErrItemTooLarge, "409601"},
		{"sample item over the limit", []string{"--sample", big, "--rate", "10"}, planner.ErrItemTooLarge, "over 409600"},
		{"bad retention", []string{"--item-bytes", "100", "--rate", "10", "--retention", "3 months"}, nil, "--retention"},
		{"bad format", []string{"--item-bytes", "100", "--rate", "10", "--format", "xml"}, nil, "--format"},
		{"missing sample", []string{"--sample", filepath.Join(dir, "none.ndjson"), "--rate", "10"}, os.ErrNotExist, "read sample"},
		{"empty sample", []string{"--sample", empty, "--rate", "10"}, nil, "no events"},
		{"invalid sample", []string{"--sample", bad, "--rate", "10"}, nil, "bad.ndjson"},
		{"unknown price key", []string{"--item-bytes", "100", "--rate", "10", "--prices", badPrices}, nil, "wcu_hours"},
		{"negative price", []string{"--item-bytes", "100", "--rate", "10", "--price-wcu-hour", "-1"}, planner.ErrInvalidInput, "wcu_hour"},
		{"arguments", []string{"--item-bytes", "100", "--rate", "10", "extra"}, nil, "unknown command"},
		{"zero series", []string{"--item-bytes", "100", "--rate", "10", "--series", "0"}, nil, "must be positive"},
		{"peak and peak factor", []string{"--item-bytes", "100", "--rate", "10", "--peak", "20", "--peak-factor", "2"}, nil, "not both"},
		{"peak factor below 1", []string{"--item-bytes", "100", "--rate", "10", "--peak-factor", "0.5"}, nil, "factor of 1 or more"},
		{"restores without archives", []string{"--item-bytes", "100", "--rate", "10", "--restore-gb", "5"}, planner.ErrInvalidInput, "restores need archives"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := runPlanCmd(t, tt.args...)
			require.Error(t, err)
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
			}
			require.Contains(t, err.Error(), tt.text)
			require.Empty(t, out)
		})
	}
}

// --peak-factor is the peak as a multiple of the rate: the hot tier is
// auto scaled at 70% from the rate's capacity to the peak's, and the bill
// prices the peak's; --restore-gb prices imports from S3.
func TestPlanPeakFactorAndRestores(t *testing.T) {
	out, _, err := runPlanCmd(t, "--item-bytes", "180", "--rate", "600", "--peak-factor", "1.5", "--retention", "365d",
		"--archive-after", "30d", "--archive-target", "s3://bucket/events", "--restore-gb", "100", "--format", "json")
	require.NoError(t, err)
	var r planner.Report
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, 900.0, r.Workload.Peak)
	require.Equal(t, int64(1286), r.Tiers[0].Write, "900 units at 70%")
	require.Equal(t, int64(858), r.Tiers[0].MinWrite, "600 units at 70%")
	require.Equal(t, int64(858), r.Family.Tiers[0].Write)
	require.Equal(t, int64(1286), r.Family.Tiers[0].MaxWrite)
	var imported float64
	for _, l := range r.Bill.Lines {
		if l.Price == "import_gb" {
			imported = l.Quantity
		}
	}
	require.Equal(t, 100.0, imported)
}

func TestSampleSizes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.ndjson")
	body := `{"time": "2017-04-10T12:00:00.123456Z", "series": "s", "id": "abc", "fields": {"a": "xyz"}}
{"time": 1491825600123, "series": "s", "fields": {"a": "xyz"}}
{"time": "2017-04-10T12:00:00Z"}
`
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	sizes, _, _, err := sampleSizes(path, "t", "tb", planClock.Now(), false)
	require.NoError(t, err)
	// pk "t#tb#s#0" is 8 bytes, sk a 30-byte time, "#" and the id (the
	// client's, or the 11 characters a table made now gives), the field
	// "a" 1 + 3 bytes; names "pk" and "sk" 2 bytes each.
	require.Equal(t, []int{2 + 8 + 2 + 30 + 1 + 3 + 4, 2 + 8 + 2 + 30 + 1 + 11 + 4, 2 + 7 + 2 + 30 + 1 + 11}, sizes)
}

func TestPlanApply(t *testing.T) {
	path := filepath.Join(t.TempDir(), "timetable.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`# production
families:
  - name: audit
    prefix: tt_audit_
    period: month
tables:
  a_table: {family: events, layout: map}
`), 0o600))
	_, errOut, err := runPlanCmd(t, "--item-bytes", "180", "--rate", "5000", "--peak", "6000", "--retention", "90d", "--apply", path)
	require.NoError(t, err)
	require.Contains(t, errOut, `wrote family "events" (day tables, 6 shards)`)

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(data), "# production\n"))
	var doc struct {
		Families []map[string]any             `yaml:"families"`
		Tables   map[string]map[string]string `yaml:"tables"`
	}
	require.NoError(t, yaml.Unmarshal(data, &doc))
	require.Len(t, doc.Families, 2)
	require.Equal(t, "audit", doc.Families[0]["name"])
	f := doc.Families[1]
	require.Equal(t, "events", f["name"])
	require.Equal(t, "tt_events_", f["prefix"])
	require.Equal(t, "day", f["period"])
	require.Equal(t, 6, f["shards"])
	require.Equal(t, "90d", f["retention"])
	require.Equal(t, "provisioned", f["billing"])
	require.Equal(t, []any{
		// Auto scaled at 70% between the average rate and the peak.
		map[string]any{"name": "hot", "age": 0, "billing": "provisioned", "read": 1, "write": 7143, "max_write": 8572, "class": "standard", "pitr": true},
		map[string]any{"name": "warm", "age": "1 period", "billing": "on_demand", "class": "standard", "pitr": true},
		map[string]any{"name": "cold", "age": "2 periods", "billing": "on_demand", "class": "infrequent_access", "pitr": false},
	}, f["tiers"])
	require.Equal(t, map[string]string{"family": "events", "layout": "map"}, doc.Tables["a_table"])
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the file keeps its mode")

	// The server's configuration loader reads the family back as planned.
	c, err := config.Load(path)
	require.NoError(t, err)
	events := c.Family("a_table")
	require.Equal(t, "events", events.Name)
	require.Equal(t, "tt_events_", events.Prefix)
	require.Equal(t, "day", events.Granularity.String())
	require.Equal(t, naming.Range, events.Naming)
	require.True(t, events.WriteTimeGrouping)
	require.Equal(t, 6, events.Shards)
	require.Equal(t, family.LayoutRow, events.Layout)
	require.Equal(t, storage.Provisioned, events.Billing)
	require.Equal(t, []family.Tier{
		{Name: "hot", Age: family.Age{}, Capacity: storage.Capacity{Billing: storage.Provisioned, Read: 1, Write: 7143, MaxWrite: 8572, Class: storage.ClassStandard}, PITR: true},
		{Name: "warm", Age: family.Age{Periods: 1}, Capacity: storage.Capacity{Billing: storage.OnDemand, Class: storage.ClassStandard}, PITR: true},
		{Name: "cold", Age: family.Age{Periods: 2}, Capacity: storage.Capacity{Billing: storage.OnDemand, Class: storage.ClassInfrequentAccess}},
	}, events.Tiers)
	require.Equal(t, time.Hour, events.Prebuild)
	require.Equal(t, 15*time.Minute, events.Grace)
	require.Equal(t, 90*24*time.Hour, events.Retention)
	require.Len(t, c.Families, 2)

	// A new file is created.
	fresh := filepath.Join(t.TempDir(), "new.yaml")
	_, _, err = runPlanCmd(t, "--item-bytes", "180", "--rate", "600", "--family", "metrics", "--apply", fresh)
	require.NoError(t, err)
	data, err = os.ReadFile(fresh)
	require.NoError(t, err)
	c, err = config.Load(fresh)
	require.NoError(t, err)
	metrics := c.Families[0]
	require.Equal(t, "metrics", metrics.Name)
	require.Equal(t, "tt_metrics_", metrics.Prefix)
	require.Equal(t, "day", metrics.Granularity.String())
	require.Zero(t, metrics.Retention)
	entries, err := os.ReadDir(filepath.Dir(fresh))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")
}

// A plan that archives names where: without a target, the family would
// delete its tables at --archive-after with nothing archived. Nothing is
// written when the plan is refused.
func TestPlanApplyArchive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "timetable.yaml")
	base := []string{"--item-bytes", "180", "--rate", "600", "--retention", "365d", "--apply", path}
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"--archive-after", "30d"}, "archive after 30d needs an archive target"},
		{[]string{"--archive-target", "s3://bucket/events"}, `archive target "s3://bucket/events" needs the time tables are archived after`},
		{[]string{"--archive-after", "30d", "--archive-target", "bucket/events"}, `archive "bucket/events": must be file://DIR or s3://bucket/prefix`},
		{[]string{"--archive-after", "30d", "--archive-target", "s3://bucket/events", "--archive-format", "csv"}, `archive format "csv" must be ndjson or parquet`},
	} {
		_, _, err := runPlanCmd(t, append(base, tc.args...)...)
		require.ErrorContains(t, err, tc.err)
		require.NoFileExists(t, path)
	}

	_, errOut, err := runPlanCmd(t, append(base, "--archive-after", "30d", "--archive-target", "s3://bucket/events")...)
	require.NoError(t, err)
	require.Contains(t, errOut, "tables are archived to s3://bucket/events and deleted from DynamoDB 30d after their period")
	c, err := config.Load(path)
	require.NoError(t, err)
	f := c.Families[0]
	require.Equal(t, 30*24*time.Hour, f.Retention)
	require.Equal(t, "s3://bucket/events", f.Archive)
	require.Equal(t, family.ArchiveParquet, f.ArchiveFormat)

	// Planned again without archives, the family deletes its tables at
	// the retention priced, and has no archive left.
	_, _, err = runPlanCmd(t, base...)
	require.NoError(t, err)
	c, err = config.Load(path)
	require.NoError(t, err)
	require.Equal(t, 365*24*time.Hour, c.Families[0].Retention)
	require.Empty(t, c.Families[0].Archive)
}

// Every period and billing the planner can recommend, written by --apply,
// is one the configuration loader accepts, with the same meaning.
func TestPlanApplyEveryPeriodLoads(t *testing.T) {
	tests := []struct {
		args   []string
		period string
	}{
		{[]string{"--item-bytes", "1000", "--rate", "900", "--period", "hour"}, "hour"},
		{[]string{"--item-bytes", "1000", "--rate", "300", "--period", "6h"}, "6h"},
		{[]string{"--item-bytes", "1000", "--rate", "200", "--period", "12h"}, "12h"},
		{[]string{"--item-bytes", "180", "--rate", "600"}, "day"},
		{[]string{"--item-bytes", "180", "--rate", "80", "--write-time-grouping", "none", "--period", "week"}, "week"},
		{[]string{"--item-bytes", "180", "--rate", "20", "--retention", "365d", "--period", "month", "--archive-after", "30d", "--archive-target", "s3://bucket/events"}, "month"},
		{[]string{"--item-bytes", "100", "--rate", "0.5", "--retention", "730d"}, "quarter"},
	}
	billings := map[storage.Billing]bool{}
	for _, tt := range tests {
		t.Run(tt.period, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "timetable.yaml")
			out, _, err := runPlanCmd(t, append(tt.args, "--apply", path, "--format", "json")...)
			require.NoError(t, err)
			var r planner.Report
			require.NoError(t, json.Unmarshal([]byte(out), &r))
			require.Equal(t, tt.period, r.Period)
			c, err := config.Load(path)
			require.NoError(t, err)
			f := c.Family("any")
			require.Equal(t, tt.period, f.Granularity.String())
			require.Equal(t, r.Shards, f.Shards)
			asConfig := map[string]storage.Billing{planner.BillingProvisioned: storage.Provisioned, planner.BillingOnDemand: storage.OnDemand}
			require.Equal(t, asConfig[r.Tiers[0].Billing], f.Billing)
			require.Equal(t, r.Workload.WriteTimeGrouping == "month", f.WriteTimeGrouping)
			retention := r.Workload.RetentionHours
			if r.Workload.ArchiveAfterHours > 0 {
				retention = r.Workload.ArchiveAfterHours
			}
			require.Equal(t, time.Duration(retention*float64(time.Hour)), f.Retention)
			require.Len(t, f.Tiers, len(r.Tiers))
			for i, tier := range r.Tiers {
				require.Equal(t, tier.Name, f.Tiers[i].Name)
				require.Equal(t, asConfig[tier.Billing], f.Tiers[i].Capacity.Billing)
				require.Equal(t, tier.Class, f.Tiers[i].Capacity.Normal().Class, "the class priced is the class applied")
				billings[f.Tiers[i].Capacity.Billing] = true
				if tier.Billing == planner.BillingProvisioned {
					require.Equal(t, tier.Write, f.Tiers[i].Capacity.Write)
					require.Equal(t, tier.Read, f.Tiers[i].Capacity.Read)
				}
			}
		})
	}
	require.Len(t, billings, 2, "both billing modes are written and read back")
}

func TestPlanSVG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.svg")
	_, _, err := runPlanCmd(t, "--item-bytes", "180", "--rate", "600", "--retention", "90d", "--svg", path)
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := xml.NewDecoder(bytes.NewReader(data))
	ids := map[string]bool{}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "the SVG is well-formed XML")
		if el, ok := tok.(xml.StartElement); ok && el.Name.Local == "polyline" {
			for _, a := range el.Attr {
				if a.Name.Local == "id" {
					ids[a.Value] = true
				}
			}
		}
	}
	require.Equal(t, map[string]bool{"stored": true, "tier-hot": true, "tier-warm": true, "tier-cold": true, "storage": true}, ids)
}

func TestPlanDurations(t *testing.T) {
	for arg, hours := range map[string]float64{"0": 0, "90d": 2160, "12w": 2016, "36h": 36, "1h30m": 1.5} {
		out, _, err := runPlanCmd(t, "--item-bytes", "180", "--rate", "600", "--retention", arg, "--format", "json")
		require.NoError(t, err, arg)
		var r planner.Report
		require.NoError(t, json.Unmarshal([]byte(out), &r))
		require.Equal(t, hours, r.Workload.RetentionHours, arg)
	}
}
