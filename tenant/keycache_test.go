package tenant_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/metatable"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/tenant"
)

// countingStore counts the reads of key records a directory makes, the
// strongly and the eventually consistent ones.
type countingStore struct {
	storage.Store
	strong, eventual atomic.Int64
}

func (s *countingStore) GetItem(ctx context.Context, table, pk, sk string) (storage.Item, error) {
	s.strong.Add(1)
	return s.Store.GetItem(ctx, table, pk, sk)
}

// eventualStore is a countingStore over a store that reads eventually
// consistently (DynamoDB).
type eventualStore struct {
	*countingStore
	er tenant.EventualReader
}

func (s *eventualStore) GetItemEventual(ctx context.Context, table, pk, sk string) (storage.Item, error) {
	s.eventual.Add(1)
	return s.er.GetItemEventual(ctx, table, pk, sk)
}

// server is one server's tenant directory on a shared store, with the
// reads it made.
type server struct {
	*tenant.Directory
	reads *countingStore
}

func newServer(store storage.Store, meta string, clk clock.Clock) server {
	cs := &countingStore{Store: store}
	var s tenant.Store = cs
	if er, ok := store.(tenant.EventualReader); ok {
		s = &eventualStore{countingStore: cs, er: er}
	}
	return server{Directory: tenant.New(s, meta, tenant.Options{Clock: clk}), reads: cs}
}

func (s server) readCount() int64 { return s.reads.strong.Load() + s.reads.eventual.Load() }

// TestKeyCacheTwoServers runs two servers' registries on one store with
// the default key cache: a key revoked through A is refused by A at once
// and by B once B's TTL is over, a key made behind B's back after B found
// it missing works on B after the negative TTL, and a cached key costs no
// read of the store.
func TestKeyCacheTwoServers(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			store, schema := b.Open(t)
			ctx := context.Background()
			meta := backends.MetaTable(schema)
			require.NoError(t, store.CreateTable(ctx, storage.TableSpec{Name: meta, Capacity: storage.Capacity{Billing: storage.OnDemand}}))
			clk := clock.NewManual(now)
			a, bb := newServer(store, meta, clk), newServer(store, meta, clk)

			secret, err := a.Add(ctx, "acme", now)
			require.NoError(t, err)
			before := a.readCount()
			k, err := a.Authenticate(ctx, secret)
			require.NoError(t, err, "a key made through A works on A at once")
			require.Equal(t, before, a.readCount(), "and A knew it without a read")

			_, err = bb.Authenticate(ctx, secret)
			require.NoError(t, err, "B never saw the key: it reads it")
			read := bb.readCount()
			require.Positive(t, read)
			if _, ok := store.(tenant.EventualReader); ok {
				require.Equal(t, int64(1), bb.reads.eventual.Load(), "on DynamoDB a key is read eventually consistently")
				require.Zero(t, bb.reads.strong.Load())
			}
			for range 3 {
				_, err = bb.Authenticate(ctx, secret)
				require.NoError(t, err)
			}
			require.Equal(t, read, bb.readCount(), "B read the key once within the TTL")

			_, err = a.Revoke(ctx, "acme", k.ID, clk.Now())
			require.NoError(t, err)
			_, err = a.Authenticate(ctx, secret)
			require.ErrorIs(t, err, tenant.ErrUnknownKey, "revoked through A: refused on A at once")
			_, err = bb.Authenticate(ctx, secret)
			require.NoError(t, err, "B trusts what it read for the TTL")
			clk.Advance(tenant.DefaultKeyTTL - time.Millisecond)
			_, err = bb.Authenticate(ctx, secret)
			require.NoError(t, err, "still within the TTL")
			clk.Advance(time.Millisecond)
			_, err = bb.Authenticate(ctx, secret)
			require.ErrorIs(t, err, tenant.ErrUnknownKey, "refused on B once its TTL is over")

			// A secret B found to be no key, made a key behind its back
			// (as another server would), works on B after the negative
			// TTL; the miss was confirmed strongly consistently.
			const late = "tt_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
			_, err = bb.Authenticate(ctx, late)
			require.ErrorIs(t, err, tenant.ErrUnknownKey)
			strong := bb.reads.strong.Load()
			require.Positive(t, strong, "a miss is confirmed by a strongly consistent read")
			sum := sha256.Sum256([]byte(late))
			hash := hex.EncodeToString(sum[:])
			pk, sk := metatable.APIKey(hash)
			require.NoError(t, store.BatchWrite(ctx, meta, []storage.Item{{PK: pk, SK: sk, Attrs: map[string]any{
				"tenant": "acme", "hash": hash, "id": hash[:16], "scope": "all", "created": clk.Now().Format(time.RFC3339Nano)}},
				{PK: metatable.TenantKeysPK("acme"), SK: hash[:16], Attrs: map[string]any{"hash": hash}}}))
			_, err = bb.Authenticate(ctx, late)
			require.ErrorIs(t, err, tenant.ErrUnknownKey, "B trusts the miss for the negative TTL")
			require.Equal(t, strong, bb.reads.strong.Load(), "without a read")
			clk.Advance(tenant.DefaultNegativeKeyTTL)
			got, err := bb.Authenticate(ctx, late)
			require.NoError(t, err, "and no longer")
			require.Equal(t, "acme", got.Tenant)

			// Removing the tenant through B refuses its keys on B at once,
			// and on A after A's TTL.
			_, err = a.Authenticate(ctx, late)
			require.NoError(t, err)
			require.NoError(t, bb.Remove(ctx, "acme", clk.Now()))
			_, err = bb.Authenticate(ctx, late)
			require.ErrorIs(t, err, tenant.ErrUnknownKey)
			_, err = a.Authenticate(ctx, late)
			require.NoError(t, err)
			clk.Advance(tenant.DefaultKeyTTL)
			_, err = a.Authenticate(ctx, late)
			require.ErrorIs(t, err, tenant.ErrUnknownKey)
		})
	}
}

// TestKeyCacheOff reads every key from the store, strongly consistently:
// a key revoked through one server is refused by every other at once.
func TestKeyCacheOff(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			store, schema := b.Open(t)
			ctx := context.Background()
			meta := backends.MetaTable(schema)
			require.NoError(t, store.CreateTable(ctx, storage.TableSpec{Name: meta, Capacity: storage.Capacity{Billing: storage.OnDemand}}))
			clk := clock.NewManual(now)
			off := tenant.Options{Clock: clk, KeyCache: tenant.KeyCacheOptions{TTL: -1}}
			a, bb := tenant.New(store, meta, off), tenant.New(store, meta, off)
			secret, err := a.Add(ctx, "acme", now)
			require.NoError(t, err)
			k, err := bb.Authenticate(ctx, secret)
			require.NoError(t, err)
			_, err = a.Revoke(ctx, "acme", k.ID, now)
			require.NoError(t, err)
			_, err = bb.Authenticate(ctx, secret)
			require.ErrorIs(t, err, tenant.ErrUnknownKey)
		})
	}
}
