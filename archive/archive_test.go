package archive_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

var archivedAt = time.Date(2017, 9, 1, 0, 0, 0, 0, time.UTC)

// makeTable creates a table holding the item of every type and n more,
// and returns the items as the store reads them back.
func makeTable(t *testing.T, s storage.Store, name string, n int) []storage.Item {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.CreateTable(ctx, storage.TableSpec{
		Name:     name,
		Capacity: storage.Capacity{Billing: storage.OnDemand},
		Tags: map[string]string{
			family.TagFamily: "events", family.TagPeriodStart: "2017-04-09T00:00:00Z",
			family.TagPeriodEnd: "2017-04-16T00:00:00Z", family.TagWriteMonth: "2017-04", family.TagTier: "cold",
		},
	}))
	items := []storage.Item{allTypes()}
	for i := range n {
		items = append(items, storage.Item{PK: fmt.Sprintf("acme#a_table#car-%d#0", i%7), SK: fmt.Sprintf("2017-04-10T12:00:%02d.000000000Z#e%d", i%60, i),
			Attrs: map[string]any{"speed": json.Number(fmt.Sprint(i)), "gear": "D"}})
	}
	for b := range slices.Chunk(items, 25) {
		require.NoError(t, s.BatchWrite(ctx, name, b))
	}
	return scanAll(t, s, name)
}

// registered records a table in a registry, at a tier, and returns the
// lookup an archiver takes its facts from: on an endpoint without tags
// (DynamoDB Local) the registry is where they are.
func registered(t *testing.T, s storage.Store, f family.Family, table, tier string) func(context.Context, string) (registry.Entry, bool, error) {
	t.Helper()
	ctx := context.Background()
	meta := f.Prefix + "meta"
	require.NoError(t, s.CreateTable(ctx, storage.TableSpec{Name: meta}))
	reg := registry.New(s, meta)
	at := time.Date(2017, 4, 10, 12, 0, 0, 0, time.UTC)
	e := registry.NewEntry(f, f.TableFor(at, at), at)
	require.Equal(t, table, e.Name)
	e.State, e.Tier = registry.Active, tier
	_, err := reg.Register(ctx, e)
	require.NoError(t, err)
	return func(ctx context.Context, name string) (registry.Entry, bool, error) {
		return reg.Find(ctx, []string{f.Name}, name)
	}
}

// scanAll returns a table's items sorted by key.
func scanAll(t *testing.T, s storage.Store, name string) []storage.Item {
	t.Helper()
	it := s.Scan(context.Background(), name)
	defer it.Close()
	var items []storage.Item
	for it.Next() {
		items = append(items, it.Item())
	}
	require.NoError(t, it.Err())
	slices.SortFunc(items, func(a, b storage.Item) int {
		return strings.Compare(a.PK+"\x00"+a.SK, b.PK+"\x00"+b.SK)
	})
	return items
}

func fileTarget(t *testing.T) (url, dir string) {
	dir = t.TempDir()
	return "file://" + filepath.ToSlash(dir), dir
}

// targets are the kinds of target a test runs on: a folder, and an
// S3-compatible server in the test process.
var targets = []struct {
	name string
	open func(t *testing.T) (string, archive.Options)
}{
	{"file", func(t *testing.T) (string, archive.Options) {
		url, _ := fileTarget(t)
		return url, archive.Options{}
	}},
	{"s3", s3Target},
}

func TestArchiveRestoreRoundTrip(t *testing.T) {
	for _, b := range backends.All(t) {
		for _, tg := range targets {
			t.Run(b.Name+"/"+tg.name, func(t *testing.T) {
				testArchiveRestoreRoundTrip(t, b, tg.open)
			})
		}
	}
}

