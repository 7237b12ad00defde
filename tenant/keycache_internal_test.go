package tenant

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

// TestKeyCacheBounded sends many random keys at registries with caches of
// two sizes: each cache holds at most its size of misses and its size of
// keys, and the live key stays cached (no read of the store) throughout.
func TestKeyCacheBounded(t *testing.T) {
	for _, size := range []int{16, 64} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			store, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { store.Close() })
			ctx := context.Background()
			require.NoError(t, store.CreateTable(ctx, storage.TableSpec{Name: "meta", Capacity: storage.Capacity{Billing: storage.OnDemand}}))
			now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
			r := New(store, "meta", Options{Clock: clock.NewManual(now), KeyCache: KeyCacheOptions{Size: size}})
			secret, err := r.Add(ctx, "acme", now)
			require.NoError(t, err)
			for i := range 20 * size {
				_, err := r.Authenticate(ctx, fmt.Sprintf("tt_random%d", i))
				require.ErrorIs(t, err, ErrUnknownKey)
				require.LessOrEqual(t, r.keys.missing.Len(), size)
				require.LessOrEqual(t, r.keys.len(), 2*size)
				if i%size == 0 {
					_, ok := r.keys.get(digest(sha256.Sum256([]byte(secret))), now)
					require.True(t, ok, "random keys never push out a live one")
				}
			}
			require.Equal(t, size, r.keys.missing.Len())
			require.Equal(t, 1, r.keys.found.Len())
		})
	}
}

// TestKeyCacheKeepsNoReadOlderThanAChange checks that a read of a key
// begun before the key was changed through the directory is not kept over
// the change.
func TestKeyCacheKeepsNoReadOlderThanAChange(t *testing.T) {
	c := newKeyCache(KeyCacheOptions{TTL: time.Second, NegativeTTL: time.Second, Size: 4})
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	epoch := c.epoch()
	revoked := Key{ID: "k", Tenant: "acme", Expires: now}
	c.changed(digest{1}, revoked, now)
	c.learned(epoch, digest{1}, Key{ID: "k", Tenant: "acme"}, true, now)
	got, ok := c.get(digest{1}, now)
	require.True(t, ok)
	require.Equal(t, revoked, got.key, "the revocation stands")
	require.False(t, got.key.Live(now))
	// A miss learned before the key was made is not kept either.
	epoch = c.epoch()
	c.changed(digest{2}, Key{ID: "n", Tenant: "acme"}, now)
	c.learned(epoch, digest{2}, Key{}, false, now)
	got, ok = c.get(digest{2}, now)
	require.True(t, ok)
	require.True(t, got.found)
}
