package registry_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func TestRegistry(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			store, cfg := b.Open(t)
			reg := openRegistry(t, store, backends.MetaTable(cfg))
			f := cfg.Families[0]
			now := day(2017, 4, 12)

			// A table is registered, made and marked active.
			ref := f.TableFor(day(2017, 4, 10), now)
			e, err := reg.Create(ctx, store, registry.NewEntry(f, ref, now), now)
			require.NoError(t, err)
			require.Equal(t, registry.Active, e.State)
			require.Equal(t, "hot", e.Tier)
			info, err := store.DescribeTable(ctx, e.Name)
			require.NoError(t, err)
			require.Equal(t, e.Capacity, info.Capacity)
			got, err := reg.Get(ctx, f.Name, ref.Period.Start, e.Name)
			require.NoError(t, err)
			requireSameEntry(t, e, got)

			// Late data in a later month: a backfill table, on demand.
			late := f.TableFor(day(2017, 3, 1), day(2017, 6, 2))
			le, err := reg.Create(ctx, store, registry.NewEntry(f, late, day(2017, 6, 2)), day(2017, 6, 2))
			require.NoError(t, err)
			require.Equal(t, family.BackfillTier, le.Tier)
			require.Equal(t, storage.OnDemand, le.Capacity.Billing)

			// A policy change reaches only new tables, and entries keep
			// theirs.
			g := f
			g.Granularity = period.Granularity{Unit: period.Day}
			g.Shards = 4
			dref := g.TableFor(day(2017, 4, 20), day(2017, 4, 20))
			de, err := reg.Create(ctx, store, registry.NewEntry(g, dref, now), now)
			require.NoError(t, err)

			all, err := reg.List(ctx, f.Name)
			require.NoError(t, err)
			require.Len(t, all, 3)
			require.Equal(t, []string{le.Name, e.Name, de.Name}, names(all), "period order")
			require.Equal(t, 4, all[2].Shards())
			require.Equal(t, 1, all[1].Shards())
			require.Equal(t, period.Day, all[2].Policy.Granularity.Unit)
			require.Equal(t, f.Tiers, all[1].Policy.Tiers)

			// Entries share their policy's decoding, not its tiers: a
			// caller that changes one entry's leaves the next read's as
			// stored.
			all[1].Policy.Tiers[0].Name = "changed"
			again, err := reg.List(ctx, f.Name)
			require.NoError(t, err)
			require.Equal(t, f.Tiers, again[1].Policy.Tiers)
			require.Equal(t, f.Tiers, again[0].Policy.Tiers)

			over, err := reg.Overlapping(ctx, f.Name, day(2017, 4, 15), day(2017, 4, 20))
			require.NoError(t, err)
			require.Equal(t, []string{e.Name, de.Name}, names(over))
			over, err = reg.Overlapping(ctx, f.Name, day(2017, 4, 21), day(2017, 5, 1))
			require.NoError(t, err)
			require.Empty(t, over)

			// A save of an older generation fails; a deleted table comes
			// back as the next generation.
			e.State = registry.Deleted
			_, err = reg.Save(ctx, e)
			require.NoError(t, err)
			require.NoError(t, backends.Drop(ctx, store, e.Name))
			e2, err := reg.Create(ctx, store, registry.NewEntry(f, ref, now), now)
			require.NoError(t, err)
			require.Equal(t, int64(2), e2.Generation)
			require.Equal(t, registry.Active, e2.State)
			_, err = store.DescribeTable(ctx, e.Name)
			require.NoError(t, err)
			e.State = registry.Archived
			_, err = reg.Save(ctx, e)
			require.ErrorIs(t, err, registry.ErrStale)
			require.Empty(t, e2.PastArchives, "generation 1 was deleted without an archive")

			// A generation archived and deleted is carried, with the
			// earlier ones, by the next.
			e2.State, e2.ArchiveTarget = registry.Deleted, "file:///archives"
			_, err = reg.Save(ctx, e2)
			require.NoError(t, err)
			require.NoError(t, backends.Drop(ctx, store, e2.Name))
			e3, err := reg.Create(ctx, store, registry.NewEntry(f, ref, now), now)
			require.NoError(t, err)
			require.Equal(t, int64(3), e3.Generation)
			want := []registry.PastArchive{{Generation: 2, Target: "file:///archives"}}
			require.Equal(t, want, e3.PastArchives)
			got, err = reg.Get(ctx, f.Name, ref.Period.Start, e3.Name)
			require.NoError(t, err)
			require.Equal(t, want, got.PastArchives, "as stored")
			e3.State, e3.ArchiveTarget = registry.Deleted, "s3://b/p"
			_, err = reg.Save(ctx, e3)
			require.NoError(t, err)
			require.NoError(t, backends.Drop(ctx, store, e3.Name))
			e4, err := reg.Create(ctx, store, registry.NewEntry(f, ref, now), now)
			require.NoError(t, err)
			require.Equal(t, append(want, registry.PastArchive{Generation: 3, Target: "s3://b/p"}), e4.PastArchives)
		})
	}
}