func testArchiveRestoreRoundTrip(t *testing.T, b backends.Backend, open func(t *testing.T) (string, archive.Options)) {
	ctx := context.Background()
	s, cfg := b.Open(t)
	table := cfg.Families[0].Prefix + "1491696000000_1492300799000_4_2017"
	want := makeTable(t, s, table, 60)
	url, opts := open(t)
	opts.Clock = clock.NewManual(archivedAt)
	opts.Facts = registered(t, s, cfg.Families[0], table, "cold")
	a, err := archive.Open(ctx, url, s, opts)
	require.NoError(t, err)

	ok, err := a.Verified(ctx, table)
	require.NoError(t, err)
	require.False(t, ok, "no archive yet")

	require.NoError(t, a.Archive(ctx, table))
	ok, err = a.Verified(ctx, table)
	require.NoError(t, err)
	require.True(t, ok)

	m, err := a.Manifest(ctx, table)
	require.NoError(t, err)
	require.Equal(t, table, m.Table)
	require.Equal(t, "events", m.Family)
	require.Equal(t, "2017-04-09T00:00:00Z", m.PeriodStart)
	require.Equal(t, "2017-04-16T00:00:00Z", m.PeriodEnd)
	require.Equal(t, "2017-04", m.WriteMonth)
	require.Equal(t, "cold", m.Tier)
	require.Equal(t, int64(61), m.ItemCount)
	require.Equal(t, archive.FormatVersion, m.FormatVersion)
	require.Equal(t, archivedAt, m.CreatedAt)
	require.Len(t, m.DataSHA256, 64)

	ms, err := a.List(ctx)
	require.NoError(t, err)
	require.Len(t, ms, 1)
	require.Equal(t, m, ms[0])

	// The table is live: a restore into it is refused, and leaves it
	// as it was.
	err = a.Restore(ctx, table, "")
	require.ErrorIs(t, err, archive.ErrLiveTable)
	require.ErrorContains(t, err, table)
	require.ErrorContains(t, err, "--into NEWNAME")
	require.Equal(t, want, scanAll(t, s, table))

	// The table goes; the archive alone still verifies, and brings
	// the items back exactly.
	require.NoError(t, s.DeleteTable(ctx, table))
	require.NoError(t, a.Verify(ctx, table))
	require.NoError(t, a.Restore(ctx, table, ""))
	require.Equal(t, want, scanAll(t, s, table))
	info, err := s.DescribeTable(ctx, table)
	require.NoError(t, err)
	require.Equal(t, m.Tags, info.Tags)

	// Into another name, and a second time over the first: the
	// same items.
	other := cfg.Families[0].Prefix + "restored"
	require.NoError(t, a.Restore(ctx, table, other))
	require.NoError(t, a.Restore(ctx, table, other))
	require.Equal(t, want, scanAll(t, s, other))
}

// TestRestoreCreatesWithCapacity creates the restored table with
// Options.RestoreCapacity: an on-demand maximum, which DynamoDB Local and
// dynalite ignore and the test backend's dynamofault.ControlPlane records
// and describes, as DynamoDB does.
func TestRestoreCreatesWithCapacity(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			s, cfg := b.Open(t)
			f := cfg.Families[0]
			f.Backfill.Name, f.Backfill.Capacity = family.BackfillTier, storage.Capacity{Billing: storage.OnDemand, MaxRead: 300, MaxWrite: 700}
			table := f.Prefix + "1491696000000_1492300799000_4_2017"
			makeTable(t, s, table, 3)
			url, _ := fileTarget(t)
			a, err := archive.Open(ctx, url, s, archive.Options{Clock: clock.NewManual(archivedAt), RestoreCapacity: f.RestoreCapacity(),
				Facts: registered(t, s, f, table, "cold")})
			require.NoError(t, err)
			require.NoError(t, a.Archive(ctx, table))
			into := f.Prefix + "restored"
			require.NoError(t, a.Restore(ctx, table, into))
			info, err := s.DescribeTable(ctx, into)
			require.NoError(t, err)
			require.Equal(t, storage.OnDemand, info.Capacity.Billing)
			require.Equal(t, int64(300), info.Capacity.MaxRead)
			require.Equal(t, int64(700), info.Capacity.MaxWrite)
		})
	}
}

