package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDiskByKind(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o777))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), make([]byte, n), 0o666))
	}
	write("000012.log", 1<<20)
	write("000013.log", 1<<20)
	write("000014.sst", 3<<20)
	write("MANIFEST-000011", 1<<19)
	write("sub/000015.sst", 1<<20)
	kinds, err := diskByKind(dir)
	require.NoError(t, err)
	require.Equal(t, ".sst 4.00 MiB, .log 2.00 MiB, other 0.50 MiB", kinds)
}
