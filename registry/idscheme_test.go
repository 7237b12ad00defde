package registry_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/metatable"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// TestIDScheme holds the id scheme to being a fact of the table: a table
// made now gets the latest scheme, recorded in its entry and its tags; a
// table whose entry records none (made before schemes were recorded)
// has scheme 1; a family that names a scheme gets it; and a table made
// again under a name keeps the scheme of its earlier generation.
func TestIDScheme(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			store, cfg := b.Open(t)
			meta := backends.MetaTable(cfg)
			reg := openRegistry(t, store, meta)
			f := cfg.Families[0]
			require.Zero(t, f.IDScheme, "configuration names no scheme")
			now := day(2017, 4, 12)

			ref := f.TableFor(day(2017, 4, 10), now)
			e, err := reg.Create(ctx, store, registry.NewEntry(f, ref, now), now)
			require.NoError(t, err)
			require.Equal(t, event.LatestIDScheme, e.IDScheme())
			got, err := reg.Get(ctx, f.Name, ref.Period.Start, e.Name)
			require.NoError(t, err)
			require.Equal(t, event.IDScheme2, got.IDScheme(), "as stored")
			item, err := store.GetItem(ctx, meta, metatable.RegistryPK(f.Name), metatable.RegistrySK(ref.Period.Start, e.Name))
			require.NoError(t, err)
			require.Contains(t, item.Attrs["policy"], `"id_scheme":2`)
			require.Equal(t, json.Number("2"), item.Attrs["id_scheme"], "repeated outside the policy, as shards and layout are")
			require.Equal(t, "2", registry.NewEntry(f, ref, now).Spec().Tags[family.TagIDScheme])

			// An entry written before schemes: its policy has none.
			item.Attrs["policy"] = strings.Replace(item.Attrs["policy"].(string), `,"id_scheme":2`, "", 1)
			delete(item.Attrs, "id_scheme")
			require.NotContains(t, item.Attrs["policy"], "id_scheme")
			require.NoError(t, store.BatchWrite(ctx, meta, []storage.Item{item}))
			got, err = reg.Get(ctx, f.Name, ref.Period.Start, e.Name)
			require.NoError(t, err)
			require.Equal(t, event.IDScheme1, got.IDScheme())
			// Saved again, it records scheme 1 from then on.
			got.Tier = "warm"
			_, err = reg.Save(ctx, got)
			require.NoError(t, err)
			again, err := reg.Get(ctx, f.Name, ref.Period.Start, e.Name)
			require.NoError(t, err)
			require.Equal(t, event.IDScheme1, again.IDScheme())

			// Its next generation keeps scheme 1, whatever the new
			// entry asked for.
			again.State = registry.Deleted
			_, err = reg.Save(ctx, again)
			require.NoError(t, err)
			require.NoError(t, backends.Drop(ctx, store, again.Name))
			next, err := reg.Create(ctx, store, registry.NewEntry(f, ref, now), now)
			require.NoError(t, err)
			require.Equal(t, int64(2), next.Generation)
			require.Equal(t, event.IDScheme1, next.IDScheme())

			// A family naming scheme 1 (an engine told to make tables as
			// an older version did) records it.
			old := f
			old.IDScheme = event.IDScheme1
			oref := f.TableFor(day(2017, 5, 10), day(2017, 5, 10))
			oe, err := reg.Create(ctx, store, registry.NewEntry(old, oref, now), now)
			require.NoError(t, err)
			got, err = reg.Get(ctx, f.Name, oref.Period.Start, oe.Name)
			require.NoError(t, err)
			require.Equal(t, event.IDScheme1, got.IDScheme())
		})
	}
}

// An adopted table has the scheme its tags name, and scheme 1 without
// the tag: tables made before schemes were recorded carry none.
func TestAdoptedIDScheme(t *testing.T) {
	f := family.Default()
	now := day(2017, 5, 1)
	ref := f.TableFor(day(2017, 4, 10), day(2017, 4, 10))
	g := f
	g.IDScheme = event.IDScheme2
	info := storage.TableInfo{TableSpec: g.Spec(ref, f.Tiers[0]), Status: storage.StatusActive}
	require.Equal(t, event.IDScheme2, registry.Adopted(f, ref, info, now).IDScheme())
	info = storage.TableInfo{TableSpec: f.Spec(ref, f.Tiers[0]), Status: storage.StatusActive}
	require.Equal(t, event.IDScheme1, registry.Adopted(f, ref, info, now).IDScheme())
	info.Tags = nil
	require.Equal(t, event.IDScheme1, registry.Adopted(f, ref, info, now).IDScheme())
}
