package registry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/storage"
)

// Adopted returns the entry of a table found in the store without one:
// its name parsed as ref by family f's namer, and info is what the store
// says of it. Facts come from the table's tags, written by timetable
// before the registry existed, where it has them (shards, layout, tier,
// id scheme); otherwise from f, the family's policy now, but for the
// layout and the id scheme: a table without the chunk layout's tag
// holds rows (chunks came after the registry, and every table of
// chunks is tagged so), and a table without the id scheme's tag gets scheme 1, the scheme of every
// table made before schemes were recorded (family.IDSchemeOf). A creation time the store
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
	e.Policy.IDScheme = family.IDSchemeOf(info.Tags)
	if e.Policy.Layout == family.LayoutChunk {
		// A chunk table is made with its layout's tags (below); a table
		// without them holds rows, whatever the family's layout now.
		e.Policy.Layout, e.Policy.ChunkWindow = family.LayoutRow, 0
	}
	tags := info.Tags
	if tags[family.TagFamily] == f.Name {
		e.Source = SourceTags
		e.Policy.Shards = f.ShardsOf(tags)
		switch l := family.Layout(tags[family.TagLayout]); l {
		case family.LayoutRow, family.LayoutMap:
			e.Policy.Layout = l
		case family.LayoutChunk:
			e.Policy.Layout, e.Policy.ChunkWindow = l, f.ChunkWindowOf(tags)
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

// Adopter is what Adopt needs of a store: describing a table and tagging
// it.
type Adopter interface {
	DescribeTable(ctx context.Context, name string) (storage.TableInfo, error)
	UpdateTable(ctx context.Context, name string, u storage.TableUpdate) error
}

// ErrNotAdoptable marks a table Adopt will not take: no family's namer
// parses its name, or it holds another deployment's tag.
var ErrNotAdoptable = errors.New("timetable: table cannot be adopted")

// Adopt registers the table name, found in the store without an entry, on
// an operator's word: the first of families whose namer parses the name
// takes it, with the facts Adopted finds, and the table is tagged with
// this registry's meta table (family.TagMeta) so the deployment knows it
// for its own from then on. A table whose tag names another deployment's
// meta table is refused unless force is set: two deployments must not
// manage one table. Adopting a table that has a live entry already
// returns that entry.
func (r *Registry) Adopt(ctx context.Context, store Adopter, families []family.Family, name string, force bool, now time.Time) (Entry, error) {
	for _, f := range families {
		ref, err := f.Namer().Parse(name)
		if err != nil {
			continue
		}
		if cur, err := r.Get(ctx, f.Name, ref.Period.Start, name); err == nil && cur.State.Live() {
			return cur, nil
		}
		info, err := store.DescribeTable(ctx, name)
		if err != nil {
			return Entry{}, fmt.Errorf("adopt table %q: %w", name, err)
		}
		if owner := info.Tags[family.TagMeta]; owner != "" && owner != r.table && !force {
			return Entry{}, fmt.Errorf("adopt table %q: %w: it belongs to the deployment of meta table %q", name, ErrNotAdoptable, owner)
		}
		e := Adopted(f, ref, info, now)
		if cur, err := r.Get(ctx, f.Name, ref.Period.Start, name); err == nil {
			e = cur.next(e)
		}
		if err := store.UpdateTable(ctx, name, storage.TableUpdate{Tags: map[string]string{family.TagMeta: r.table}}); err != nil {
			return Entry{}, fmt.Errorf("adopt table %q: tag it: %w", name, err)
		}
		registered, err := r.Register(ctx, e)
		if err != nil {
			return Entry{}, fmt.Errorf("adopt table %q: %w", name, err)
		}
		return registered, nil
	}
	return Entry{}, fmt.Errorf("adopt table %q: %w: no configured family's naming parses it", name, ErrNotAdoptable)
}
