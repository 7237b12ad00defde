package planner_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/planner"
	"github.com/timetabledb/timetable/storage"
)

// TestYearBillIsThePlan simulates the family `timetable plan --apply`
// writes for the AWS guide's example, a year on S3 after 30 days in
// DynamoDB, table by table, by the family's own rules (family.TierAt for
// each table's tier, capacity, class and point-in-time recovery at every
// quarter hour, family.ExpiresAt for its archive and delete, write months
// included), over a month of steady state; it adds up what AWS bills for
// it (unit-hours, requests, GB-hours, each table exported and scanned
// once, archives on S3 until the retention), prices that usage with the
// same model (Usage.Bill), and finds the plan's bill within 5%. The plan
// counts tables by Little's law; this counts them one by one. A chunk
// family's tables are packed as each leaves the hot tier, as the
// lifecycle packs them (Report.Packed): each table's chunks as written
// scanned and its packed chunks written and read back in the quarter
// hour it leaves the hot tier, packed chunks from then on. Where the
// plan prices chunks packed later (events one at a time), it does the
// same for them: rows while hot, each table's rows scanned and its
// chunks written and read back in the quarter hour it leaves the hot
// tier, chunks from then on, and finds Report.PackedLater's bill within
// 5% too.
func TestYearBillIsThePlan(t *testing.T) {
	const day = 24 * time.Hour
	for _, tc := range []struct {
		name string
		in   planner.Input
	}{
		{"guide-archived", planner.Input{ItemBytes: 180, Rate: 600, Retention: 365 * day, ArchiveAfter: 30 * day, ArchiveTarget: "s3://bucket/events"}},
		{"guide-deleted", planner.Input{ItemBytes: 180, Rate: 600, Retention: 90 * day}},
		{"week-reads", planner.Input{ItemBytes: 400, Rate: 50, Period: "week", Retention: 120 * day, ArchiveAfter: 60 * day, ArchiveTarget: "s3://bucket/w", Series: 10, ReadsPerSec: 1, ReadRange: time.Hour}},
		{"guide-telegraf-chunks", planner.Input{ItemBytes: 180, Rate: 600, Retention: 365 * day, ArchiveAfter: 30 * day, ArchiveTarget: "s3://bucket/events", BatchEvents: 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := planner.Plan(tc.in)
			require.NoError(t, err)
			require.Equal(t, "steady state", r.CostedAt)
			doc, err := planner.ApplyFamily(nil, r.Family)
			require.NoError(t, err)
			c, err := config.Parse(doc)
			require.NoError(t, err)
			f := c.Families[0]

			kept := tc.in.Retention
			start := time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC)
			// Three months of steady state, once every table of the
			// window has lived its life, archives included: a month's
			// bill is a third of theirs.
			const months = 3
			from := start.Add(kept + 62*day)
			to := from.Add(months * 730 * time.Hour)
			got := simulate(f, r, tc.in, start, from, to, months)
			bill := got.Bill(r.Prices)
			for _, cat := range []string{planner.CategoryWrite, planner.CategoryRead, planner.CategoryStorage, planner.CategoryBackup, planner.CategoryArchive, planner.CategoryArchiving, planner.CategoryFreeTier} {
				t.Logf("%-10s simulated %10.2f  planned %10.2f", cat, bill.Sum(cat), r.Bill.Sum(cat))
			}
			t.Logf("total      simulated %10.2f  planned %10.2f", bill.Total, r.Bill.Total)
			require.InEpsilon(t, r.Bill.Total, bill.Total, 0.05, "the simulated month's bill against the plan's")

			if p := r.PackedLater; p != nil {
				// Chunks packed later, table by table: rows while hot,
				// each table packed as it leaves the hot tier (its rows
				// scanned, its chunks written and read back), chunks
				// from then on.
				got := simulatePacked(f, r, tc.in, start, from, to, months)
				bill := got.Bill(r.Prices)
				for _, cat := range []string{planner.CategoryWrite, planner.CategoryRead, planner.CategoryStorage, planner.CategoryBackup, planner.CategoryArchive, planner.CategoryArchiving, planner.CategoryFreeTier} {
					t.Logf("packed later %-10s simulated %10.2f  planned %10.2f", cat, bill.Sum(cat), p.Bill.Sum(cat))
				}
				t.Logf("packed later total      simulated %10.2f  planned %10.2f", bill.Total, p.Bill.Total)
				require.InEpsilon(t, p.Bill.Total, bill.Total, 0.05, "the simulated month's bill of chunks packed later against the plan's")
			}
		})
	}
}

// simulate adds up the usage of the family's tables over [from, to),
// those of a chunk family packed as each leaves the hot tier (r.Packed),
// as the lifecycle packs them.
func simulate(f family.Family, r planner.Report, in planner.Input, start, from, to time.Time, months float64) planner.Usage {
	return simulateLayout(f, r, in, start, from, to, months, r.Packed)
}

// simulatePacked adds up the usage of the family's tables over [from,
// to) with their events packed into chunks as each leaves the hot tier
// (r.PackedLater's chunks), as the lifecycle rewrites a table on
// DynamoDB (package compact, NextGeneration).
func simulatePacked(f family.Family, r planner.Report, in planner.Input, start, from, to time.Time, months float64) planner.Usage {
	return simulateLayout(f, r, in, start, from, to, months, &r.PackedLater.Packing)
}

