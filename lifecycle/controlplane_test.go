package lifecycle_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/planner"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore/dynamofault"
)

// yearSteps returns the instants a year's walk reconciles at: every
// period and month boundary, just before and after its prebuild and its
// grace, and the middle of every week.
func yearSteps(start time.Time) []time.Time {
	var out []time.Time
	end := start.AddDate(1, 0, 0)
	for d := start; d.Before(end); d = d.Add(24 * time.Hour) {
		if d.Weekday() == time.Wednesday {
			out = append(out, d.Add(12*time.Hour))
		}
		if d.Weekday() == time.Sunday || d.Day() == 1 {
			for _, off := range []time.Duration{-prebuild, 0, grace, grace + time.Hour} {
				out = append(out, d.Add(off))
			}
		}
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return slices.CompactFunc(out, func(a, b time.Time) bool { return a.Equal(b) })
}

// TestYearKeepsDynamoDBRules walks a year of the lifecycle on a fake clock
// against a DynamoDB-API server behind dynamofault.ControlPlane, which
// keeps DynamoDB's control-plane rules (switches to on demand, capacity
// decreases, class changes, TTL changes) and deletion protection, with
// the default tiers and with the blog's provisioned ones, a TTL, and
// retention with an archive. No request may break a rule, and every
// action deferred must be done by a later cycle.
func TestYearKeepsDynamoDBRules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tiers func() []family.Tier
		// months, when not zero, shortens the walk.
		months int
	}{
		// A table lives six weeks (the retention below), so that four
		// months walk every table's whole life several times over: the
		// default tiers walk the year, the others four months.
		{"default-tiers", family.DefaultTiers, 0},
		{"blog-tiers", family.BlogTiers, 4},
		{"auto-scaled-hot", func() []family.Tier {
			tiers := family.DefaultTiers()
			tiers[0].Capacity = storage.Capacity{Billing: storage.Provisioned, Read: 5, Write: 10, MaxRead: 300, MaxWrite: 1000}
			return tiers
		}, 4},
		// The tiers `timetable plan --apply` writes for the AWS guide's
		// example: the lifecycle must apply the billing and class each
		// tier was priced at.
		{"planned-tiers", func() []family.Tier { tiers, _ := plannedTiers(t); return tiers }, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			start := time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC)
			clk := clock.NewManual(start.Add(-prebuild))
			store, cfg, cp, as := backends.OpenDynamo(t, clk.Now)
			f := &cfg.Families[0]
			f.Tiers = tc.tiers()
			f.Retention = 6 * week
			f.TTL = 90 * 24 * time.Hour
			f.Archive = "file:///archive"
			arch := &fakeArchiver{verified: map[string]bool{}}
			r := reconciler(t, lifecycle.Options{Store: store, Families: cfg.Families, MetaTable: cfg.MetaTable, Clock: clk,
				OpenArchiver: func(string, family.ArchiveFormat) (lifecycle.Archiver, error) { return arch, nil }})

			type key struct {
				kind  lifecycle.Kind
				table string
			}
			pending := map[key]time.Time{} // deferred, not yet done
			deferrals := 0
			var priced map[string]storage.Capacity
			if tc.name == "planned-tiers" {
				_, priced = plannedTiers(t)
			}
			for _, now := range yearSteps(start) {
				if tc.months != 0 && !now.Before(start.AddDate(0, tc.months, 0)) {
					break
				}
				clk.Set(now)
				res, err := r.Reconcile(ctx, false)
				require.NoError(t, err, "reconcile at %s", now)
				for _, x := range res {
					k := key{x.Kind, x.Table}
					switch x.Outcome {
					case lifecycle.Done:
						delete(pending, k)
					case lifecycle.Deferred:
						deferrals++
						if _, ok := pending[k]; !ok {
							pending[k] = now
						}
					default:
						t.Fatalf("%s %s at %s: %s", x.Kind, x.Table, now, x)
					}
				}
				if tc.name == "planned-tiers" {
					checkPriced(t, store, cp, cfg.MetaTable, *f, priced, now)
				}
				// A deferred action is done, or no longer needed, by
				// the next cycles: none waits more than a day.
				for k, since := range pending {
					if now.Sub(since) > 24*time.Hour {
						plan, err := r.Plan(ctx)
						require.NoError(t, err)
						if !slices.ContainsFunc(plan, func(a lifecycle.Action) bool { return a.Kind == k.kind && a.Table == k.table }) {
							delete(pending, k)
							continue
						}
						t.Fatalf("%s %s deferred since %s, still at %s", k.kind, k.table, since, now)
					}
				}
			}
			require.Empty(t, cp.Refusals(), "requests that broke DynamoDB's rules")
			calls := cp.Calls()
			t.Logf("%s: control-plane calls %v, %d deferrals", tc.name, calls, deferrals)
			require.NotZero(t, calls["DeleteTable"], "tables went past retention")
			switch tc.name {
			case "default-tiers":
				require.NotZero(t, calls["UpdateTable:class"], "cold tables go Standard-IA")
			case "blog-tiers":
				require.NotZero(t, calls["UpdateTable:decrease"], "hot tables go warm and cold")
				require.NotZero(t, calls["UpdateTable:on-demand"], "tables go on demand for their export")
			case "auto-scaled-hot":
				// Every hot table was auto scaled, and none is once it
				// went warm: only the current week's table(s) are.
				require.NotZero(t, as.Calls()["RegisterScalableTarget"])
				require.NotZero(t, calls["UpdateTable:on-demand"], "hot tables go on demand when warm")
				targets := as.Targets()
				require.NotEmpty(t, targets)
				require.LessOrEqual(t, len(targets), 2*3, "the hot tables only: this week's, and a write month's, and the next prebuilt")
				for k, s := range targets {
					require.Equal(t, "timetable-"+map[bool]string{true: "DynamoDBReadCapacityUtilization", false: "DynamoDBWriteCapacityUtilization"}[strings.HasSuffix(k.Dimension, "ReadCapacityUnits")], s.Policy, k)
				}
			}
		})
	}
}

