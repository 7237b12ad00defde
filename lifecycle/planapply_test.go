package lifecycle_test

import (
	"context"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/planner"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

// TestPlanApplyKeepsWhatItPriced applies every period the planner can
// recommend, each kept for a retention and each archived to S3 after a
// shorter time, as `timetable plan --apply` writes it, and walks a year of
// the lifecycle on the family the configuration loader reads back: no
// table is deleted before the time the plan priced it in DynamoDB, every
// table of a plan that archives is archived (to the plan's target) before
// it is deleted, and every table past that time is gone.
func TestPlanApplyKeepsWhatItPriced(t *testing.T) {
	backends.NoDynamoDB(t)
	const day = 24 * time.Hour
	type plan struct {
		name string
		in   planner.Input
	}
	var plans []plan
	for _, p := range []struct {
		period    string
		itemBytes int
		rate      float64
		keep      time.Duration // in DynamoDB
	}{
		{"hour", 1000, 900, 7 * day},
		{"6h", 1000, 300, 14 * day},
		{"12h", 1000, 200, 14 * day},
		{"day", 180, 600, 30 * day},
		{"week", 180, 80, 60 * day},
		{"month", 180, 20, 30 * day},
		{"quarter", 100, 0.5, 90 * day},
	} {
		in := planner.Input{ItemBytes: p.itemBytes, Rate: p.rate, Period: p.period}
		kept, archived := in, in
		kept.Retention = p.keep
		archived.Retention, archived.ArchiveAfter, archived.ArchiveTarget = 365*day, p.keep, "s3://bucket/"+p.period
		plans = append(plans, plan{p.period + "/retention", kept}, plan{p.period + "/archived", archived})
	}
	// The AWS guide's example, as issue #41 ran it: a year, on S3 after
	// 30 days; and its tables kept forever.
	plans = append(plans,
		plan{"guide-year-archived", planner.Input{ItemBytes: 180, Rate: 600, Retention: 365 * day, ArchiveAfter: 30 * day, ArchiveTarget: "s3://bucket/events"}},
		plan{"guide-forever", planner.Input{ItemBytes: 180, Rate: 600}},
		// Telegraf's batches of the guide's stream, which the plan
		// stores in chunks.
		plan{"guide-telegraf-chunks", planner.Input{ItemBytes: 180, Rate: 600, BatchEvents: 10, Retention: 365 * day, ArchiveAfter: 30 * day, ArchiveTarget: "s3://bucket/events"}})

	for _, p := range plans {
		t.Run(p.name, func(t *testing.T) {
			if testing.Short() && p.in.Period != "" {
				t.Skip("the guide's plans only in -short")
			}
			ctx := context.Background()
			r, err := planner.Plan(p.in)
			require.NoError(t, err)
			if p.in.Period != "" {
				require.Equal(t, p.in.Period, r.Period)
			}
			doc, err := planner.ApplyFamily(nil, r.Family)
			require.NoError(t, err)
			c, err := config.Parse(doc)
			require.NoError(t, err, string(doc))
			f := c.Families[0]

			// What the plan priced: how long after its period (and write
			// month) a table stays in DynamoDB, and where it goes then.
			inDynamo := time.Duration(r.Workload.RetentionHours * float64(time.Hour))
			archives := r.Workload.ArchiveAfterHours > 0
			if archives {
				inDynamo = time.Duration(r.Workload.ArchiveAfterHours * float64(time.Hour))
			}
			pricedExpiry := func(ref naming.Ref) time.Time {
				if inDynamo == 0 {
					return time.Time{}
				}
				end := ref.Period.End
				if !ref.WriteMonth.IsZero() && ref.WriteMonth.End().After(end) {
					end = ref.WriteMonth.End()
				}
				return end.Add(inDynamo)
			}

			start := time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC)
			clk := clock.NewManual(start.Add(-prebuild))
			// In memory: the walk makes and deletes hundreds of tables.
			store, err := pebblestore.Open("", pebblestore.Options{FS: vfs.NewMem(), Clock: clk})
			require.NoError(t, err)
			t.Cleanup(func() { store.Close() })
			meta := backends.MetaTable(c.Schema)
			arch := &fakeArchiver{verified: map[string]bool{}}
			var opened []string
			rec := reconciler(t, lifecycle.Options{Store: store, Families: []family.Family{f}, MetaTable: meta, Clock: clk,
				OpenArchiver: func(target string, format family.ArchiveFormat) (lifecycle.Archiver, error) {
					opened = append(opened, target+" "+string(format))
					return arch, nil
				}})
			reg := registry.New(store, meta)

			deleted := map[string]bool{}
			var last time.Time
			// Twice a week: a table's deletion is checked against its
			// priced time whenever it happens, and one a step late is
			// still within the week allowed below.
			for now := start; now.Before(start.AddDate(1, 0, 0)); now = now.Add(84 * time.Hour) {
				clk.Set(now)
				last = now
				res, err := rec.Reconcile(ctx, false)
				require.NoError(t, err, "reconcile at %s", now)
				for _, x := range res {
					require.Contains(t, []lifecycle.Outcome{lifecycle.Done, lifecycle.Deferred}, x.Outcome, "%s %s at %s: %s", x.Kind, x.Table, now, x)
				}
				entries, err := reg.List(ctx, f.Name)
				require.NoError(t, err)
				for _, e := range entries {
					if e.State != registry.Deleted || deleted[e.Name] {
						continue
					}
					deleted[e.Name] = true
					expiry := pricedExpiry(e.Ref)
					require.False(t, expiry.IsZero(), "%s deleted at %s: the plan keeps its tables forever", e.Name, now)
					require.False(t, now.Before(expiry), "%s deleted at %s: the plan keeps it in DynamoDB until %s", e.Name, now, expiry)
					if archives {
						require.True(t, arch.verified[e.Name], "%s deleted at %s without an archive", e.Name, now)
						require.Equal(t, p.in.ArchiveTarget, e.ArchiveTarget, e.Name)
						require.False(t, e.ArchivedAt.IsZero(), e.Name)
					}
				}
			}

			// Retention as priced: a table past its time (a week of the
			// walk's steps and cycles allowed) is gone.
			entries, err := reg.List(ctx, f.Name)
			require.NoError(t, err)
			for _, e := range entries {
				expiry := pricedExpiry(e.Ref)
				if e.State == registry.Deleted || expiry.IsZero() {
					continue
				}
				require.True(t, last.Before(expiry.Add(7*day)), "%s (%s) is still in DynamoDB at %s, past %s", e.Name, e.State, last, expiry)
			}
			switch {
			case archives:
				require.NotEmpty(t, deleted, "a year archives tables kept %s", inDynamo)
				require.Equal(t, []string{p.in.ArchiveTarget + " parquet"}, opened)
			case inDynamo == 0:
				require.Empty(t, deleted)
			case inDynamo < 300*day:
				require.NotEmpty(t, deleted, "a year deletes tables kept %s", inDynamo)
			}
		})
	}
}
