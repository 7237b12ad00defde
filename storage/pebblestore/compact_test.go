package pebblestore

import (
	"context"
	"testing"

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
