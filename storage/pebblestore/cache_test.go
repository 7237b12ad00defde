package pebblestore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

// TestCacheKeepsBlocksBesideMemtables reads a store's items twice after an
// ingest that grew its memtables to full size: the second read finds every
// block in the cache, which holds CacheSize of blocks however much Pebble
// reserves in it for memtables.
func TestCacheKeepsBlocksBesideMemtables(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{CacheSize: 8 << 20, MemTableSize: 2 << 20})
	require.NoError(t, err)
	defer s.Close()
	const table, partitions, perPartition = "events", 200, 200
	require.NoError(t, s.CreateTable(ctx, storage.TableSpec{Name: table}))
	n := 0
	for i := range perPartition {
		var items []storage.Item
		for p := range partitions {
			n++
			items = append(items, storage.Item{
				PK: fmt.Sprintf("p%03d", p), SK: fmt.Sprintf("%013d", i),
				Attrs: map[string]any{
					"temperature": json.Number(strconv.Itoa(n * 7919 % 10007)),
					"humidity":    json.Number(strconv.Itoa(n * 104729 % 10009)),
					"note":        fmt.Sprintf("%064x", uint64(n)*0x9e3779b97f4a7c15),
				},
			})
		}
		require.NoError(t, s.BatchWrite(ctx, table, items))
	}
	require.NoError(t, s.Compact(ctx))

	readAll := func() {
		for p := range partitions {
			it := s.Query(ctx, storage.Query{Table: table, PK: fmt.Sprintf("p%03d", p)})
			got := 0
			for it.Next() {
				got++
			}
			require.NoError(t, it.Close())
			require.Equal(t, perPartition, got)
		}
	}
	readAll()
	before := s.db.Metrics().BlockCache
	readAll()
	after := s.db.Metrics().BlockCache
	require.Positive(t, after.Hits-before.Hits)
	require.Zero(t, after.Misses-before.Misses, "blocks read again missed the cache (cache holds %d bytes in %d blocks)", after.Size, after.Count)
}
