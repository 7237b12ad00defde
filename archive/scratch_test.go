package archive

import (
	"io"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScratchLeavesNoName writes and reads a scratch file whose folder
// lists nothing meanwhile: a process killed with it open leaves nothing
// behind.
func TestScratchLeavesNoName(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("an open file keeps its name on Windows; closeScratch removes it")
	}
	dir := t.TempDir()
	f, err := createScratch(dir, "timetable-archive-*.ndjson")
	require.NoError(t, err)
	_, err = f.WriteString("a line\n")
	require.NoError(t, err)
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, des, "no name while it is open")
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 7))
	require.NoError(t, err)
	require.Equal(t, "a line\n", string(b))
	require.NoError(t, closeScratch(f))
}
