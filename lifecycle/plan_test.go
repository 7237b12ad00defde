package lifecycle_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// table returns the table that holds events of eventTime written at
// writeTime, as the store would describe it at the given tier.
func table(f family.Family, eventTime, writeTime, tier string) lifecycle.Table {
	ref := f.TableFor(at(eventTime), at(writeTime))
	tr, ok := f.Tier(tier)
	if !ok {
		panic("no tier " + tier)
	}
	spec := f.Spec(ref, tr)
	return lifecycle.Table{
		Name: spec.Name, Family: f.Name, Ref: ref, Tier: tier, Capacity: spec.Capacity, CreatedAt: at(writeTime),
		Status: storage.StatusActive, TTLAttribute: spec.TTLAttribute, ItemCount: -1,
	}
}

// render writes a plan one action a line, as the golden files hold it.
func render(plan []lifecycle.Action) string {
	var b strings.Builder
	for _, a := range plan {
		fmt.Fprintf(&b, "%-15s %s tier=%s", a.Kind, a.Table, a.Tier)
		switch a.Kind {
		case lifecycle.Create, lifecycle.UpdateBilling, lifecycle.UpdateCapacity:
			fmt.Fprintf(&b, " %s/%d/%d %s", a.Capacity.Billing, a.Capacity.Read, a.Capacity.Write, a.Capacity.Class)
		}
		switch a.Kind {
		case lifecycle.UpdateBilling, lifecycle.UpdateCapacity:
			fmt.Fprintf(&b, " pitr=%d", a.PITRDays)
		}
		fmt.Fprintf(&b, "\n    %s\n", a.Reason)
	}
	return b.String()
}

func daily() family.Family {
	f := family.Default()
	f.Name, f.Prefix = "daily", "timeseries_"
	f.Granularity = period.Granularity{Unit: period.Day}
	f.WriteTimeGrouping = false
	return f
}

