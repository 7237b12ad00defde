package archive_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/storagetest"
)

// slowStore returns each item of a scan a millisecond late.
// slowStore scans the first items of a table and then holds each
// segment's scan until its context ends, as a scan of a table too large
// for the deadline does: an export stops at its deadline whatever the
// machine's speed.
type slowStore struct {
	storage.Store
	// first is how many items each segment's scan hands out before it
	// waits.
	first int
}

func (s slowStore) ScanSegment(ctx context.Context, table string, seg storage.Segment) storage.Iterator {
	return &slowIterator{Iterator: s.Store.ScanSegment(ctx, table, seg), ctx: ctx, left: s.first}
}

type slowIterator struct {
	storage.Iterator
	ctx  context.Context
	left int
	err  error
}

func (it *slowIterator) Next() bool {
	if it.left == 0 {
		<-it.ctx.Done()
		it.err = it.ctx.Err()
		return false
	}
	it.left--
	return it.Iterator.Next()
}

func (it *slowIterator) Err() error {
	if it.err != nil {
		return it.err
	}
	return it.Iterator.Err()
}

// The deadline tests give their context deadlineIn, and the archiver a
// margin of deadlineMargin: the export or restore stops deadlineIn -
// deadlineMargin after it starts, and has deadlineMargin to save its
// checkpoint, however busy the machine.
const (
	deadlineIn     = 6 * time.Second
	deadlineMargin = 4 * time.Second
	// restoreDeadlineIn is a restore's: before its first write it reads
	// its whole archive back to check it and makes its table, which a
	// busy machine running the race detector may take seconds over.
	restoreDeadlineIn = 12 * time.Second
)

// TestArchiveStopsBeforeDeadline archives a table that takes longer than
// the context's deadline allows: Archive stops DeadlineMargin before it,
// with its checkpoint saved and an error that says so, and the next
// Archive resumes and completes it.
func TestArchiveStopsBeforeDeadline(t *testing.T) {
	ctx := context.Background()
	s, _ := backends.Pebble().Open(t)
	const table = "tt_events_slow"
	items := fillPlain(t, s, table, 3000)
	target := "file://" + t.TempDir()
	slow, err := archive.Open(ctx, target, slowStore{Store: s, first: 500}, archive.Options{DeadlineMargin: deadlineMargin, ScanSegments: 2})
	require.NoError(t, err)
	a, err := archive.Open(ctx, target, s, archive.Options{DeadlineMargin: deadlineMargin, ScanSegments: 2})
	require.NoError(t, err)

	dctx, cancel := context.WithTimeout(ctx, deadlineIn)
	defer cancel()
	err = slow.Archive(dctx, table)
	require.ErrorIs(t, err, archive.ErrStopped)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, dctx.Err(), "stopped at the margin, with time left to release its lease")
	kept, err := a.Checkpoint(ctx, table, 1)
	require.NoError(t, err)
	require.Greater(t, kept, int64(0))
	require.Less(t, kept, int64(len(items)))
	ok, err := a.Verified(ctx, table)
	require.NoError(t, err)
	require.False(t, ok)

	require.NoError(t, a.Archive(ctx, table))
	m, err := a.Manifest(ctx, table)
	require.NoError(t, err)
	require.Equal(t, int64(len(items)), m.ItemCount)
	require.NoError(t, a.Verify(ctx, table), "the resumed archive holds the table")
	kept, err = a.Checkpoint(ctx, table, 1)
	require.NoError(t, err)
	require.Zero(t, kept)
}

// TestRestoreStripsTTL restores items stamped with an expiry in the past
// without it, so that a table with TTL enabled does not lose them again.
func TestRestoreStripsTTL(t *testing.T) {
	ctx := context.Background()
	s, _ := backends.Pebble().Open(t)
	const table = "tt_events_expired"
	require.NoError(t, s.CreateTable(ctx, storage.TableSpec{Name: table}))
	require.NoError(t, s.BatchWrite(ctx, table, []storage.Item{
		{PK: "a", SK: "1", Attrs: map[string]any{"v": "x", family.TTLAttribute: json.Number("1491696000")}},
	}))
	a, err := archive.Open(ctx, "file://"+t.TempDir(), s, archive.Options{})
	require.NoError(t, err)
	require.NoError(t, a.Archive(ctx, table))
	require.NoError(t, s.DeleteTable(ctx, table))
	require.NoError(t, a.Restore(ctx, table, ""))
	it, err := s.GetItem(ctx, table, "a", "1")
	require.NoError(t, err)
	require.Equal(t, map[string]any{"v": "x"}, it.Attrs)
}

