package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/timetabledb/timetable/metatable"
	"github.com/timetabledb/timetable/storage"
)

// Versions.
//
// Each family has a version: a count of the writes of its entries, kept in
// an item of its own (metatable.RegistryVersion). Every Register and Save
// adds one to it after writing the entry and before returning, so a
// write of an entry that returned has raised the version. A reader that
// reads the version, then the entries, and keeps both, knows its entries
// are current for as long as a new read of the version finds it unchanged:
// the engine keeps a family's entries that way and reads the version,
// one GetItem, instead of the entries on every query.
//
// A write whose entry was stored but whose version was not raised (the
// store failed in between) returns an error; the entry is seen by
// readers once any later write of the family raises the version, and the
// caller's retry (Create finishes a table left creating; the lifecycle
// saves again) is such a write.

// attrVersion is the version item's count.
const attrVersion = "version"

// Version returns the version of a family's entries: 0 before the first
// write, then higher after every write. It is one strongly consistent
// GetItem of the meta table.
func (r *Registry) Version(ctx context.Context, family string) (int64, error) {
	pk, sk := metatable.RegistryVersion(family)
	item, err := r.store.GetItem(ctx, r.table, pk, sk)
	if errors.Is(err, storage.ErrItemNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the registry version of family %q: %w", family, err)
	}
	n, _ := item.Attrs[attrVersion].(json.Number)
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("registry version of family %q: %q is no count", family, n)
	}
	return v, nil
}

// bump raises the version of a family's entries.
func (r *Registry) bump(ctx context.Context, family string) error {
	pk, sk := metatable.RegistryVersion(family)
	err := r.store.Update(ctx, storage.Update{Table: r.table, PK: pk, SK: sk, Actions: []storage.Action{storage.Add(attrVersion, "1")}})
	if err != nil {
		return fmt.Errorf("raise the registry version of family %q: %w", family, err)
	}
	return nil
}
