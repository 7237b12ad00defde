package engine_test

import (
	"context"
	"fmt"
	"log"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/pebblestore"
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
	db, err := engine.Open(context.Background(), down, engine.Options{Schema: cfg})
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

func ExampleDB_Ping() {
	ctx := context.Background()
	store, err := pebblestore.Open("", pebblestore.Options{FS: vfs.NewMem()})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	db, err := engine.Open(ctx, store, engine.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// A readiness check waits a short while for the store, no longer.
	pingCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	fmt.Println("ready:", db.Ping(pingCtx) == nil)
	db.Close()
	fmt.Println("after Close:", db.Ping(pingCtx))
	// Output:
	// ready: true
	// after Close: timetable: engine closed
}
