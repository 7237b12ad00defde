package archive

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
)

var errCrash = errors.New("crash")

// crashingTarget stops working, as a process that dies would, at the
// n-th put (counting from 1) and every call after it.
type crashingTarget struct {
	target
	n, puts int
}

func (c *crashingTarget) put(ctx context.Context, key string, r io.ReadSeeker, size int64) error {
	c.puts++
	if c.puts >= c.n {
		return errCrash
	}
	return c.target.put(ctx, key, r, size)
}

func (c *crashingTarget) create(ctx context.Context, key string) (objectWriter, error) {
	c.puts++
	if c.puts >= c.n {
		return nil, errCrash
	}
	return c.target.create(ctx, key)
}

func (c *crashingTarget) del(ctx context.Context, key string) error {
	if c.puts >= c.n {
		return errCrash
	}
	return c.target.del(ctx, key)
}

// TestCrashResumes interrupts Archive at each of its writes: the data file,
// the unverified manifest, and the verified one. Until the last succeeds
// the table is never reported verified, and the next Archive, in a new
// process, ends with a verified archive.
func TestCrashResumes(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
	}{
		{"while writing the data file", 1},
		{"after the data file", 2},
		{"after the unverified manifest", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s, _ := backends.Pebble().Open(t)
			const table = "tt_events_1491696000000_1492300799000_4_2017"
			require.NoError(t, s.CreateTable(ctx, storage.TableSpec{Name: table}))
			require.NoError(t, s.BatchWrite(ctx, table, []storage.Item{
				{PK: "a", SK: "1", Attrs: map[string]any{"v": "x"}},
				{PK: "a", SK: "2", Attrs: map[string]any{"v": "y"}},
			}))
			url := "file://" + t.TempDir()
			a, err := Open(ctx, url, s, Options{})
			require.NoError(t, err)

			// A verified archive exists; a new Archive (say, of a table
			// restored and changed) crashes part way.
			require.NoError(t, a.Archive(ctx, table))
			require.NoError(t, s.BatchWrite(ctx, table, []storage.Item{{PK: "a", SK: "3", Attrs: map[string]any{}}}))
			crashing := &Archiver{store: s, target: &crashingTarget{target: a.target, n: tc.n}, opts: a.opts}
			require.ErrorIs(t, crashing.Archive(ctx, table), errCrash)

			ok, err := a.Verified(ctx, table)
			require.NoError(t, err)
			require.False(t, ok, "a crashed archive is never verified")

			require.NoError(t, a.Archive(ctx, table))
			ok, err = a.Verified(ctx, table)
			require.NoError(t, err)
			require.True(t, ok)
			m, err := a.Manifest(ctx, table)
			require.NoError(t, err)
			require.Equal(t, int64(3), m.ItemCount)
		})
	}
}

// corruptingTarget flips a byte of every data file it stores, as a bad
// disk or a broken upload would.
type corruptingTarget struct{ target }

func (c corruptingTarget) put(ctx context.Context, key string, r io.ReadSeeker, size int64) error {
	if !strings.HasSuffix(key, DataObject) {
		return c.target.put(ctx, key, r, size)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	b[len(b)/2] ^= 0x40
	return c.target.put(ctx, key, bytes.NewReader(b), size)
}

func (c corruptingTarget) create(ctx context.Context, key string) (objectWriter, error) {
	w, err := c.target.create(ctx, key)
	if err != nil || !strings.HasSuffix(key, DataObject) {
		return w, err
	}
	return &corruptingWriter{objectWriter: w}, nil
}

// corruptingWriter flips a bit of the 20th byte written.
type corruptingWriter struct {
	objectWriter
	n int
}

func (c *corruptingWriter) Write(p []byte) (int, error) {
	if i := 20 - c.n; i >= 0 && i < len(p) {
		p = bytes.Clone(p)
		p[i] ^= 0x40
	}
	c.n += len(p)
	return c.objectWriter.Write(p)
}

// TestArchiveReadsBack checks that Archive verifies what the target holds,
// not what it meant to write.
func TestArchiveReadsBack(t *testing.T) {
	ctx := context.Background()
	s, _ := backends.Pebble().Open(t)
	const table = "tt_events_x"
	require.NoError(t, s.CreateTable(ctx, storage.TableSpec{Name: table}))
	require.NoError(t, s.BatchWrite(ctx, table, []storage.Item{{PK: "a", SK: "1", Attrs: map[string]any{"v": "some value to compress"}}}))
	a, err := Open(ctx, "file://"+t.TempDir(), s, Options{})
	require.NoError(t, err)
	bad := &Archiver{store: s, target: corruptingTarget{a.target}, opts: a.opts}
	require.ErrorIs(t, bad.Archive(ctx, table), ErrMismatch)
	ok, err := a.Verified(ctx, table)
	require.NoError(t, err)
	require.False(t, ok)
}