// simulateLayout is simulate, with events packed later when packed is
// set.
func simulateLayout(f family.Family, r planner.Report, in planner.Input, start, from, to time.Time, months float64, packed *planner.Packing) planner.Usage {
	const step = 15 * time.Minute
	hours := step.Hours()
	// What an event takes in the plan's layout: its share of an item's
	// bytes, write units and storage overhead.
	itemBytes, overhead := r.Stored.Bytes, r.Stored.OverheadBytes
	hot := f.Tiers[0].Name
	// What an event takes once its table has left the hot tier.
	laterBytes, laterOverhead := itemBytes, overhead
	if packed != nil {
		laterBytes, laterOverhead = packed.Event.Bytes, packed.Event.OverheadBytes
	}
	var compaction *planner.TierUsage
	perHour := r.Workload.Rate * 3600 // events
	gb := func(events, bytesEach float64) float64 { return events * bytesEach / (1 << 30) / months }
	tiers := map[string]*planner.TierUsage{}
	var order []string
	u := planner.Usage{Archived: r.Family.Archive != nil}
	keep := time.Duration(r.Workload.RetentionHours * float64(time.Hour))

	// Every period from well before the window to its end: one table
	// each (a day's table never straddles a month; a week's may, and
	// then the events of each write month go to their own table).
	first := f.Granularity.Of(start.Add(-2 * keep)).Start
	for p := f.Granularity.Of(first); p.Start.Before(to); p = f.Granularity.Of(p.End) {
		// The write months the period's events fall into.
		for m := p.Start; m.Before(p.End); {
			ref := f.TableFor(m, m)
			spanEnd := p.End
			if !ref.WriteMonth.IsZero() && ref.WriteMonth.End().Before(spanEnd) {
				spanEnd = ref.WriteMonth.End()
			}
			spanStart := m
			m = spanEnd
			created := spanStart.Add(-f.Prebuild)
			if ref.Period.Start.Equal(spanStart) {
				created = ref.Period.Start.Add(-f.Prebuild)
			}
			expires := f.ExpiresAt(ref)
			held := func(t time.Time) float64 { // events held at t
				if t.Before(spanStart) {
					return 0
				}
				end := spanEnd
				if t.Before(end) {
					end = t
				}
				return end.Sub(spanStart).Hours() * perHour
			}
			if expires.IsZero() || !expires.Before(from) || u.Archived {
				for now := from.Add(step / 2); now.Before(to); now = now.Add(step) {
					if now.Before(created) || (!expires.IsZero() && !now.Before(expires)) {
						continue
					}
					tier := f.TierAt(ref, now)
					tu := tiers[tier.Name]
					if tu == nil {
						tu = &planner.TierUsage{Tier: tier.Name, Class: tier.Capacity.Class}
						tiers[tier.Name] = tu
						order = append(order, tier.Name)
					}
					cp := tier.Capacity
					if cp.Billing == storage.Provisioned {
						tu.WCUHours += float64(cp.Write) * hours / months
						tu.RCUHours += float64(cp.Read) * hours / months
					} else if !now.Before(spanStart) && now.Before(spanEnd) {
						tu.WriteUnits += perHour * hours * r.Stored.WriteUnits / months
					}
					bytesEach := itemBytes + overhead
					if tier.Name != hot {
						bytesEach = laterBytes + laterOverhead
					}
					stored := gb(held(now), bytesEach) * hours / 730
					tu.StorageGBMonth += stored
					if tier.PITR {
						tu.PITRGBMonth += stored
					}
				}
			}
			if packed != nil {
				// Packed as it leaves the hot tier: the first quarter
				// hour at which the family puts it in another tier.
				left := created
				for f.TierAt(ref, left).Name == hot {
					left = left.Add(step)
				}
				if !left.Before(from) && left.Before(to) {
					if compaction == nil {
						compaction = &planner.TierUsage{Tier: "compaction", Class: f.TierAt(ref, left).Capacity.Class}
					}
					compaction.ReadUnits += held(spanEnd) * (itemBytes/8192 + laterBytes/4096) / months
					compaction.WriteUnits += held(spanEnd) * packed.Event.WriteUnits / months
				}
			}
			if !u.Archived || expires.IsZero() {
				continue
			}
			events := held(spanEnd)
			if !expires.Before(from) && expires.Before(to) {
				// Exported, then scanned to check it, as it leaves.
				u.ExportGB += gb(events, laterBytes+laterOverhead)
				u.ScanReadUnits += events * laterBytes / 8192 / months
				puts, gets := planner.ArchiveRequests(events * r.Item.Bytes * r.Workload.ArchiveRatio)
				u.S3Puts += puts / months
				u.S3Gets += gets / months
			}
			// On S3 from its export until the retention after its
			// period, as an S3 lifecycle rule expires it.
			gone := ref.Period.End.Add(time.Duration(in.Retention))
			lo, hi := maxTime(expires, from), minTime(gone, to)
			if hi.After(lo) {
				// Archives hold events, whatever the layout.
				u.ArchiveGBMonth += gb(events, r.Item.Bytes*r.Workload.ArchiveRatio) * hi.Sub(lo).Hours() / 730
			}
		}
	}
	last := f.Tiers[len(f.Tiers)-1]
	u.ScanClass, u.ScanProvisioned = last.Capacity.Class, last.Capacity.Billing == storage.Provisioned
	if in.ReadsPerSec > 0 {
		// The read load as the plan gives it: the simulation counts
		// tables, not queries.
		for i, tr := range r.Usage.Tiers {
			if tu := tiers[tr.Tier]; tu != nil {
				tu.ReadUnits = r.Usage.Tiers[i].ReadUnits
			}
		}
	}
	for _, name := range order {
		u.Tiers = append(u.Tiers, *tiers[name])
	}
	if compaction != nil {
		u.Tiers = append(u.Tiers, *compaction)
	}
	return u
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