func TestPlanGolden(t *testing.T) {
	events := family.Default()
	withTTL := family.Default()
	withTTL.TTL = 90 * 24 * time.Hour
	retained := family.Default()
	retained.Retention = 28 * 24 * time.Hour
	archived := retained
	archived.Archive = "file:///var/archive"
	onDemand := daily()
	onDemand.Tiers = []family.Tier{
		{Name: "hot", Capacity: storage.Capacity{Billing: storage.OnDemand}},
		{Name: "cold", Age: family.Age{Periods: 1}, Capacity: storage.Capacity{Billing: storage.Provisioned, Read: 1, Write: 1}},
	}

	blog := family.Default()
	blog.Billing, blog.Tiers = storage.Provisioned, family.BlogTiers()
	// A table that changed class twice in the last 30 days keeps its
	// class: DynamoDB would refuse a third change.
	twice := func(t lifecycle.Table, first, second string) lifecycle.Table {
		t.Entry.ClassChanges = []time.Time{at(first), at(second)}
		return t
	}

	isArchived := func(t lifecycle.Table) lifecycle.Table { t.Archived = true; return t }
	creating := func(t lifecycle.Table) lifecycle.Table { t.Status = storage.StatusCreating; return t }

	for _, tc := range []struct {
		name     string
		now      string
		families []family.Family
		actual   []lifecycle.Table
	}{
		{name: "empty", now: "2017-04-12T10:00:00Z", families: []family.Family{events}},
		{
			name: "nothing-to-do", now: "2017-04-12T10:00:00Z", families: []family.Family{events},
			actual: []lifecycle.Table{table(events, "2017-04-12T10:00:00Z", "2017-04-12T10:00:00Z", "hot")},
		},
		{
			// 61 minutes before Sunday: not yet; 60 minutes: prebuild.
			name: "before-prebuild", now: "2017-04-15T22:59:00Z", families: []family.Family{events},
			actual: []lifecycle.Table{table(events, "2017-04-12T10:00:00Z", "2017-04-12T10:00:00Z", "hot")},
		},
		{
			name: "prebuild", now: "2017-04-15T23:00:00Z", families: []family.Family{events},
			actual: []lifecycle.Table{table(events, "2017-04-12T10:00:00Z", "2017-04-12T10:00:00Z", "hot")},
		},
		{
			// The week of 2017-04-30 straddles May: its May table is
			// prebuilt before midnight of April 30.
			name: "write-month-prebuild", now: "2017-04-30T23:30:00Z", families: []family.Family{events},
			actual: []lifecycle.Table{
				table(events, "2017-04-25T10:00:00Z", "2017-04-25T10:00:00Z", "hot"),
				table(events, "2017-04-30T10:00:00Z", "2017-04-30T10:00:00Z", "hot"),
			},
		},
		{
			// Grace: last week's table turns warm 15 minutes into the new
			// week, the week before turns cold.
			name: "tiers-in-grace", now: "2017-04-16T00:14:00Z", families: []family.Family{events},
			actual: []lifecycle.Table{
				table(events, "2017-04-03T10:00:00Z", "2017-04-03T10:00:00Z", "warm"),
				table(events, "2017-04-12T10:00:00Z", "2017-04-12T10:00:00Z", "hot"),
				table(events, "2017-04-16T10:00:00Z", "2017-04-16T10:00:00Z", "hot"),
			},
		},
		{
			name: "blog-tiers-after-grace", now: "2017-04-16T00:15:00Z", families: []family.Family{blog},
			actual: []lifecycle.Table{
				table(blog, "2017-04-03T10:00:00Z", "2017-04-03T10:00:00Z", "warm"),
				table(blog, "2017-04-12T10:00:00Z", "2017-04-12T10:00:00Z", "hot"),
				table(blog, "2017-04-16T10:00:00Z", "2017-04-16T10:00:00Z", "hot"),
			},
		},
		{
			// The first table changed class twice within 30 days: it
			// goes cold in the standard class, and says until when.
			name: "class-changes-used-up", now: "2017-04-16T00:15:00Z", families: []family.Family{events},
			actual: []lifecycle.Table{
				twice(table(events, "2017-04-03T10:00:00Z", "2017-04-03T10:00:00Z", "warm"), "2017-03-20T00:00:00Z", "2017-04-01T00:00:00Z"),
				twice(table(events, "2017-03-27T10:00:00Z", "2017-03-27T10:00:00Z", "warm"), "2017-03-10T00:00:00Z", "2017-04-01T00:00:00Z"),
			},
		},
		{
			name: "tiers-after-grace", now: "2017-04-16T00:15:00Z", families: []family.Family{events},
			actual: []lifecycle.Table{
				table(events, "2017-04-03T10:00:00Z", "2017-04-03T10:00:00Z", "warm"),
				table(events, "2017-04-12T10:00:00Z", "2017-04-12T10:00:00Z", "hot"),
				table(events, "2017-04-16T10:00:00Z", "2017-04-16T10:00:00Z", "hot"),
			},
		},
		{
			// April data written in June stays hot through June; the
			// engine made it cold under an older policy: lift it.
			name: "late-data", now: "2017-06-20T12:00:00Z", families: []family.Family{events},
			actual: []lifecycle.Table{
				table(events, "2017-04-10T12:00:00Z", "2017-06-02T00:00:00Z", "cold"),
				table(events, "2017-06-20T12:00:00Z", "2017-06-20T12:00:00Z", "hot"),
			},
		},
		{
			name: "late-data-after-its-month", now: "2017-07-02T00:15:00Z", families: []family.Family{events},
			actual: []lifecycle.Table{
				table(events, "2017-04-10T12:00:00Z", "2017-06-02T00:00:00Z", "hot"),
				table(events, "2017-07-02T12:00:00Z", "2017-07-02T12:00:00Z", "hot"),
			},
		},
		{
			// Retention 28 days: the week of April 9 ended April 16, its
			// write month with April 30: it goes on May 29, not May 14.
			// Its table of late data written in May stays until June 28.
			name: "retention", now: "2017-05-29T00:00:00Z", families: []family.Family{retained},
			actual: []lifecycle.Table{
				table(retained, "2017-04-10T12:00:00Z", "2017-04-10T12:00:00Z", "cold"),
				table(retained, "2017-04-10T12:00:00Z", "2017-05-27T00:00:00Z", "hot"),
				table(retained, "2017-05-28T00:00:00Z", "2017-05-28T00:00:00Z", "hot"),
			},
		},
		{
			name: "retention-a-minute-early", now: "2017-05-28T23:59:00Z", families: []family.Family{retained},
			actual: []lifecycle.Table{
				table(retained, "2017-04-10T12:00:00Z", "2017-04-10T12:00:00Z", "cold"),
				table(retained, "2017-05-28T00:00:00Z", "2017-05-28T00:00:00Z", "hot"),
			},
		},
		{
			name: "archive-first", now: "2017-05-29T00:00:00Z", families: []family.Family{archived},
			actual: []lifecycle.Table{
				table(archived, "2017-04-03T12:00:00Z", "2017-04-03T12:00:00Z", "cold"),
				isArchived(table(archived, "2017-04-10T12:00:00Z", "2017-04-10T12:00:00Z", "cold")),
				table(archived, "2017-05-28T00:00:00Z", "2017-05-28T00:00:00Z", "hot"),
			},
		},
		{
			name: "ttl-billing-and-busy", now: "2018-10-25T12:00:00Z", families: []family.Family{withTTL, onDemand},
			actual: []lifecycle.Table{
				func() lifecycle.Table {
					t := table(withTTL, "2018-10-25T12:00:00Z", "2018-10-25T12:00:00Z", "hot")
					t.TTLAttribute = ""
					return t
				}(),
				table(onDemand, "2018-10-23T12:00:00Z", "2018-10-23T12:00:00Z", "hot"),
				creating(table(onDemand, "2018-10-24T12:00:00Z", "2018-10-24T12:00:00Z", "hot")),
				table(onDemand, "2018-10-25T12:00:00Z", "2018-10-25T12:00:00Z", "hot"),
				// Not of any family given: never touched.
				{Name: "orders_2018", Family: "orders", Status: storage.StatusActive},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := render(lifecycle.Plan(at(tc.now), tc.families, tc.actual))
			path := filepath.Join("testdata", "plans", tc.name+".txt")
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, string(want), got, "differs from %s; run go test ./lifecycle -update if the change is meant", path)
		})
	}
}

