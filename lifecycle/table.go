package lifecycle

import (
	"time"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// Table is what the registry, and the store's listing, say of one physical
// table of a family: the input Plan works from.
type Table struct {
	// Name is the table's name; Family the family it belongs to, and Ref
	// what it holds.
	Name   string
	Family string
	Ref    naming.Ref
	// Policy is the family's policy the table was made with (its registry
	// entry's), which decides its tiers; the zero Family stands for the
	// family's policy of today. Retention and archive target are always
	// today's.
	Policy family.Family
	// CreatedAt is when the table was made; zero when unknown.
	CreatedAt time.Time
	// Tier is the tier last applied, "" when unknown.
	Tier string
	// Capacity is the billing mode and provisioned capacity last applied.
	Capacity storage.Capacity
	// Status is the table's state; only ACTIVE tables are changed.
	Status storage.Status
	// TTLAttribute is the attribute TTL is enabled on, "" when off.
	TTLAttribute string
	// ItemCount is the store's estimate, -1 when unknown.
	ItemCount int64
	// Archived reports that the table has an archive that was read back
	// and verified.
	Archived bool

	// Drift, when not zero, says how the registry and the store disagree
	// on this table: the plan's first action for it mends the registry.
	Drift Drift
	// DriftReason says more of a Changed drift.
	DriftReason string
	// Entry is the table's registry entry (for a table found without one,
	// the entry it is adopted with), which the executor updates.
	Entry registry.Entry
}

// Drift is a disagreement between the registry and the store.
type Drift string

// Drifts.
const (
	// Unregistered: the store has the table, the registry no live entry.
	Unregistered Drift = "unregistered"
	// Unsettled: the entry was left creating by a creator that stopped;
	// the table exists and is ACTIVE.
	Unsettled Drift = "unsettled"
	// Gone: the registry has a live entry, the store no table.
	Gone Drift = "gone"
	// Changed: the store describes another capacity than the registry
	// says was last applied (registry.CapacityDrift); Capacity is the
	// store's.
	Changed Drift = "changed"
)

// policy returns the policy that ages t: its own, with f's retention and
// archive target and format.
func (t Table) policy(f family.Family) family.Family {
	p := t.Policy
	if p.Name == "" {
		return f
	}
	p.Retention, p.Archive, p.ArchiveFormat, p.Prebuild = f.Retention, f.Archive, f.ArchiveFormat, f.Prebuild
	p.ExportMaxRead = f.ExportMaxRead
	return p
}

// tableOf returns an entry as Plan takes it.
func tableOf(e registry.Entry, drift Drift) Table {
	status := storage.StatusActive
	if e.State == registry.Creating {
		status = storage.StatusCreating
	}
	return Table{
		Name: e.TableName(), Family: e.Family(), Ref: e.Ref, Policy: e.Policy, CreatedAt: e.CreatedAt,
		Tier: e.Tier, Capacity: e.Capacity, Status: status, TTLAttribute: e.TTLAttribute, ItemCount: -1,
		Archived: e.State == registry.Archived, Drift: drift, Entry: e,
	}
}
