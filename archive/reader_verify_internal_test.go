package archive

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVerifyOncePerStamp checks a file against its manifest record once
// per version: a version checked is not read again (even if its bytes
// changed without its size and time: the stamp is what is trusted), and
// one of another time or size is.
func TestVerifyOncePerStamp(t *testing.T) {
	c := NewReader(ReaderOptions{})
	defer c.Close()
	path := filepath.Join(t.TempDir(), "f.parquet")
	body := []byte("the bytes of a Parquet file")
	require.NoError(t, os.WriteFile(path, body, 0o644))
	sum := sha256.Sum256(body)
	p := ParquetFile{Key: "f.parquet", Bytes: int64(len(body)), SHA256: hex.EncodeToString(sum[:]), Rows: 1}

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	stamp := stampOf(path, st, p.SHA256)
	diff, err := c.verify(f, stamp, p)
	require.NoError(t, err)
	require.Empty(t, diff)
	c.markVerified(stamp)

	// The same size and time, other bytes: trusted by its stamp, not read.
	other := []byte("THE BYTES OF A PARQUET FILE")
	require.NoError(t, os.WriteFile(path, other, 0o644))
	require.NoError(t, os.Chtimes(path, st.ModTime(), st.ModTime()))
	st2, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, stamp, stampOf(path, st2, p.SHA256))
	diff, err = c.verify(f, stamp, p)
	require.NoError(t, err)
	require.Empty(t, diff, "checked once for its stamp")

	// Another time: another version, read and found to differ.
	require.NoError(t, os.Chtimes(path, st.ModTime().Add(1), st.ModTime().Add(1)))
	st3, err := os.Stat(path)
	require.NoError(t, err)
	require.True(t, stamp.changed())
	diff, err = c.verify(f, stampOf(path, st3, p.SHA256), p)
	require.NoError(t, err)
	require.Contains(t, diff, "SHA-256 is")
}
