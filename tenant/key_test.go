package tenant_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/metatable"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/tenant"
)

func TestSeveralKeysRevokeAndScope(t *testing.T) {
	r, _ := newDirectory(t)
	ctx := context.Background()
	first, err := r.Add(ctx, "acme", now)
	require.NoError(t, err)
	reader, readSecret, err := r.AddKey(ctx, "acme", tenant.ScopeRead, now.Add(time.Minute))
	require.NoError(t, err)
	require.False(t, reader.CanWrite())

	keys, err := r.Keys(ctx, "acme")
	require.NoError(t, err)
	require.Len(t, keys, 2)
	require.Equal(t, tenant.ScopeAll, keys[0].Scope, "oldest first")
	require.Equal(t, reader, keys[1])

	got, err := r.Authenticate(ctx, readSecret)
	require.NoError(t, err)
	require.Equal(t, tenant.ScopeRead, got.Scope)

	revoked, err := r.Revoke(ctx, "acme", keys[0].ID, now)
	require.NoError(t, err)
	require.False(t, revoked.Live(now))
	_, err = r.Authenticate(ctx, first)
	require.ErrorIs(t, err, tenant.ErrUnknownKey)
	_, err = r.Authenticate(ctx, readSecret)
	require.NoError(t, err, "the other key still works")

	// Revoking again keeps the first end; unknown ids and tenants are
	// told apart.
	again, err := r.Revoke(ctx, "acme", keys[0].ID, now.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, revoked.Expires, again.Expires)
	_, err = r.Revoke(ctx, "acme", "0123456789abcdef", now)
	require.ErrorIs(t, err, tenant.ErrNoSuchKey)
	_, err = r.Revoke(ctx, "nobody", keys[0].ID, now)
	require.ErrorIs(t, err, tenant.ErrNotFound)
	_, _, err = r.AddKey(ctx, "nobody", tenant.ScopeAll, now)
	require.ErrorIs(t, err, tenant.ErrNotFound)
	_, err = tenant.ParseScope("write")
	require.ErrorIs(t, err, tenant.ErrBadScope)
}

func TestRotateKeepsTheOldKeyForTheGrace(t *testing.T) {
	r, _, clk := newDirectoryClock(t)
	ctx := context.Background()
	_, _, err := r.AddKey(ctx, "acme", tenant.ScopeAll, now)
	require.ErrorIs(t, err, tenant.ErrNotFound)
	old, err := r.Add(ctx, "acme", now)
	require.NoError(t, err)
	oldKey, err := r.Authenticate(ctx, old)
	require.NoError(t, err)

	rot, err := r.Rotate(ctx, "acme", oldKey.ID, time.Hour, now)
	require.NoError(t, err)
	newKey, secret := rot.New, rot.Secret
	require.Equal(t, oldKey.ID, rot.Old.ID)
	require.Equal(t, now.Add(time.Hour), rot.Old.Expires)
	require.Equal(t, tenant.KeyExpiring, rot.Old.State(now))
	require.Equal(t, tenant.KeyRevoked, rot.Old.State(now.Add(time.Hour)))
	require.Equal(t, tenant.KeyLive, rot.New.State(now.Add(time.Hour)))
	require.NotEqual(t, oldKey.ID, newKey.ID)
	_, err = r.Authenticate(ctx, old)
	require.NoError(t, err, "the old key works during the grace")
	clk.Set(now.Add(time.Hour))
	_, err = r.Authenticate(ctx, old)
	require.ErrorIs(t, err, tenant.ErrUnknownKey, "and not after it")
	got, err := r.Authenticate(ctx, secret)
	require.NoError(t, err)
	require.Equal(t, newKey.ID, got.ID)

	_, err = r.Rotate(ctx, "acme", oldKey.ID, 0, clk.Now())
	require.ErrorIs(t, err, tenant.ErrNoSuchKey, "a revoked key is not rotated")
	_, err = r.Rotate(ctx, "acme", newKey.ID, -time.Second, clk.Now())
	require.ErrorIs(t, err, tenant.ErrBadGrace)

	keys, err := r.Keys(ctx, "acme")
	require.NoError(t, err)
	require.Len(t, keys, 2)
	// Made at one instant, the keys are listed in id order: find each.
	for _, k := range keys {
		if k.ID == oldKey.ID {
			require.Equal(t, now.Add(time.Hour), k.Expires)
		} else {
			require.True(t, k.Expires.IsZero())
		}
	}
}

