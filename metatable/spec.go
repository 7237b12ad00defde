package metatable

import (
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
)

// PITRDays is the point-in-time recovery period of the meta table:
// DynamoDB's longest, 35 days.
const PITRDays = 35

// Spec returns the specification the meta table is made with, by the
// engine and by the lifecycle manager, whichever comes first: on demand,
// tagged timetable:role=meta and with its own name as its deployment's
// (family.TagMeta, which deploy/template.yaml's permissions ask of every
// table under the table prefix, where a meta table may be), with deletion
// protection and point-in-time recovery, for it holds the registry of every table, the tenants and
// their API keys, and losing it loses track of them all.
func Spec(name string) storage.TableSpec {
	return storage.TableSpec{
		Name:               name,
		Capacity:           storage.Capacity{Billing: storage.OnDemand},
		Tags:               map[string]string{"timetable:role": "meta", family.TagMeta: name},
		DeletionProtection: true,
		PITRDays:           PITRDays,
	}
}
