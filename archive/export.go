package archive

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/timetabledb/timetable/storage"
)

// maxLine bounds one line of a data file: an item is at most 400 KB in
// DynamoDB, and base64 and JSON quoting at most double it.
const maxLine = 16 << 20

// export writes table's items to the target as a data file and then an
// unverified manifest, after removing any manifest the table had.
func (a *Archiver) export(ctx context.Context, table string) (m Manifest, err error) {
	info, err := a.store.DescribeTable(ctx, table)
	if err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	m = newManifest(info, a.opts.Clock.Now().UTC())
	if a.opts.Facts != nil {
		e, found, err := a.opts.Facts(ctx, table)
		if err != nil {
			return Manifest{}, fmt.Errorf("export: registry entry of %q: %w", table, err)
		}
		if found {
			m.recordEntry(e)
			m.Data, _ = objectNames(m.generation())
		}
	}
	// From here until the new manifest is written, the table has no
	// archive: a crash leaves nothing that could pass for one.
	dataKey, manifestKey := m.keys()
	if err := a.target.del(ctx, manifestKey); err != nil {
		return Manifest{}, fmt.Errorf("export: remove old manifest: %w", err)
	}

	f, err := os.CreateTemp(a.opts.TempDir, "timetable-archive-*.ndjson.gz")
	if err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	defer func() { err = errors.Join(err, f.Close(), os.Remove(f.Name())) }()

	sum := sha256.New()
	cw := &countWriter{w: io.MultiWriter(f, sum)}
	zw := gzip.NewWriter(cw)
	bw := bufio.NewWriterSize(zw, 1<<16)
	var content ContentHash
	it := a.store.Scan(ctx, table)
	defer it.Close()
	for it.Next() {
		line, err := MarshalItem(it.Item())
		if err != nil {
			return Manifest{}, fmt.Errorf("export: %w", err)
		}
		content.Add(line)
		bw.Write(line)
		if err := bw.WriteByte('\n'); err != nil {
			return Manifest{}, fmt.Errorf("export: %w", err)
		}
		a.opts.Progress(1)
	}
	if err := it.Err(); err != nil {
		return Manifest{}, fmt.Errorf("export: scan: %w", err)
	}
	if err := errors.Join(bw.Flush(), zw.Close()); err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	if err := a.target.put(ctx, dataKey, f, cw.n); err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	m.ItemCount = content.Count()
	m.ContentSHA256 = content.Sum()
	m.DataBytes = cw.n
	m.DataSHA256 = hex.EncodeToString(sum.Sum(nil))
	if err := a.writeManifest(ctx, m); err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	return m, nil
}

// readResult is what reading a data file, or scanning a table, found.
type readResult struct {
	bytes   int64
	fileSHA string
	count   int64
	content string
}

// readBack reads the data file of m's archive from the target, checks
// that every line parses, and calls fn, when not nil, with each item. It
// returns the file's size and SHA-256 and the items' count and content
// hash.
func (a *Archiver) readBack(ctx context.Context, m Manifest, fn func(storage.Item) error) (readResult, error) {
	dataKey, _ := m.keys()
	r, err := a.target.get(ctx, dataKey)
	if err != nil {
		return readResult{}, fmt.Errorf("read back: %w", err)
	}
	defer r.Close()
	sum := sha256.New()
	cr := &countReader{r: io.TeeReader(r, sum)}
	var content ContentHash
	if err := readItems(cr, &content, fn); err != nil {
		return readResult{}, fmt.Errorf("read back %s: %w", dataKey, err)
	}
	// Hash whatever follows the compressed stream too: the file checksum
	// covers the whole file.
	if _, err := io.Copy(io.Discard, cr); err != nil {
		return readResult{}, fmt.Errorf("read back %s: %w", dataKey, err)
	}
	return readResult{bytes: cr.n, fileSHA: hex.EncodeToString(sum.Sum(nil)),
		count: content.Count(), content: content.Sum()}, nil
}

// readItems decompresses a data file and parses its lines.
func readItems(r io.Reader, content *ContentHash, fn func(storage.Item) error) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrMismatch, err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 0, 1<<16), maxLine)
	n := 0
	for sc.Scan() {
		n++
		item, err := UnmarshalItem(sc.Bytes())
		if err != nil {
			return fmt.Errorf("%w: line %d: %w", ErrMismatch, n, err)
		}
		// Hash the item's canonical line, not the bytes read, so that the
		// content hash is a function of the items alone.
		line, err := MarshalItem(item)
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		content.Add(line)
		if fn != nil {
			if err := fn(item); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: after line %d: %v", ErrMismatch, n, err)
	}
	return nil
}

// scanTable scans a table and returns its items' count and content hash.
func (a *Archiver) scanTable(ctx context.Context, table string) (readResult, error) {
	var content ContentHash
	it := a.store.Scan(ctx, table)
	defer it.Close()
	for it.Next() {
		line, err := MarshalItem(it.Item())
		if err != nil {
			return readResult{}, fmt.Errorf("scan %q: %w", table, err)
		}
		content.Add(line)
	}
	if err := it.Err(); err != nil {
		return readResult{}, fmt.Errorf("scan %q: %w", table, err)
	}
	return readResult{count: content.Count(), content: content.Sum()}, nil
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