func TestRemoveRevokesEveryKey(t *testing.T) {
	r, _ := newDirectory(t)
	ctx := context.Background()
	a, err := r.Add(ctx, "acme", now)
	require.NoError(t, err)
	_, b, err := r.AddKey(ctx, "acme", tenant.ScopeRead, now)
	require.NoError(t, err)
	_, err = r.Add(ctx, "globex", now)
	require.NoError(t, err)

	require.NoError(t, r.Remove(ctx, "acme", now))
	for _, k := range []string{a, b} {
		_, err := r.Authenticate(ctx, k)
		require.ErrorIs(t, err, tenant.ErrUnknownKey)
	}
	list, err := r.List(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"globex"}, names(list))
	_, err = r.Get(ctx, "acme")
	require.ErrorIs(t, err, tenant.ErrNotFound)
	require.ErrorIs(t, r.Remove(ctx, "acme", now), tenant.ErrNotFound)

	// The name may be added again, with new keys only.
	later := now.Add(time.Hour)
	c, err := r.Add(ctx, "acme", later)
	require.NoError(t, err)
	_, err = r.Authenticate(ctx, c)
	require.NoError(t, err)
	_, err = r.Authenticate(ctx, a)
	require.ErrorIs(t, err, tenant.ErrUnknownKey)
	keys, err := r.Keys(ctx, "acme")
	require.NoError(t, err)
	require.Len(t, keys, 1, "the removed tenant's keys are not the new one's")
}

// TestKeyOfTheVersionBefore checks that a key made when a tenant had one
// (a tenant item holding its hash, a key record without id, scope or
// created) still authenticates, is listed, and can be revoked.
func TestKeyOfTheVersionBefore(t *testing.T) {
	r, store := newDirectory(t)
	ctx := context.Background()
	const secret = "tt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	sum := sha256.Sum256([]byte(secret))
	hash := hex.EncodeToString(sum[:])
	keyPK, keySK := metatable.APIKey(hash)
	tenantPK, tenantSK := metatable.Tenant("old")
	require.NoError(t, store.BatchWrite(ctx, "meta", []storage.Item{
		{PK: keyPK, SK: keySK, Attrs: map[string]any{"tenant": "old", "hash": hash}},
		{PK: tenantPK, SK: tenantSK, Attrs: map[string]any{"hash": hash, "created": now.Format(time.RFC3339Nano)}},
	}))
	k, err := r.Authenticate(ctx, secret)
	require.NoError(t, err)
	require.Equal(t, "old", k.Tenant)
	require.Equal(t, hash[:16], k.ID)
	require.Equal(t, tenant.ScopeAll, k.Scope)

	keys, err := r.Keys(ctx, "old")
	require.NoError(t, err)
	require.Len(t, keys, 1)
	require.Equal(t, k.ID, keys[0].ID)
	require.True(t, keys[0].Created.Equal(now))

	_, _, err = r.AddKey(ctx, "old", tenant.ScopeAll, now.Add(time.Minute))
	require.NoError(t, err)
	keys, err = r.Keys(ctx, "old")
	require.NoError(t, err)
	require.Len(t, keys, 2)

	_, err = r.Revoke(ctx, "old", k.ID, now)
	require.NoError(t, err)
	_, err = r.Authenticate(ctx, secret)
	require.ErrorIs(t, err, tenant.ErrUnknownKey)
}

func names(ts []tenant.Tenant) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}
