package pebblestore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/timetabledb/timetable/clock"
	"golang.org/x/sync/errgroup"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/storage"
)

// rawCount counts the keys in [start, end) straight from Pebble.
func rawCount(t *testing.T, s *Store, start, end []byte) int {
	t.Helper()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
	require.NoError(t, err)
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	require.NoError(t, it.Close())
	return n
}

// testSpec is the spec the package's own tests create tables with.
func testSpec(name string) storage.TableSpec {
	return storage.TableSpec{Name: name, Capacity: storage.Capacity{Billing: storage.OnDemand}}
}

// items returns n items of partition pk, each with a few attributes.
func items(pk string, n int) []storage.Item {
	out := make([]storage.Item, n)
	for i := range out {
		out[i] = storage.Item{PK: pk, SK: fmt.Sprintf("%08d", i), Attrs: map[string]any{"i": json.Number(fmt.Sprint(i))}}
	}
	return out
}

func TestOperationsAfterClose(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{})
	require.NoError(t, err)
	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close twice")

	require.ErrorIs(t, s.CreateTable(ctx, testSpec("other")), storage.ErrClosed)
	_, err = s.DescribeTable(ctx, "tbl")
	require.ErrorIs(t, err, storage.ErrClosed)
	require.ErrorIs(t, s.ListTables(ctx, "", func(string) bool { return true }), storage.ErrClosed)
	require.ErrorIs(t, s.UpdateTable(ctx, "tbl", storage.TableUpdate{Tags: map[string]string{"a": "b"}}), storage.ErrClosed)
	require.ErrorIs(t, s.DeleteTable(ctx, "tbl"), storage.ErrClosed)
	err = s.BatchWrite(ctx, "tbl", items("p", 2))
	require.ErrorIs(t, err, storage.ErrClosed)
	var we *storage.BatchWriteError
	require.ErrorAs(t, err, &we)
	require.Equal(t, []int{0, 1}, we.Unwritten)
	_, err = s.GetItem(ctx, "tbl", "p", "s")
	require.ErrorIs(t, err, storage.ErrClosed)
	for _, it := range []storage.Iterator{s.Query(ctx, storage.Query{Table: "tbl", PK: "p"}), s.Scan(ctx, "tbl")} {
		require.False(t, it.Next())
		require.ErrorIs(t, it.Err(), storage.ErrClosed)
		require.ErrorIs(t, it.Close(), storage.ErrClosed)
	}
}

func TestCloseWaitsForOpenIterators(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{})
	require.NoError(t, err)
	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	want := items("p", 10)
	require.NoError(t, s.BatchWrite(ctx, "tbl", want))

	it := s.Query(ctx, storage.Query{Table: "tbl", PK: "p"})
	closed := make(chan error)
	go func() { closed <- s.Close() }()
	// Once new calls are turned away, Close has begun and is waiting.
	for {
		if _, err := s.DescribeTable(ctx, "tbl"); errors.Is(err, storage.ErrClosed) {
			break
		}
		runtime.Gosched()
	}
	// The iterator still reads: the DB was not closed under it.
	var got []storage.Item
	for it.Next() {
		got = append(got, it.Item())
	}
	require.NoError(t, it.Err())
	require.Equal(t, want, got)
	require.NoError(t, it.Close())
	require.NoError(t, <-closed)
}

func TestBatchWriteIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, Options{})
	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	good := storage.Item{PK: "p", SK: "good", Attrs: map[string]any{"v": "x"}}
	for _, tc := range []struct {
		name string
		bad  storage.Item
	}{
		{"empty partition key", storage.Item{SK: "s"}},
		{"empty sort key", storage.Item{PK: "p"}},
		{"partition key too long", storage.Item{PK: strings.Repeat("p", storage.MaxPKBytes+1), SK: "s"}},
		{"sort key too long", storage.Item{PK: "p", SK: strings.Repeat("s", storage.MaxSKBytes+1)}},
		{"key attribute", storage.Item{PK: "p", SK: "s", Attrs: map[string]any{"pk": "x"}}},
		{"unsupported type", storage.Item{PK: "p", SK: "s", Attrs: map[string]any{"v": int64(1)}}},
		{"invalid number", storage.Item{PK: "p", SK: "s", Attrs: map[string]any{"v": json.Number("1e200")}}},
		{"item too large", storage.Item{PK: "p", SK: "s", Attrs: map[string]any{"v": strings.Repeat("x", storage.MaxItemSize)}}},
		{"item too large by its many small values", storage.Item{PK: "p", SK: "s", Attrs: map[string]any{"v": manyEmptyLists(110_000)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.BatchWrite(ctx, "tbl", []storage.Item{good, tc.bad, good})
			require.ErrorIs(t, err, storage.ErrInvalid)
			var we *storage.BatchWriteError
			require.ErrorAs(t, err, &we)
			require.Equal(t, []int{0, 1, 2}, we.Unwritten)
			require.Equal(t, "tbl", we.Table)
			_, err = s.GetItem(ctx, "tbl", good.PK, good.SK)
			require.ErrorIs(t, err, storage.ErrItemNotFound, "nothing was written")
		})
	}
	// An item just within DynamoDB's limit is written.
	big := storage.Item{PK: "p", SK: "s", Attrs: map[string]any{"v": strings.Repeat("x", storage.MaxItemSize-10)}}
	require.LessOrEqual(t, storage.ItemSize(big), storage.MaxItemSize)
	require.NoError(t, s.BatchWrite(ctx, "tbl", []storage.Item{big}))
}