// Servers racing to make one table all end up with the one entry.
func TestCreateRace(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			store, cfg := b.Open(t)
			reg := openRegistry(t, store, backends.MetaTable(cfg))
			f := cfg.Families[0]
			now := day(2017, 4, 12)
			ref := f.TableFor(now, now)
			var wg sync.WaitGroup
			got := make([]registry.Entry, 8)
			errs := make([]error, 8)
			for i := range got {
				wg.Go(func() {
					g := f
					g.Shards = i + 1 // whoever wins decides
					got[i], errs[i] = reg.Create(ctx, store, registry.NewEntry(g, ref, now), now)
				})
			}
			wg.Wait()
			for i := range got {
				require.NoError(t, errs[i])
				require.Equal(t, registry.Active, got[i].State)
				require.Equal(t, got[0].Shards(), got[i].Shards())
			}
		})
	}
}

func TestAdopted(t *testing.T) {
	f := family.Default()
	now := day(2017, 5, 1)
	ref := f.TableFor(day(2017, 4, 10), day(2017, 4, 10))
	spec := f.Spec(ref, f.Tiers[1])
	spec.Tags[family.TagShards] = "3"
	info := storage.TableInfo{TableSpec: spec, Status: storage.StatusActive, CreatedAt: day(2017, 4, 8)}
	e := registry.Adopted(f, ref, info, now)
	require.Equal(t, registry.SourceTags, e.Source)
	require.Equal(t, 3, e.Shards())
	require.Equal(t, "warm", e.Tier)
	require.Equal(t, day(2017, 4, 8), e.CreatedAt)

	info.Tags = nil
	e = registry.Adopted(f, ref, info, now)
	require.Equal(t, registry.SourceName, e.Source)
	require.Equal(t, 1, e.Shards())
	require.Equal(t, naming.Ref(ref), e.Ref)
}

func names(es []registry.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out
}

func requireSameEntry(t *testing.T, want, got registry.Entry) {
	t.Helper()
	require.Equal(t, want.Name, got.Name)
	require.Equal(t, want.State, got.State)
	require.Equal(t, want.Generation, got.Generation)
	require.True(t, want.Ref.Period.Equal(got.Ref.Period))
	require.Equal(t, want.Ref.WriteMonth, got.Ref.WriteMonth)
	require.True(t, want.CreatedAt.Equal(got.CreatedAt))
	require.Equal(t, want.Capacity, got.Capacity)
	require.Equal(t, want.Policy.Tiers, got.Policy.Tiers)
	require.Equal(t, want.Policy.Backfill, got.Policy.Backfill)
	require.Equal(t, want.Policy.Granularity, got.Policy.Granularity)
}

func openRegistry(t *testing.T, store storage.Store, meta string) *registry.Registry {
	require.NoError(t, store.CreateTable(context.Background(), storage.TableSpec{Name: meta}))
	return registry.New(store, meta)
}

// A table made through the registry is tagged with its meta table; Compare
// adopts a table without an entry only when that tag names its own, and
// Adopt takes the others on an operator's word.
func TestOwnership(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			store, cfg := b.Open(t)
			meta := backends.MetaTable(cfg)
			reg := openRegistry(t, store, meta)
			f := cfg.Families[0]
			now := day(2017, 4, 12)
			e, err := reg.Create(ctx, store, registry.NewEntry(f, f.TableFor(day(2017, 4, 10), now), now), now)
			require.NoError(t, err)
			info, err := store.DescribeTable(ctx, e.Name)
			require.NoError(t, err)
			if info.Tags[family.TagMeta] == "" {
				t.Skip("this endpoint keeps no tags (DynamoDB Local): no table is adopted by itself")
			}
			require.Equal(t, meta, info.Tags[family.TagMeta])

			lost := f.Spec(f.TableFor(day(2017, 3, 27), now), f.Tiers[0])
			lost.Tags[family.TagMeta] = meta
			other := f.Spec(f.TableFor(day(2017, 3, 20), now), f.Tiers[0])
			other.Tags[family.TagMeta] = "tt_meta_b"
			untagged := f.Spec(f.TableFor(day(2017, 3, 13), now), f.Tiers[0])
			g := f
			g.IDScheme = event.IDScheme2
			lost2 := g.Spec(g.TableFor(day(2017, 3, 6), now), f.Tiers[0])
			lost2.Tags[family.TagMeta] = meta
			for _, s := range []storage.TableSpec{lost, other, untagged, lost2} {
				require.NoError(t, store.CreateTable(ctx, s))
			}
			entries, err := reg.List(ctx, f.Name)
			require.NoError(t, err)
			d, err := reg.Compare(ctx, store, f, entries, now)
			require.NoError(t, err)
			require.ElementsMatch(t, []string{lost.Name, lost2.Name}, names(d.Unregistered))
			for _, u := range d.Unregistered {
				want := event.IDScheme1 // no tag: a table of before schemes
				if u.Name == lost2.Name {
					want = event.IDScheme2
				}
				require.Equal(t, want, u.IDScheme(), u.Name)
			}
			require.ElementsMatch(t, []string{other.Name, untagged.Name}, names(d.Foreign))

			_, err = reg.Adopt(ctx, store, cfg.Families, other.Name, false, now)
			require.ErrorIs(t, err, registry.ErrNotAdoptable)
			a, err := reg.Adopt(ctx, store, cfg.Families, untagged.Name, false, now)
			require.NoError(t, err)
			require.Equal(t, registry.Active, a.State)
			again, err := reg.Adopt(ctx, store, cfg.Families, untagged.Name, false, now)
			require.NoError(t, err, "adopting twice is harmless")
			require.Equal(t, a.Name, again.Name)
			info, err = store.DescribeTable(ctx, untagged.Name)
			require.NoError(t, err)
			require.Equal(t, meta, info.Tags[family.TagMeta])
			entries, err = reg.List(ctx, f.Name)
			require.NoError(t, err)
			d, err = reg.Compare(ctx, store, f, entries, now)
			require.NoError(t, err)
			require.ElementsMatch(t, []string{lost.Name, lost2.Name}, names(d.Unregistered))
			require.Equal(t, []string{other.Name}, names(d.Foreign))
		})
	}
}

