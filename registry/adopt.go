package registry

import (
	"strconv"
	"time"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/storage"
)

// Adopted returns the entry of a table found in the store without one:
// its name parsed as ref by family f's namer, and info is what the store
// says of it. Facts come from the table's tags, written by timetable
// before the registry existed, where it has them (shards, layout, tier);
// otherwise from f, the family's policy now. A creation time the store
// does not know, or one after now, is left zero: the table then ages by
// the schedule alone (family.TierFor). The entry is not written:
// register it with Register.
func Adopted(f family.Family, ref naming.Ref, info storage.TableInfo, now time.Time) Entry {
	created := info.CreatedAt.UTC()
	if created.After(now) {
		created = time.Time{} // a clock behind the store's: unknown
	}
	e := Entry{
		Name:         info.Name,
		Policy:       f,
		Ref:          ref,
		State:        stateOf(info.Status),
		Generation:   1,
		Capacity:     info.Capacity,
		TTLAttribute: info.TTLAttribute,
		CreatedAt:    created,
		UpdatedAt:    now.UTC(),
		Source:       SourceName,
	}
	tags := info.Tags
	if tags[family.TagFamily] == f.Name {
		e.Source = SourceTags
		if n, err := strconv.Atoi(tags[family.TagShards]); err == nil && n >= 1 {
			e.Policy.Shards = n
		}
		if l := family.Layout(tags[family.TagLayout]); l == family.LayoutRow || l == family.LayoutMap {
			e.Policy.Layout = l
		}
		e.Tier = tags[family.TagTier]
	}
	if e.Tier == "" {
		tier, _ := f.TierFor(ref, e.CreatedAt, now)
		if tier.Capacity == e.Capacity {
			e.Tier = tier.Name
		}
	}
	return e
}

func stateOf(s storage.Status) State {
	if s == storage.StatusCreating {
		return Creating
	}
	return Active
}
