package pebblestore

import (
	"os"
	"strings"

	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoRecycledLogs: a store that started several write-ahead logs (its
// memtables, small here, filled several times) keeps none of the obsolete
// ones once its memtable is flushed: the directory holds the live log
// alone, where Pebble's default cleaner keeps up to three more to reuse.
func TestNoRecycledLogs(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{MemTableSize: 1 << 20, IdleFlush: -1})
	require.NoError(t, err)
	writeEvents(t, s, "tt_events_2026-11-21", 6<<20)
	require.NoError(t, s.db.Flush())
	m := s.db.Metrics()
	require.Zero(t, m.WAL.ObsoleteFiles, "obsolete logs kept for reuse")
	require.Greater(t, m.Flush.Count, int64(3), "the memtables filled and were flushed several times, each with a log of its own")
	require.NoError(t, s.Close()) // waits for the deletions
	logs, ssts := filesBySuffix(t, dir)
	require.Positive(t, ssts)
	require.Equal(t, 1, countSuffix(t, dir, ".log"), "only the live log is left")
	t.Logf("after the flush: %.2f MiB of logs, %.2f MiB of sstables", mib(logs), mib(ssts))
}

// countSuffix returns how many of dir's files end in suffix.
func countSuffix(t *testing.T, dir, suffix string) int {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	n := 0
	for _, e := range es {
		if strings.HasSuffix(e.Name(), suffix) {
			n++
		}
	}
	return n
}