func TestVerifyDetectsDamage(t *testing.T) {
	for _, tc := range []struct {
		name string
		// missing and tableChanged say what the damage is: no data file at
		// all, or an item more in the table.
		missing, tableChanged bool
		damage                func(t *testing.T, s storage.Store, table, dir string)
	}{
		{"a byte of the data file flipped", false, false, func(t *testing.T, _ storage.Store, table, dir string) {
			p := filepath.Join(dir, table, archive.DataObject)
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			data[len(data)/2] ^= 0x01
			require.NoError(t, os.WriteFile(p, data, 0o644))
		}},
		{"the data file cut short", false, false, func(t *testing.T, _ storage.Store, table, dir string) {
			p := filepath.Join(dir, table, archive.DataObject)
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, data[:len(data)-10], 0o644))
		}},
		{"the data file missing", true, false, func(t *testing.T, _ storage.Store, table, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, table, archive.DataObject)))
		}},
		{"the manifest's count changed", false, false, func(t *testing.T, _ storage.Store, table, dir string) {
			p := filepath.Join(dir, table, archive.ManifestObject)
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			data = []byte(strings.Replace(string(data), `"item_count": 11`, `"item_count": 12`, 1))
			require.NoError(t, os.WriteFile(p, data, 0o644))
		}},
		{"the table written to since", false, true, func(t *testing.T, s storage.Store, table, _ string) {
			require.NoError(t, s.BatchWrite(context.Background(), table, []storage.Item{{PK: "late", SK: "data", Attrs: map[string]any{}}}))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s, cfg := backends.Pebble().Open(t)
			table := cfg.Families[0].Prefix + "damaged"
			want := makeTable(t, s, table, 10)
			url, dir := fileTarget(t)
			a, err := archive.Open(ctx, url, s, archive.Options{})
			require.NoError(t, err)
			require.NoError(t, a.Archive(ctx, table))
			require.NoError(t, a.Verify(ctx, table))

			tc.damage(t, s, table, dir)
			err = a.Verify(ctx, table)
			require.Error(t, err)
			if !tc.missing {
				require.ErrorIs(t, err, archive.ErrMismatch)
			}
			// Nothing is restored from a damaged archive.
			if !tc.tableChanged {
				err = a.Restore(ctx, table, cfg.Families[0].Prefix+"from_damaged")
				require.Error(t, err)
				_, err = s.DescribeTable(ctx, cfg.Families[0].Prefix+"from_damaged")
				require.ErrorIs(t, err, storage.ErrTableNotFound)
			}
			// The table is still there.
			n := len(want)
			if tc.tableChanged {
				n++
			}
			require.Len(t, scanAll(t, s, table), n)
		})
	}
}

func TestArchiveOfMissingTable(t *testing.T) {
	ctx := context.Background()
	s, _ := backends.Pebble().Open(t)
	url, _ := fileTarget(t)
	a, err := archive.Open(ctx, url, s, archive.Options{})
	require.NoError(t, err)
	require.ErrorIs(t, a.Archive(ctx, "no_such_table"), storage.ErrTableNotFound)
	ok, err := a.Verified(ctx, "no_such_table")
	require.NoError(t, err)
	require.False(t, ok)
	require.ErrorIs(t, a.Restore(ctx, "no_such_table", ""), archive.ErrNotFound)
	ms, err := a.List(ctx)
	require.NoError(t, err)
	require.Empty(t, ms)
}

func TestOpenTargets(t *testing.T) {
	ctx := context.Background()
	s, _ := backends.Pebble().Open(t)
	wd, err := os.Getwd()
	require.NoError(t, err)
	for _, tc := range []struct {
		url, want string
	}{
		{"file:///var/archive", "file:///var/archive"},
		{"file://rel/dir", "file://" + filepath.ToSlash(filepath.Join(wd, "rel/dir"))},
		{"s3://bucket/some/prefix/", "s3://bucket/some/prefix"},
		{"s3://bucket", "s3://bucket"},
		{"gs://bucket", ""},
		{"s3:///prefix", ""},
		{"file://", ""},
		{"/just/a/path", ""},
	} {
		t.Run(tc.url, func(t *testing.T) {
			a, err := archive.Open(ctx, tc.url, s, archive.Options{})
			if tc.want == "" {
				require.ErrorIs(t, err, archive.ErrBadTarget)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, a.Target())
		})
	}
}

// The lifecycle manager calls an Archiver through its own interface.
var _ lifecycle.Archiver = (*archive.Archiver)(nil)
