package lifecycle

import (
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// Kind is what an action does.
type Kind string

// The kinds of action, in the order a plan lists them for one table.
const (
	// Register records in the registry a table the store has and the
	// registry lacks (or left creating), with its facts from the store.
	Register Kind = "register"
	// Forget marks missing the registry entry of a table the store no
	// longer has.
	Forget Kind = "forget"
	// Create creates a table (at its tier, with TTL when the family sets
	// one) and waits for it to be ACTIVE.
	Create Kind = "create"
	// UpdateBilling switches a table's billing mode, with the tier's
	// capacity and class. DynamoDB allows a table four switches to on
	// demand in any 24 hours ("Considerations when switching capacity
	// modes"); a refused switch is deferred.
	UpdateBilling Kind = "update_billing"
	// UpdateCapacity changes a table's provisioned capacity, class and
	// throughput limits to its tier's, its point-in-time recovery, and
	// its tier tag. A class change waits while the table has had two in
	// the last 30 days (registry.Entry.ClassChanges).
	UpdateCapacity Kind = "update_capacity"
	// EnableTTL enables TTL on the family's TTL attribute.
	EnableTTL Kind = "enable_ttl"
	// Compact packs the events a table of a chunk family took one at a
	// time into chunks (package compact), once the table has left the
	// hot tier: fenced first (as an archive fences, and made of the
	// chunk layout if it was of rows), compacted window by window from
	// its checkpoint, then unfenced, so late events land again.
	Compact Kind = "compact"
	// Archive exports a table past retention and verifies the export.
	Archive Kind = "archive"
	// Delete deletes a table past retention (archived first when the
	// family has an archive target).
	Delete Kind = "delete"
)

// Kinds lists every kind, in plan order.
var Kinds = []Kind{Register, Forget, Create, UpdateBilling, UpdateCapacity, EnableTTL, Compact, Archive, Delete}

// Action is one change a plan asks for.
type Action struct {
	Kind Kind
	// Family and Table name the family and the physical table; Ref is
	// what the table holds.
	Family string
	Table  string
	Ref    naming.Ref
	// Tier is the tier the table gets (Create, UpdateBilling,
	// UpdateCapacity) or has (the others).
	Tier string
	// Capacity is the capacity the table gets (Create, UpdateBilling,
	// UpdateCapacity).
	Capacity storage.Capacity
	// PITRDays is the table's point-in-time recovery period in days, 0
	// for none (UpdateBilling, UpdateCapacity).
	PITRDays int
	// Spec is the whole table to create (Create only).
	Spec storage.TableSpec
	// TTLAttribute is the attribute to enable TTL on (EnableTTL).
	TTLAttribute string
	// Target is the archive target (Archive, and Delete of an archived
	// table).
	Target string
	// Format is the format of the archive (Archive).
	Format family.ArchiveFormat
	// Entry is the table's registry entry as the executor writes it back
	// (Create: the entry to register).
	Entry registry.Entry
	// Reason says why, for people: the rule and the times that triggered
	// the action.
	Reason string
}
