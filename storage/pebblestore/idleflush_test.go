package pebblestore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// TestIdleFlushWhenWritesStop steps a fake clock (testing/synctest)
// through writes and quiet: no flush while writes come each period, one
// flush between one and two periods after the last, none while the store
// stays idle, and none after stopFlushing.
func TestIdleFlushWhenWritesStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const period = time.Second
		var f idleFlusher
		// The flusher's goroutine counts, the test reads: a fake clock's
		// sleeps order them for the test but not for the race detector.
		var flushed atomic.Int32
		flushes := func() int { return int(flushed.Load()) }
		f.start(period, func(context.Context) error { flushed.Add(1); return nil }, func(err error) { t.Error(err) })
		for range 10 { // steady writes, one each half period
			f.wrote()
			time.Sleep(period / 2)
			synctest.Wait()
		}
		require.Zero(t, flushes(), "no flush while writes come")
		time.Sleep(2 * period)
		synctest.Wait()
		require.Equal(t, 1, flushes(), "one flush within two periods of the last write")
		time.Sleep(10 * period)
		synctest.Wait()
		require.Equal(t, 1, flushes(), "an idle store flushes once")
		f.wrote()
		time.Sleep(3 * period)
		synctest.Wait()
		require.Equal(t, 2, flushes(), "a write after the flush is flushed in turn")
		f.stopFlushing()
		f.wrote()
		time.Sleep(3 * period)
		require.Equal(t, 2, flushes(), "no flush after stopFlushing")
	})
}

// TestIdleFlushShrinksTheLog: a store that stops receiving writes turns
// its write-ahead log into sstables, and its disk shrinks below what the
// log alone takes in a store that never flushes for idleness.
func TestIdleFlushShrinksTheLog(t *testing.T) {
	const events = 8 << 20
	never := t.TempDir()
	s, err := Open(never, Options{IdleFlush: -1})
	require.NoError(t, err)
	writeEvents(t, s, "tt_events_2026-11-21", events)
	require.NoError(t, s.Close()) // a close flushes nothing: the log stays
	logBefore, sst := filesBySuffix(t, never)
	require.Zero(t, sst, "without idle flushes the events are all in the log")

	dir := t.TempDir()
	s, err = Open(dir, Options{IdleFlush: 20 * time.Millisecond})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	writeEvents(t, s, "tt_events_2026-11-21", events)
	var logAfter, sstAfter int64
	require.Eventually(t, func() bool {
		logAfter, sstAfter = filesBySuffix(t, dir)
		return sstAfter > 0 && logAfter+sstAfter < logBefore
	}, 30*time.Second, 10*time.Millisecond, "the idle store's disk falls below its log's")
	t.Logf("log %.1f MiB without idle flushes; idle: log %.1f MiB, sstables %.1f MiB", mib(logBefore), mib(logAfter), mib(sstAfter))
}

// filesBySuffix returns the sizes of dir's write-ahead logs and of its
// sstables.
func filesBySuffix(t *testing.T, dir string) (logs, ssts int64) {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range es {
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // deleted by Pebble's cleaner meanwhile
		}
		switch {
		case strings.HasSuffix(e.Name(), ".log"):
			logs += fi.Size()
		case strings.HasSuffix(e.Name(), ".sst"):
			ssts += fi.Size()
		}
	}
	return logs, ssts
}
