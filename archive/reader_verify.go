package archive

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/timetabledb/timetable/storage"
)

// DamagedError reports an archive that the archive reader cannot read as its
// manifest describes it: its manifest or one of its Parquet files is
// missing, or a file's size, SHA-256 or row count differs from the
// manifest's, or the file does not read as Parquet. It wraps
// storage.ErrDamaged (and ErrNotFound for what is missing): the same
// read fails the same way until an operator puts the file back as it was
// archived, and the next query after that reads it, without a restart.
type DamagedError struct {
	// Target is the archive's target URL, which the message leaves out.
	Target string
	// Table and Generation name the archived table.
	Table      string
	Generation int64
	// PeriodStart and PeriodEnd are the table's period as the manifest
	// records it; empty when the manifest is what cannot be read.
	PeriodStart, PeriodEnd string
	// File is the damaged object's key under the target's root.
	File string
	// Reason says what is wrong with it.
	Reason string

	missing bool
}

func (e *DamagedError) Error() string {
	period := ""
	if e.PeriodStart != "" {
		period = fmt.Sprintf(", period %s to %s", e.PeriodStart, e.PeriodEnd)
	}
	return fmt.Sprintf("%v: the archive of table %s (generation %d%s): %s %s; an operator must put the file back as it was archived",
		storage.ErrDamaged, e.Table, e.Generation, period, e.File, e.Reason)
}

// Unwrap returns storage.ErrDamaged, and ErrNotFound for a missing file.
func (e *DamagedError) Unwrap() []error {
	if e.missing {
		return []error{storage.ErrDamaged, ErrNotFound}
	}
	return []error{storage.ErrDamaged}
}

// damaged returns the DamagedError of a file of archive k described by m
// (the zero Manifest when the manifest itself cannot be read).
func damaged(k archivedKey, m Manifest, file, reason string, missing bool) *DamagedError {
	return &DamagedError{Target: k.target, Table: k.table, Generation: k.generation, PeriodStart: m.PeriodStart, PeriodEnd: m.PeriodEnd,
		File: file, Reason: reason, missing: missing}
}

// fileStamp names a version of a local file, the one read: its path,
// size and modification time, with the SHA-256 the manifest expects of
// it. The archive reader hashes a file once per stamp, and remembers the
// last stamp checked of each path (Reader.mu.verified); a file changed in
// place, or replaced, has another stamp and is checked again.
type fileStamp struct {
	path   string
	size   int64
	mtime  time.Time
	sha256 string
}

// stampOf returns the stamp of a file whose manifest expects sha256.
func stampOf(path string, st os.FileInfo, sha256 string) fileStamp {
	return fileStamp{path: path, size: st.Size(), mtime: st.ModTime(), sha256: sha256}
}

// changed reports whether the file at the stamp's path is another
// version now, or gone.
func (s fileStamp) changed() bool {
	st, err := os.Stat(s.path)
	return err != nil || st.Size() != s.size || !st.ModTime().Equal(s.mtime)
}

// hashFile reads r, size bytes, whole and returns the file as read: its
// size and SHA-256, with Rows -1 (not counted).
func hashFile(r io.ReaderAt, size int64) (ParquetFile, error) {
	sum := sha256.New()
	n, err := io.Copy(sum, io.NewSectionReader(r, 0, size))
	if err != nil {
		return ParquetFile{}, err
	}
	return ParquetFile{Bytes: n, SHA256: hex.EncodeToString(sum.Sum(nil)), Rows: -1}, nil
}

// verifiedLocked reports whether the file of a stamp was checked.
func (c *Reader) verifiedLocked(s fileStamp) bool {
	v, ok := c.mu.verified[s.path]
	return ok && v == s
}

// verify checks the size and SHA-256 of f, the local file of stamp s,
// against p, the manifest's record of it, unless a file of that stamp
// was checked before; it returns what differs, "" when nothing does.
func (c *Reader) verify(f *os.File, s fileStamp, p ParquetFile) (string, error) {
	c.mu.Lock()
	ok := c.verifiedLocked(s)
	c.mu.Unlock()
	if ok {
		return "", nil
	}
	if s.size != p.Bytes {
		return diffParquet(ParquetFile{Bytes: s.size, Rows: -1}, p), nil
	}
	got, err := hashFile(f, s.size)
	if err != nil {
		return "", err
	}
	return diffParquet(got, p), nil
}

// markVerified records that the file of stamp s matched its manifest.
func (c *Reader) markVerified(s fileStamp) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.verified[s.path] = s
}

// forgetLocked drops the records of the files of archive t, so that they
// are checked again when next opened.
func (c *Reader) forgetLocked(t *archivedTable) {
	for _, s := range t.stamps {
		if c.verifiedLocked(s) {
			delete(c.mu.verified, s.path)
		}
	}
}
