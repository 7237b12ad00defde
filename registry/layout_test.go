package registry_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/metatable"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// TestChunkLayoutRecorded holds the chunk layout and its window to being
// facts of the table: recorded in the entry's policy when the table is
// made, read back as they were whatever the family says later, and
// absent from the policy of a table of rows, whose entry reads as one
// holding no chunks.
func TestChunkLayoutRecorded(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			store, cfg := b.Open(t)
			meta := backends.MetaTable(cfg)
			reg := openRegistry(t, store, meta)
			f := cfg.Families[0]
			f.Layout = family.LayoutRow // chunk by default
			now := day(2017, 4, 12)

			rows := f.TableFor(day(2017, 4, 10), now)
			e, err := reg.Create(ctx, store, registry.NewEntry(f, rows, now), now)
			require.NoError(t, err)
			require.Zero(t, e.ChunkWindow())
			item, err := store.GetItem(ctx, meta, metatable.RegistryPK(f.Name), metatable.RegistrySK(rows.Period.Start, e.Name))
			require.NoError(t, err)
			require.NotContains(t, item.Attrs["policy"], "chunk_window", "a row table's policy as it was before chunks")

			chunked := f
			chunked.Layout, chunked.ChunkWindow = family.LayoutChunk, 30*time.Minute
			require.NoError(t, chunked.Validate())
			ref := f.TableFor(day(2017, 4, 17), now)
			e, err = reg.Create(ctx, store, registry.NewEntry(chunked, ref, now), now)
			require.NoError(t, err)
			got, err := reg.Get(ctx, f.Name, ref.Period.Start, e.Name)
			require.NoError(t, err)
			require.Equal(t, family.LayoutChunk, got.Policy.Layout)
			require.Equal(t, 30*time.Minute, got.ChunkWindow())
			got, err = reg.Get(ctx, f.Name, rows.Period.Start, registry.NewEntry(f, rows, now).Name)
			require.NoError(t, err)
			require.Zero(t, got.ChunkWindow(), "the row table keeps its layout")
		})
	}
}

// A chunk table adopted without a registry entry (made by a version
// before the registry, or the meta table lost) takes its layout and
// window from its tags, whatever the family says now.
func TestChunkLayoutAdoptedFromTags(t *testing.T) {
	f := family.Default()
	f.Layout = family.LayoutRow
	chunked := f
	chunked.Layout, chunked.ChunkWindow = family.LayoutChunk, 15*time.Minute
	now := day(2017, 4, 12)
	ref := f.TableFor(day(2017, 4, 10), now)
	spec := chunked.Spec(ref, f.Tiers[0])
	require.Equal(t, "15m0s", spec.Tags[family.TagChunkWindow])
	e := registry.Adopted(f, ref, storage.TableInfo{TableSpec: spec, Status: storage.StatusActive}, now)
	require.Equal(t, family.LayoutChunk, e.Policy.Layout)
	require.Equal(t, 15*time.Minute, e.ChunkWindow())
	require.NotContains(t, f.Spec(ref, f.Tiers[0]).Tags, family.TagChunkWindow, "a row table has no window")

	// A table without the chunk layout's tags holds rows, though its
	// family is of the chunk layout now.
	e = registry.Adopted(chunked, ref, storage.TableInfo{TableSpec: f.Spec(ref, f.Tiers[0]), Status: storage.StatusActive}, now)
	require.Equal(t, family.LayoutRow, e.Policy.Layout)
	require.Zero(t, e.ChunkWindow())
	untagged := f.Spec(ref, f.Tiers[0])
	untagged.Tags = nil
	e = registry.Adopted(chunked, ref, storage.TableInfo{TableSpec: untagged, Status: storage.StatusActive}, now)
	require.Zero(t, e.ChunkWindow(), "an untagged table predates chunks")
}
