package lifecycle

import (
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/storage"
)

// Table is what the store says of one physical table of a family: the
// input Plan works from.
type Table struct {
	// Name is the table's name; Family the family whose namer parsed it,
	// and Ref what the name says it holds.
	Name   string
	Family string
	Ref    naming.Ref
	// Tier is the table's tier tag (family.TagTier), "" when it has none.
	Tier string
	// Capacity is the table's billing mode and provisioned capacity.
	Capacity storage.Capacity
	// Status is the table's state; only ACTIVE tables are changed.
	Status storage.Status
	// TTLAttribute is the attribute TTL is enabled on, "" when off.
	TTLAttribute string
	// ItemCount is the store's estimate, -1 when unknown.
	ItemCount int64
	// Archived reports that the table has an archive that was read back
	// and verified. The Reconciler asks the Archiver only for tables past
	// retention.
	Archived bool
}