// manyEmptyLists returns a list of n empty lists: DynamoDB counts 4 bytes
// for each, this encoding 2, so 110,000 of them are refused for their size
// only because BatchWrite applies DynamoDB's rule.
// TestBatchWriteInAnyOrder writes items in no key order, some keys more
// than once: BatchWrite sets them in key order, and of one key the item
// given last is the one stored.
func TestBatchWriteInAnyOrder(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, Options{})
	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	var batch, want []storage.Item
	for i := range 200 {
		pk, sk := fmt.Sprintf("p%d", i%7), fmt.Sprintf("%03d", (i*37)%20)
		it := storage.Item{PK: pk, SK: sk, Attrs: map[string]any{"i": json.Number(fmt.Sprint(i))}}
		batch = append(batch, it)
		want = slices.DeleteFunc(want, func(w storage.Item) bool { return w.PK == pk && w.SK == sk })
		want = append(want, it)
	}
	require.NoError(t, s.BatchWrite(ctx, "tbl", batch))
	require.Equal(t, normalise(want), normalise(scan(t, s, "tbl")))
}

func manyEmptyLists(n int) []any {
	l := make([]any, n)
	for i := range l {
		l[i] = []any{}
	}
	return l
}

func TestCreateTableRefusesInvalidSpecs(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, Options{})
	for _, tc := range []struct {
		name string
		spec storage.TableSpec
	}{
		{"name too short", testSpec("ab")},
		{"name too long", testSpec(strings.Repeat("a", 256))},
		{"name with a slash", testSpec("a/b")},
		{"name with a space", testSpec("a b")},
		{"non-ASCII name", testSpec("tablé")},
		{"unknown billing", storage.TableSpec{Name: "abc", Capacity: storage.Capacity{Billing: "FREE"}}},
		{"negative capacity", storage.TableSpec{Name: "abc", Capacity: storage.Capacity{Billing: storage.Provisioned, Read: -1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorIs(t, s.CreateTable(ctx, tc.spec), ErrInvalidTable)
		})
	}
	require.NoError(t, s.ListTables(ctx, "", func(name string) bool {
		t.Errorf("table %q exists", name)
		return true
	}))
	require.NoError(t, s.CreateTable(ctx, testSpec(strings.Repeat("a", 255))), "255 characters are fine")
	require.NoError(t, s.CreateTable(ctx, testSpec("A-z_0.9")), "every allowed character")
}

func TestCreatedAtComesFromTheClock(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2017, 4, 10, 12, 0, 0, 123456789, time.UTC)
	s, _ := openTemp(t, Options{Clock: clock.NewManual(at)})
	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	info, err := s.DescribeTable(ctx, "tbl")
	require.NoError(t, err)
	require.True(t, at.Equal(info.CreatedAt), "%v", info.CreatedAt)
	require.Equal(t, int64(-1), info.ItemCount)
}

