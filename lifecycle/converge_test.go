package lifecycle_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/storage"
)

// applyToTables does to a list of tables what the executor does to a
// store, as Plan's model of it.
func applyToTables(tables []lifecycle.Table, plan []lifecycle.Action) []lifecycle.Table {
	for _, a := range plan {
		switch a.Kind {
		case lifecycle.Create:
			tables = append(tables, lifecycle.Table{
				Name: a.Table, Family: a.Family, Ref: a.Ref, Tier: a.Tier, Capacity: a.Capacity,
				Status: storage.StatusActive, TTLAttribute: a.TTLAttribute,
			})
		}
		for i := range tables {
			if tables[i].Name != a.Table {
				continue
			}
			switch a.Kind {
			case lifecycle.UpdateBilling, lifecycle.UpdateCapacity:
				tables[i].Capacity, tables[i].Tier = a.Capacity, a.Tier
			case lifecycle.EnableTTL:
				tables[i].TTLAttribute = a.TTLAttribute
			case lifecycle.Archive:
				tables[i].Archived = true
			case lifecycle.Delete:
				tables = append(tables[:i], tables[i+1:]...)
			}
			break
		}
	}
	return tables
}

// TestPlanConverges walks ten weeks hour by hour: after a plan is applied,
// planning again at the same time asks for nothing, except the delete that
// follows an archive.
func TestPlanConverges(t *testing.T) {
	events := family.Default()
	events.Retention = 14 * 24 * time.Hour
	events.Archive = "file:///archive"
	events.TTL = 30 * 24 * time.Hour
	day := daily()
	day.Retention = 3 * 24 * time.Hour
	families := []family.Family{events, day}

	var tables []lifecycle.Table
	start := at("2017-04-01T00:00:00Z")
	deleted := 0
	for now := start; now.Before(start.Add(10 * 7 * 24 * time.Hour)); now = now.Add(time.Hour) {
		plan := lifecycle.Plan(now, families, tables)
		tables = applyToTables(tables, plan)
		again := lifecycle.Plan(now, families, tables)
		for _, a := range again {
			require.Equal(t, lifecycle.Delete, a.Kind, "at %s: %s %s after applying the plan", now, a.Kind, a.Table)
			deleted++
		}
		tables = applyToTables(tables, again)
		require.Empty(t, lifecycle.Plan(now, families, tables), "at %s", now)

		// Every table is at the tier the policy says, and none is
		// past retention.
		for _, tb := range tables {
			f := events
			if tb.Family == day.Name {
				f = day
			}
			require.Equal(t, f.TierAt(tb.Ref, now).Name, tb.Tier, tb.Name)
			require.True(t, now.Before(f.ExpiresAt(tb.Ref)), tb.Name)
		}
	}
	require.Positive(t, deleted, "archived tables were deleted on the next plan")
}
