package archive_test

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/internal/memtest"
	"github.com/timetabledb/timetable/storage/pebblestore"
	"github.com/timetabledb/timetable/storage/storagetest"
)

// heapPeak samples the heap every millisecond until stop is called,
// which returns the highest samples of the live heap (what the code
// holds) and of the whole heap (memtest.HeapObjects).
func heapPeak() (stop func() (live, total uint64)) {
	sample := memtest.SampleHeap(time.Millisecond, memtest.HeapLive, memtest.HeapObjects)
	return func() (uint64, uint64) {
		most := sample()
		return most[0], most[1]
	}
}

// archivePeak archives a table of n events to a folder and returns the
// archive's peak live heap above what was live before it.
func archivePeak(t *testing.T, n int) uint64 {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := pebblestore.Open(dir, pebblestore.Options{})
	require.NoError(t, err)
	const table = "tt_events_memory"
	require.NoError(t, storagetest.FillEvents(context.Background(), s, table, n))
	// Open the store again, so that what the writes left in memory
	// (memtables, compactions under way) is not counted: the garbage
	// collector lets the heap grow to twice what is live, so a larger
	// heap before the archive would show as a higher peak during it.
	require.NoError(t, s.Close())
	s, err = pebblestore.Open(dir, pebblestore.Options{})
	require.NoError(t, err)
	defer s.Close()
	// The NDJSON alone: the Parquet of a part keeps 32 bytes an event of
	// the part to sort it (docs/archive.md).
	a, err := archive.Open(ctx, "file://"+t.TempDir(), s, archive.Options{Format: family.ArchiveNDJSON})
	require.NoError(t, err)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	stop := heapPeak()
	require.NoError(t, a.Archive(ctx, table))
	live, total := stop()
	m, err := a.Manifest(ctx, table)
	require.NoError(t, err)
	require.Equal(t, int64(n), m.ItemCount)
	const mib = 1 << 20
	t.Logf("archive of %d events: peak live heap %.1f MiB, peak heap with garbage %.1f MiB, above %.1f MiB before",
		n, float64(live-min(live, before.HeapAlloc))/mib, float64(total-min(total, before.HeapAlloc))/mib, float64(before.HeapAlloc)/mib)
	return live - min(live, before.HeapAlloc)
}

// TestArchiveMemoryIsBounded archives tables of 150,000 and 600,000
// events from Pebble: the archive's peak live heap does not grow with
// the table (within 16 MiB) and stays under 64 MiB. The peak of the whole
// heap, garbage included, is logged: it runs to about twice the live
// heap (GOGC=100), more when the collector is starved of CPU. With -short
// the tables are 10,000 and 40,000 events. The race detector changes
// what the heap holds and slows the archive tenfold, so the test runs
// without it (scripts/test.sh runs it in its step without the race
// detector).
func TestArchiveMemoryIsBounded(t *testing.T) {
	backends.NoDynamoDB(t)
	if raceEnabled {
		t.Skip("a memory bound, measured without the race detector (scripts/test.sh)")
	}
	sizes := []int{150_000, 600_000}
	if testing.Short() {
		sizes = []int{10_000, 40_000}
	}
	var peaks []uint64
	for _, n := range sizes {
		peaks = append(peaks, archivePeak(t, n))
	}
	const mib = 1 << 20
	require.LessOrEqual(t, slices.Max(peaks), uint64(64*mib), "peak live heap at most 64 MiB")
	require.LessOrEqual(t, slices.Max(peaks)-slices.Min(peaks), uint64(16*mib), "peak live heap independent of the table's size")
}

// BenchmarkArchiveMemory archives a table of 100,000 events per
// iteration, reporting the peak heap of the last archive.
func BenchmarkArchiveMemory(b *testing.B) {
	ctx := context.Background()
	s, err := pebblestore.Open(b.TempDir(), pebblestore.Options{})
	require.NoError(b, err)
	b.Cleanup(func() { s.Close() })
	const table = "tt_events_memory"
	require.NoError(b, storagetest.FillEvents(context.Background(), s, table, 100_000))
	var peak, peakTotal uint64
	b.ResetTimer()
	for b.Loop() {
		a, err := archive.Open(ctx, "file://"+b.TempDir(), s, archive.Options{})
		require.NoError(b, err)
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		stop := heapPeak()
		require.NoError(b, a.Archive(ctx, table))
		live, total := stop()
		peak, peakTotal = live-min(live, before.HeapAlloc), total-min(total, before.HeapAlloc)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-live-MiB")
	b.ReportMetric(float64(peakTotal)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(100_000, "items/op")
}