// plannedTiers returns the tiers of the family `timetable plan --item-bytes
// 180 --rate 600 --retention 365d --apply` writes, read back by the
// configuration loader, and the capacity and class the plan priced each
// tier at, from its report.
func plannedTiers(t *testing.T) ([]family.Tier, map[string]storage.Capacity) {
	t.Helper()
	r, err := planner.Plan(planner.Input{ItemBytes: 180, Rate: 600, Retention: 365 * 24 * time.Hour})
	require.NoError(t, err)
	doc, err := planner.ApplyFamily(nil, r.Family)
	require.NoError(t, err)
	c, err := config.Parse(doc)
	require.NoError(t, err)
	tiers := c.Families[0].Tiers
	require.Len(t, tiers, len(r.Tiers))
	priced := map[string]storage.Capacity{}
	classes := 0
	for _, tier := range r.Tiers {
		pc := storage.Capacity{Billing: storage.OnDemand, Class: tier.Class}
		if tier.Billing == planner.BillingProvisioned {
			pc.Billing, pc.Read, pc.Write = storage.Provisioned, tier.Read, tier.Write
		}
		if tier.Class == storage.ClassInfrequentAccess {
			classes++
		}
		priced[tier.Name] = pc
	}
	require.NotZero(t, classes, "the plan stores a tier in Standard-IA")
	return tiers, priced
}

// checkPriced checks that every live table of a priced tier has, as the
// ControlPlane recorded it (DynamoDB Local ignores the class), the class
// its tier was priced at, and, as the store describes it, its billing and
// provisioned units.
func checkPriced(t *testing.T, store storage.Store, cp *dynamofault.ControlPlane, meta string, f family.Family, priced map[string]storage.Capacity, now time.Time) {
	t.Helper()
	ctx := context.Background()
	entries, err := registry.New(store, meta).List(ctx, f.Name)
	require.NoError(t, err)
	seen := 0
	for _, e := range entries {
		want, ok := priced[e.Tier]
		if !ok || e.State != registry.Active {
			continue
		}
		seen++
		require.Equal(t, string(want.Class), cp.Settings(e.Name).Class, "class of %s (%s) at %s", e.Name, e.Tier, now)
		info, err := store.DescribeTable(ctx, e.Name)
		require.NoError(t, err)
		have := info.Capacity.Normal()
		require.Equal(t, want.Billing, have.Billing, "billing of %s (%s) at %s", e.Name, e.Tier, now)
		require.Equal(t, [2]int64{want.Read, want.Write}, [2]int64{have.Read, have.Write}, "units of %s (%s) at %s", e.Name, e.Tier, now)
	}
	require.NotZero(t, seen, "tables of the priced tiers at %s", now)
}