func TestCanceledContext(t *testing.T) {
	s, _ := openTemp(t, Options{})
	require.NoError(t, s.CreateTable(context.Background(), testSpec("tbl")))
	require.NoError(t, s.BatchWrite(context.Background(), "tbl", items("p", 3)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	require.ErrorIs(t, s.CreateTable(ctx, testSpec("other")), context.Canceled)
	require.ErrorIs(t, s.BatchWrite(ctx, "tbl", items("q", 1)), context.Canceled)
	_, err := s.GetItem(ctx, "tbl", "p", "00000000")
	require.ErrorIs(t, err, context.Canceled)
	it := s.Query(ctx, storage.Query{Table: "tbl", PK: "p"})
	require.False(t, it.Next())
	require.ErrorIs(t, it.Close(), context.Canceled)
	require.ErrorIs(t, s.DeleteTable(ctx, "tbl"), context.Canceled)
	_, err = s.DescribeTable(context.Background(), "tbl")
	require.NoError(t, err, "the canceled delete did nothing")
}

func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, Options{})
	tables := []string{"tbl-a", "tbl-b"}
	for _, name := range tables {
		require.NoError(t, s.CreateTable(ctx, testSpec(name)))
	}
	const writers, batches, size = 8, 10, 50
	var g errgroup.Group
	for w := range writers {
		g.Go(func() error {
			for b := range batches {
				batch := items(fmt.Sprintf("w%d-b%d", w, b), size)
				if err := s.BatchWrite(ctx, tables[w%len(tables)], batch); err != nil {
					return err
				}
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	for _, name := range tables {
		n := 0
		it := s.Scan(ctx, name)
		for it.Next() {
			n++
		}
		require.NoError(t, it.Close())
		require.Equal(t, writers/len(tables)*batches*size, n, "table %s", name)
	}
}

func TestDeleteWhileWriting(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, Options{})
	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	id := s.catalog.lookup("tbl").id

	// Writers race the delete: each batch lands before it or fails with
	// ErrTableNotFound, and none lands after it in the old table's span.
	var g errgroup.Group
	for w := range 4 {
		g.Go(func() error {
			for b := 0; ; b++ {
				err := s.BatchWrite(ctx, "tbl", items(fmt.Sprintf("w%d-%d", w, b), 20))
				if errors.Is(err, storage.ErrTableNotFound) {
					return nil
				}
				if err != nil {
					return err
				}
			}
		})
	}
	require.NoError(t, s.DeleteTable(ctx, "tbl"))
	require.NoError(t, g.Wait())
	start, end := tableSpan(id)
	require.Zero(t, rawCount(t, s, start, end), "no item outlives its table")

	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	require.NotEqual(t, id, s.catalog.lookup("tbl").id, "ids are not reused")
}

func TestDeleteTableFreesSpace(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 20 MB")
	}
	ctx := context.Background()
	s, dir := openTemp(t, Options{})
	require.NoError(t, s.CreateTable(ctx, testSpec("big")))
	require.NoError(t, s.CreateTable(ctx, testSpec("small")))
	require.NoError(t, s.BatchWrite(ctx, "small", items("p", 10)))

	// 20 MB of random (incompressible) bytes in 1 KB values.
	rng := rand.NewChaCha8([32]byte{1})
	const total, value, batch = 20 << 20, 1 << 10, 1000
	for i := 0; i < total/value; i += batch {
		its := make([]storage.Item, batch)
		for j := range its {
			b := make([]byte, value)
			_, _ = rng.Read(b)
			its[j] = storage.Item{PK: "p", SK: fmt.Sprintf("%08d", i+j), Attrs: map[string]any{"b": b}}
		}
		require.NoError(t, s.BatchWrite(ctx, "big", its))
	}
	require.NoError(t, s.db.Flush())
	liveBefore := s.db.Metrics().Table.Local.LiveSize
	diskBefore := dirSize(t, dir)
	require.Greater(t, diskBefore, int64(total), "the data is on disk")
	info, err := s.DescribeTable(ctx, "big")
	require.NoError(t, err)
	require.Greater(t, info.SizeBytes, int64(total/2), "SizeBytes estimates the table")

	require.NoError(t, s.DeleteTable(ctx, "big"))
	// The compaction has dropped the data from the LSM when DeleteTable
	// returns; Pebble's cleaner removes the files it made obsolete in the
	// background, at once (deletion pacing is off).
	liveAfter := s.db.Metrics().Table.Local.LiveSize
	s.db.TestOnlyWaitForCleaning()
	diskAfter := dirSize(t, dir)
	t.Logf("live sstables: %d bytes before the delete, %d after; files: %d, then %d", liveBefore, liveAfter, diskBefore, diskAfter)
	require.Less(t, liveAfter, liveBefore/100, "the delete compacted the data away")
	require.Less(t, diskAfter, diskBefore/4, "the files are gone")
	require.Equal(t, normalise(items("p", 10)), normalise(scan(t, s, "small")), "other tables are untouched")
}

// dirSize sums the sizes of the files in dir, less the WAL files: Pebble
// recycles those rather than delete them, so they are no measure of the
// data kept.
func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() || strings.HasSuffix(e.Name(), ".log") {
			continue
		}
		fi, err := e.Info()
		require.NoError(t, err)
		n += fi.Size()
	}
	return n
}

// scan reads a whole table.
func scan(t *testing.T, s *Store, table string) []storage.Item {
	t.Helper()
	var out []storage.Item
	it := s.Scan(context.Background(), table)
	for it.Next() {
		out = append(out, it.Item())
	}
	require.NoError(t, it.Close())
	return out
}

// normalise sorts items by key.
func normalise(items []storage.Item) []storage.Item {
	slices.SortFunc(items, func(a, b storage.Item) int {
		return cmp.Or(strings.Compare(a.PK, b.PK), strings.Compare(a.SK, b.SK))
	})
	return items
}

func TestOpenRefusesForeignData(t *testing.T) {
	dir := t.TempDir()
	db, err := pebble.Open(dir, &pebble.Options{Logger: pebbleLogger{slog.New(slog.DiscardHandler)}})
	require.NoError(t, err)
	require.NoError(t, db.Set([]byte("someone else's key"), []byte("v"), pebble.Sync))
	require.NoError(t, db.Close())
	_, err = Open(dir, Options{})
	require.ErrorIs(t, err, ErrFormat)

	dir = t.TempDir()
	s, err := Open(dir, Options{})
	require.NoError(t, err)
	require.NoError(t, s.db.Set(formatKey, []byte("99"), pebble.Sync))
	require.NoError(t, s.Close())
	_, err = Open(dir, Options{})
	require.ErrorIs(t, err, ErrFormat)
}

func TestOpenRefusesInvalidOptions(t *testing.T) {
	for _, o := range []Options{{CacheSize: -1}, {MemTableSize: -1}} {
		_, err := Open(t.TempDir(), o)
		require.ErrorIs(t, err, errInvalidOptions)
	}
}