// slowWrites writes the first batches of a restore and then holds the
// next until its context ends, as a restore of a table too large for
// the deadline does.
type slowWrites struct {
	storage.Store
	// left is how many batches it writes before it waits.
	left *atomic.Int64
}

func (s slowWrites) BatchWrite(ctx context.Context, table string, items []storage.Item) error {
	if s.left.Add(-1) < 0 {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.Store.BatchWrite(ctx, table, items)
}

// TestRestoreStopsBeforeDeadline restores an archive slower than the
// deadline allows: Restore stops DeadlineMargin before it, saying so, and
// the next Restore goes on and completes the table.
func TestRestoreStopsBeforeDeadline(t *testing.T) {
	ctx := context.Background()
	s, _ := backends.Pebble().Open(t)
	const table = "tt_events_slow"
	items := fillPlain(t, s, table, 6000)
	target := "file://" + t.TempDir()
	a, err := archive.Open(ctx, target, s, archive.Options{})
	require.NoError(t, err)
	require.NoError(t, a.Archive(ctx, table))

	left := new(atomic.Int64)
	left.Store(20)
	slow, err := archive.Open(ctx, target, slowWrites{Store: s, left: left}, archive.Options{DeadlineMargin: deadlineMargin, RestoreBatch: 10})
	require.NoError(t, err)
	dctx, cancel := context.WithTimeout(ctx, restoreDeadlineIn)
	defer cancel()
	err = slow.Restore(dctx, table, "tt_events_back")
	require.ErrorIs(t, err, archive.ErrStopped)
	require.NoError(t, dctx.Err(), "stopped at the margin, not at the deadline")
	part := scanAll(t, s, "tt_events_back")
	require.NotEmpty(t, part)
	require.Less(t, len(part), len(items))

	require.NoError(t, a.Restore(ctx, "tt_events_slow", "tt_events_back"))
	require.Len(t, scanAll(t, s, "tt_events_back"), len(items))
}

// TestArchiveParquetPartsResume archives a table of 6,000 events in
// Parquet parts of 1,000, stopped by its deadline part way and resumed: the parts
// written before the stop are kept, the rest follow, and their rows add
// up to the table's events.
func TestArchiveParquetPartsResume(t *testing.T) {
	backends.NoDynamoDB(t)
	ctx := context.Background()
	s, _ := backends.Pebble().Open(t)
	const table = "tt_events_parts"
	require.NoError(t, storagetest.FillEvents(context.Background(), s, table, 6000))
	target := "file://" + t.TempDir()
	opts := archive.Options{Format: family.ArchiveParquet, ParquetPartRows: 1000, ScanSegments: 3, DeadlineMargin: deadlineMargin}
	slow, err := archive.Open(ctx, target, slowStore{Store: s, first: 700}, opts)
	require.NoError(t, err)
	a, err := archive.Open(ctx, target, s, opts)
	require.NoError(t, err)
	// 3 segments of 700 items each before the deadline: at least two
	// parts of 1,000.
	dctx, cancel := context.WithTimeout(ctx, deadlineIn)
	defer cancel()
	require.ErrorIs(t, slow.Archive(dctx, table), archive.ErrStopped)
	kept, err := a.Checkpoint(ctx, table, 1)
	require.NoError(t, err)
	require.Positive(t, kept)

	require.NoError(t, a.Archive(ctx, table))
	m, err := a.Manifest(ctx, table)
	require.NoError(t, err)
	require.Equal(t, int64(6000), m.ItemCount)
	require.GreaterOrEqual(t, len(m.Parquet), 6)
	var rows int64
	for i, p := range m.Parquet {
		rows += p.Rows
		if i > 0 {
			require.Contains(t, p.Key, fmt.Sprintf("-p%d.parquet", i))
		}
	}
	require.Equal(t, int64(6000), rows)
	require.NoError(t, a.Verify(ctx, table))
}

// fillPlain makes table, of no family, and writes n small items to it,
// which it returns.
func fillPlain(t *testing.T, s storage.Store, table string, n int) []storage.Item {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.CreateTable(ctx, storage.TableSpec{Name: table}))
	items := make([]storage.Item, 0, n)
	for i := range n {
		items = append(items, storage.Item{PK: fmt.Sprintf("p%d", i%17), SK: fmt.Sprint(i), Attrs: map[string]any{"v": "x"}})
	}
	for b := range slices.Chunk(items, 25) {
		require.NoError(t, s.BatchWrite(ctx, table, b))
	}
	return items
}
