package registry_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// TestNextTableName: a rewrite's table is the entry's name followed by
// ".r" and the rewrite's number; a name that would be too long is
// refused.
func TestNextTableName(t *testing.T) {
	for _, tt := range []struct {
		name, physical, want string
	}{
		{"tt_events_2017-04-10", "", "tt_events_2017-04-10.r1"},
		{"tt_events_2017-04-10", "tt_events_2017-04-10.r1", "tt_events_2017-04-10.r2"},
		{"tt_events_2017-04-10", "tt_events_2017-04-10.r9", "tt_events_2017-04-10.r10"},
	} {
		e := registry.Entry{Name: tt.name, Physical: tt.physical}
		got, err := e.NextTableName()
		require.NoError(t, err)
		require.Equal(t, tt.want, got)
		require.NoError(t, naming.ValidTableName(got))
	}
	_, err := registry.Entry{Name: strings.Repeat("a", naming.MaxTableNameLen-2)}.NextTableName()
	require.ErrorIs(t, err, naming.ErrInvalidTableName)
}

// TestRewriteRecorded: an entry's rewrite and physical table are saved and
// read back; Find finds the entry by either name, and Compare counts the
// rewritten table and the rewrite's tables as the entry's (neither
// unregistered nor gone).
func TestRewriteRecorded(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			store, cfg := b.Open(t)
			reg := openRegistry(t, store, backends.MetaTable(cfg))
			f := cfg.Families[0]
			now := day(2017, 4, 12)
			e, err := reg.Create(ctx, store, registry.NewEntry(f, f.TableFor(day(2017, 4, 10), now), now), now)
			require.NoError(t, err)

			next, err := e.NextTableName()
			require.NoError(t, err)
			e.Rewrite = &registry.Rewrite{Step: registry.RewriteVerify, Table: next, After: storage.Key{PK: "p", SK: "s"},
				Source: registry.RewriteSum{Events: 3, EventHash: "ab", Items: 1, ItemHash: "cd"}}
			e, err = reg.Save(ctx, e)
			require.NoError(t, err)
			require.NoError(t, reg.CreateRewriteTable(ctx, store, e, next))
			got, err := reg.Get(ctx, f.Name, e.Ref.Period.Start, e.Name)
			require.NoError(t, err)
			require.Equal(t, e.Rewrite, got.Rewrite)
			require.Equal(t, e.Name, got.TableName(), "not switched yet")
			d, err := reg.Compare(ctx, store, f, []registry.Entry{got}, now)
			require.NoError(t, err)
			require.Empty(t, d.Unregistered)
			require.Empty(t, d.Foreign)
			require.Empty(t, d.Gone)

			// Switched, the old table deleted.
			got.Physical, got.Rewrite = next, nil
			got, err = reg.Save(ctx, got)
			require.NoError(t, err)
			off := false
			require.NoError(t, store.UpdateTable(ctx, got.Name, storage.TableUpdate{DeletionProtection: &off}))
			require.NoError(t, store.DeleteTable(ctx, got.Name))
			found, ok, err := reg.Find(ctx, []string{f.Name}, next)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, next, found.TableName())
			require.Equal(t, got.Name, found.Name)
			d, err = reg.Compare(ctx, store, f, []registry.Entry{found}, now)
			require.NoError(t, err)
			require.Empty(t, d.Unregistered)
			require.Empty(t, d.Gone, "the entry's table is the rewritten one")
		})
	}
}
