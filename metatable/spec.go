package metatable

import "github.com/timetabledb/timetable/storage"

// PITRDays is the point-in-time recovery period of the meta table:
// DynamoDB's longest, 35 days.
const PITRDays = 35

// Spec returns the specification the meta table is made with, by the
// engine and by the lifecycle manager, whichever comes first: on demand,
// tagged timetable:role=meta, with deletion protection and point-in-time
// recovery, for it holds the registry of every table, the tenants and
// their API keys, and losing it loses track of them all.
func Spec(name string) storage.TableSpec {
	return storage.TableSpec{
		Name:               name,
		Capacity:           storage.Capacity{Billing: storage.OnDemand},
		Tags:               map[string]string{"timetable:role": "meta"},
		DeletionProtection: true,
		PITRDays:           PITRDays,
	}
}
