package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
)

func TestPing(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		f := open(t, b, 1, apr10)
		require.NoError(t, f.db.Ping(context.Background()))
		require.NoError(t, f.db.Close())
		require.ErrorIs(t, f.db.Ping(context.Background()), engine.ErrClosed)
	})
}

// TestPingStoreDown checks that Ping passes on the store's error.
func TestPingStoreDown(t *testing.T) {
	store, cfg := backends.Pebble().Open(t)
	down := &downStore{Store: store}
	db, err := engine.Open(context.Background(), down, engine.Options{Config: cfg})
	require.NoError(t, err)
	defer db.Close()
	down.err = fmt.Errorf("get item: %w", storage.ErrUnavailable)
	require.ErrorIs(t, db.Ping(context.Background()), storage.ErrUnavailable)
	down.err = nil
	require.NoError(t, db.Ping(context.Background()))
}

// downStore is a store whose GetItem fails with err when it is set.
type downStore struct {
	storage.Store
	err error
}

func (s *downStore) GetItem(ctx context.Context, table, pk, sk string) (storage.Item, error) {
	if s.err != nil {
		return storage.Item{}, s.err
	}
	return s.Store.GetItem(ctx, table, pk, sk)
}