// TestVersionCountsWrites checks that every write of an entry raises its
// family's version, and only its family's, by the time it returns.
func TestVersionCountsWrites(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			store, cfg := b.Open(t)
			reg := openRegistry(t, store, backends.MetaTable(cfg))
			f := cfg.Families[0]
			now := day(2017, 4, 12)
			v0, err := reg.Version(ctx, f.Name)
			require.NoError(t, err)
			require.Zero(t, v0, "no write yet")

			e := registry.NewEntry(f, f.TableFor(day(2017, 4, 10), now), now)
			e, err = reg.Register(ctx, e)
			require.NoError(t, err)
			v1, err := reg.Version(ctx, f.Name)
			require.NoError(t, err)
			require.Greater(t, v1, v0, "Register")
			_, err = reg.Register(ctx, e)
			require.ErrorIs(t, err, registry.ErrStale)
			same, err := reg.Version(ctx, f.Name)
			require.NoError(t, err)
			require.Equal(t, v1, same, "a write refused changes nothing")

			e.State = registry.Missing
			_, err = reg.Save(ctx, e)
			require.NoError(t, err)
			v2, err := reg.Version(ctx, f.Name)
			require.NoError(t, err)
			require.Greater(t, v2, v1, "Save")
			other, err := reg.Version(ctx, "other")
			require.NoError(t, err)
			require.Zero(t, other, "another family's version")
		})
	}
}

// TestSaveRefusesAStaleRead: of two writers that read an entry at one
// revision, the first save wins and the second fails with ErrStale,
// instead of writing what it read over the first's change; the entry
// read again saves.
func TestSaveRefusesAStaleRead(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			store, cfg := b.Open(t)
			reg := openRegistry(t, store, backends.MetaTable(cfg))
			f := cfg.Families[0]
			now := day(2017, 4, 12)
			e, err := reg.Create(ctx, store, registry.NewEntry(f, f.TableFor(day(2017, 4, 10), now), now), now)
			require.NoError(t, err)
			read, err := reg.Get(ctx, f.Name, e.Ref.Period.Start, e.Name)
			require.NoError(t, err)
			require.Equal(t, e.Revision, read.Revision)

			fencer, forgetter := read, read
			fencer.FencedAt = now
			_, err = reg.Save(ctx, fencer)
			require.NoError(t, err)
			forgetter.State = registry.Missing
			_, err = reg.Save(ctx, forgetter)
			require.ErrorIs(t, err, registry.ErrStale)
			got, err := reg.Get(ctx, f.Name, e.Ref.Period.Start, e.Name)
			require.NoError(t, err)
			require.Equal(t, registry.Active, got.State)
			require.True(t, got.Fenced(), "the fence stays")
			require.Equal(t, read.Revision+1, got.Revision)

			// A next generation is registered only over the entry read.
			got.State = registry.Deleted
			_, err = reg.Save(ctx, got)
			require.NoError(t, err)
			require.NoError(t, backends.Drop(ctx, store, e.Name))
			stale := registry.NewEntry(f, e.Ref, now)
			stale.Generation, stale.Revision = 2, got.Revision // read before the delete was saved
			_, err = reg.Register(ctx, stale)
			require.ErrorIs(t, err, registry.ErrStale)
			next, err := reg.Create(ctx, store, registry.NewEntry(f, e.Ref, now), now)
			require.NoError(t, err)
			require.EqualValues(t, 2, next.Generation)
		})
	}
}
