package pebblestore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

func TestCompactMovesEverythingToTheBottomLevel(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	written := items("p", 5000)
	require.NoError(t, s.BatchWrite(ctx, "tbl", written[:2500]))
	require.NoError(t, s.db.Flush()) // an sstable in L0
	require.NoError(t, s.BatchWrite(ctx, "tbl", written[2500:]))

	require.NoError(t, s.Compact(ctx))

	m := s.db.Metrics()
	bottom := len(m.Levels) - 1
	for level := range bottom {
		require.Zero(t, m.Levels[level].TablesCount, "tables in L%d", level)
	}
	require.NotZero(t, m.Levels[bottom].TablesCount, "tables in the bottom level")
	require.Zero(t, m.MemTable.Count-1, "memtables besides the empty mutable one")

	it := s.Query(ctx, storage.Query{Table: "tbl", PK: "p"})
	n := 0
	for it.Next() {
		require.Equal(t, written[n], it.Item())
		n++
	}
	require.NoError(t, it.Close())
	require.Equal(t, len(written), n)
}

func TestCompactAfterClose(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.Compact(context.Background()), storage.ErrClosed)
}

// TestCompactRewritesFlushedTables: the sstables one flush writes
// overlap nothing, and a compaction of each alone would move it to the
// bottom level as it was written (the fast codec of the upper levels, 4
// KiB blocks); Compact compacts each level whole, so that the bottom
// level holds only tables it wrote with its own codec (Zstandard).
func TestCompactRewritesFlushedTables(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	written := items("p", 60000)
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range written {
		written[i].Attrs["pad"] = fmt.Sprintf("%016x%016x", rnd.Uint64(), rnd.Uint64())
	}
	for b := 0; b < len(written); b += 10000 {
		require.NoError(t, s.BatchWrite(ctx, "tbl", written[b:b+10000]))
	}
	require.NoError(t, s.db.Flush())
	flushed, err := s.db.SSTables()
	require.NoError(t, err)
	require.Greater(t, len(flushed[0]), 1, "one flush, several tables in L0")

	require.NoError(t, s.Compact(ctx))
	levels, err := s.db.SSTables(pebble.WithProperties())
	require.NoError(t, err)
	bottom := levels[len(levels)-1]
	require.NotEmpty(t, bottom)
	for _, tbl := range bottom {
		require.Contains(t, strings.ToLower(tbl.Properties.CompressionStats), "zstd", "table %s", tbl.FileNum)
	}
}

// TestCompactDropsWhatWasDeletedOrSuperseded: after Compact the sstables
// hold the live items alone, as `timetable compact` leaves a packed
// table (its events' rows or small chunks deleted, their windows written
// again as one chunk each): no deletion tombstone, no older version of
// an item written again.
func TestCompactDropsWhatWasDeletedOrSuperseded(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{IdleFlush: -1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	written := items("p", 3000)
	require.NoError(t, s.BatchWrite(ctx, "tbl", written))
	require.NoError(t, s.db.Flush())
	keys := make([]storage.Key, 1000)
	for i := range keys {
		keys[i] = storage.Key{PK: "p", SK: written[i].SK}
	}
	require.NoError(t, s.BatchDelete(ctx, "tbl", keys))          // the first 1000
	require.NoError(t, s.BatchWrite(ctx, "tbl", written[2000:])) // the last 1000, again
	require.NoError(t, s.db.Flush())

	require.NoError(t, s.Compact(ctx))

	levels, err := s.db.SSTables(pebble.WithProperties())
	require.NoError(t, err)
	var entries, deletions uint64
	for _, files := range levels {
		for _, f := range files {
			entries += f.Properties.NumEntries
			deletions += f.Properties.NumDeletions
		}
	}
	require.Zero(t, deletions, "deletion tombstones left")
	// The live items, and the store's own keys (format, next table id,
	// the table's catalog record).
	require.Equal(t, uint64(2000+3), entries, "entries in the sstables")
}