// TestPlanKeepsRestoredTables: a table restored from its archive is left
// alone (no tier, TTL or delete) until the end the operator chose, and
// deleted at it, its archive being verified.
func TestPlanKeepsRestoredTables(t *testing.T) {
	f := family.Default()
	f.Retention = 28 * 24 * time.Hour
	f.Archive = "file:///var/archive"
	f.TTL = 90 * 24 * time.Hour
	tb := table(f, "2017-04-03T10:00:00Z", "2017-04-03T10:00:00Z", "cold")
	tb.Archived = true
	tb.Capacity = storage.Capacity{Billing: storage.OnDemand}
	tb.TTLAttribute = ""
	tb.Entry.State, tb.Entry.RestoredUntil = registry.Restored, at("2017-06-08T00:00:00Z")

	of := func(now string) []lifecycle.Action {
		var out []lifecycle.Action
		for _, a := range lifecycle.Plan(at(now), []family.Family{f}, []lifecycle.Table{tb}) {
			if a.Table == tb.Name {
				out = append(out, a)
			}
		}
		return out
	}
	require.Empty(t, of("2017-06-07T23:59:59Z"), "kept until its end")
	plan := of("2017-06-08T00:00:00Z")
	require.Len(t, plan, 1)
	require.Equal(t, lifecycle.Delete, plan[0].Kind, "deleted again at its end: %s", plan[0].Reason)
}
