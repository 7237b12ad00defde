package tenant_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/pebblestore"
	"github.com/timetabledb/timetable/tenant"
)

func newDirectory(t testing.TB) (*tenant.Directory, storage.Store) {
	t.Helper()
	r, store, _ := newDirectoryClock(t)
	return r, store
}

// newDirectoryClock is newDirectory with the clock the directory tells
// expiry by, standing at now.
func newDirectoryClock(t testing.TB) (*tenant.Directory, storage.Store, *clock.Manual) {
	t.Helper()
	store, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	require.NoError(t, store.CreateTable(context.Background(), storage.TableSpec{Name: "meta", Capacity: storage.Capacity{Billing: storage.OnDemand}}))
	clk := clock.NewManual(now)
	return tenant.NewDirectory(store, "meta", clk), store, clk
}

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func TestAddAndAuthenticate(t *testing.T) {
	r, store := newDirectory(t)
	ctx := context.Background()
	key, err := r.Add(ctx, "acme", now)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(key, "tt_"))
	require.Len(t, key, 3+43)

	got, err := r.Authenticate(ctx, key)
	require.NoError(t, err)
	require.Equal(t, "acme", got.Tenant)
	require.True(t, got.Created.Equal(now))
	require.Equal(t, tenant.ScopeAll, got.Scope)
	require.Len(t, got.ID, 16)
	require.NotContains(t, key, got.ID)

	// Another directory on the same store agrees.
	got, err = tenant.NewDirectory(store, "meta", nil).Authenticate(ctx, key)
	require.NoError(t, err)
	require.Equal(t, "acme", got.Tenant)

	for _, bad := range []string{"", "tt_", key[:len(key)-1], key + "x", strings.ToUpper(key)} {
		_, err := r.Authenticate(ctx, bad)
		require.ErrorIs(t, err, tenant.ErrUnknownKey, bad)
	}
	// The store holds only the key's hash.
	it := store.Scan(ctx, "meta")
	defer it.Close()
	for it.Next() {
		item := it.Item()
		require.NotContains(t, fmt.Sprint(item), key[3:])
	}
	require.NoError(t, it.Err())
}

func TestTwoTenantsTwoKeys(t *testing.T) {
	r, _ := newDirectory(t)
	ctx := context.Background()
	ka, err := r.Add(ctx, "a", now)
	require.NoError(t, err)
	kb, err := r.Add(ctx, "b", now)
	require.NoError(t, err)
	require.NotEqual(t, ka, kb)
	ta, _ := r.Authenticate(ctx, ka)
	tb, _ := r.Authenticate(ctx, kb)
	require.Equal(t, "a", ta.Tenant)
	require.Equal(t, "b", tb.Tenant)
	list, err := r.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, "a", list[0].Name)
}

func TestAddRefusesTakenAndBadNames(t *testing.T) {
	r, _ := newDirectory(t)
	ctx := context.Background()
	key, err := r.Add(ctx, "acme", now)
	require.NoError(t, err)
	_, err = r.Add(ctx, "acme", now)
	require.ErrorIs(t, err, tenant.ErrExists)
	_, err = r.Authenticate(ctx, key)
	require.NoError(t, err, "the first key still works")
	for _, bad := range []string{"", "Acme", "a#b", "-x", strings.Repeat("a", 64), "a b"} {
		_, err := r.Add(ctx, bad, now)
		require.ErrorIs(t, err, tenant.ErrBadName, bad)
	}
}

func TestConcurrentAuthentication(t *testing.T) {
	r, _ := newDirectory(t)
	ctx := context.Background()
	key, err := r.Add(ctx, "acme", now)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			got, err := r.Authenticate(ctx, key)
			require.NoError(t, err)
			require.Equal(t, "acme", got.Tenant)
		})
	}
	wg.Wait()
}
