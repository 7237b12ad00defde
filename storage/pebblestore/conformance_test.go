package pebblestore

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/storagetest"
)

// openTemp opens a store in a new temporary directory and closes it when t
// ends.
func openTemp(t *testing.T, opts Options) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := Open(dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s, dir
}

func TestConformance(t *testing.T) {
	var mu sync.Mutex
	dirs := map[storage.Store]string{}
	storagetest.RunWithOptions(t, func(t *testing.T) storage.Store {
		s, dir := openTemp(t, Options{})
		mu.Lock()
		dirs[s] = dir
		mu.Unlock()
		return s
	}, storagetest.Options{
		ManyTables: true,
		Reopen: func(t *testing.T, old storage.Store) storage.Store {
			mu.Lock()
			dir := dirs[old]
			mu.Unlock()
			s, err := Open(dir, Options{})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, s.Close()) })
			return s
		},
	})
}
