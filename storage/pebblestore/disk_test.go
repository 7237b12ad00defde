package pebblestore

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/storage"
)

// diskUsage is what du(1) says of dir: the blocks allocated to its files,
// which counts the space a file system reserved ahead of a file's end
// (Pebble preallocates its write-ahead logs) where the files' sizes do not.
func diskUsage(t *testing.T, dir string) (allocated, size int64) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		size += fi.Size()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			allocated += st.Blocks * 512 // st_blocks counts 512-byte units
		}
		return nil
	})
	require.NoError(t, err)
	return allocated, size
}

// writeEvents writes about n bytes of small items, in batches as the
// engine writes them, to a new table of s.
func writeEvents(t *testing.T, s *Store, table string, n int) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.CreateTable(ctx, testSpec(table)))
	const batch = 100
	written, seq := 0, 0
	for written < n {
		items := make([]storage.Item, batch)
		for i := range items {
			items[i] = storage.Item{
				PK: fmt.Sprintf("acme#cars#car-%d#0", seq%50),
				SK: fmt.Sprintf("2026-11-21T12:%02d:%02d.%06dZ#%022d", seq/60000%60, seq/1000%60, seq%1000, seq),
				Attrs: map[string]any{
					"speed": json.Number(fmt.Sprint(seq % 200)),
					"gear":  "D",
					"note":  "a reading of a car's speed",
				},
			}
			written += 130
			seq++
		}
		require.NoError(t, s.BatchWrite(ctx, table, items))
	}
}

// TestDiskFootprint: an empty store and a store of a few MB of events,
// with their write-ahead logs, fit in 80 MiB of disk together, at the
// default options.
func TestDiskFootprint(t *testing.T) {
	empty, small := t.TempDir(), t.TempDir()
	se, err := Open(empty, Options{})
	require.NoError(t, err)
	defer se.Close()
	ss, err := Open(small, Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, ss.Close()) }()
	writeEvents(t, ss, "tt_events_2026-11-21", 3<<20)

	ea, es := diskUsage(t, empty)
	sa, sz := diskUsage(t, small)
	t.Logf("empty store: %.1f MiB allocated (%.1f MiB of files); %d MiB of events: %.1f MiB allocated (%.1f MiB of files)",
		mib(ea), mib(es), 3, mib(sa), mib(sz))
	require.LessOrEqual(t, ea+sa, int64(80<<20), "disk of an empty store and one of 3 MiB of events")

	// Opened again, the store replays its logs into a new one and flushes.
	require.NoError(t, ss.Close())
	ss, err = Open(small, Options{})
	require.NoError(t, err)
	writeEvents(t, ss, "tt_events_2026-11-22", 1<<20)
	sa, sz = diskUsage(t, small)
	t.Logf("opened again, and 1 MiB more: %.1f MiB allocated (%.1f MiB of files)", mib(sa), mib(sz))
	require.LessOrEqual(t, ea+sa, int64(80<<20), "disk of an empty store and one of 4 MiB of events, opened twice")
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
