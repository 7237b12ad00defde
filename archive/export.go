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
	"time"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
)

// maxLine bounds one line of a data file: an item is at most 400 KB in
// DynamoDB, and base64 and JSON quoting at most double it.
const maxLine = 16 << 20

// export writes table's items to the target as a data file and then an
// unverified manifest, after removing any manifest the table's generation
// had. A scan that stops (throttled past its retries, its context ended)
// leaves a checkpoint, and the next export of the table resumes there.
func (a *Archiver) export(ctx context.Context, table string) (m Manifest, err error) {
	info, err := a.store.DescribeTable(ctx, table)
	if err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	m = newManifest(info, a.opts.Clock.Now().UTC())
	shards := shardsOf(info)
	if a.opts.Facts != nil {
		e, found, err := a.opts.Facts(ctx, table)
		if err != nil {
			return Manifest{}, fmt.Errorf("export: registry entry of %q: %w", table, err)
		}
		if found {
			m.recordEntry(e)
			m.Data, _ = objectNames(m.generation())
			shards = max(e.Policy.Shards, 1)
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

	var content ContentHash
	cp, resumed, err := a.resume(ctx, m, info.CreatedAt, f, &content)
	if err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	cp = checkpoint{Table: m.Table, Generation: m.generation(), TableCreatedAt: info.CreatedAt, After: cp.After}

	// Each run appends a gzip member of its own: a gzip reader reads the
	// members as one stream.
	zw := gzip.NewWriter(f)
	bw := bufio.NewWriterSize(zw, 1<<16)
	it := a.store.Scan(ctx, table)
	if resumed {
		it = a.store.ScanAfter(ctx, table, cp.After)
	}
	for it.Next() {
		item := it.Item()
		line, err := MarshalItem(item)
		if err != nil {
			it.Close()
			return Manifest{}, fmt.Errorf("export: %w", err)
		}
		content.Add(line)
		bw.Write(line)
		if err := bw.WriteByte('\n'); err != nil {
			it.Close()
			return Manifest{}, fmt.Errorf("export: %w", err)
		}
		cp.After = item.Key()
		a.opts.Progress(1)
	}
	scanErr := errors.Join(it.Err(), it.Close())
	if err := errors.Join(bw.Flush(), zw.Close()); err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	if scanErr != nil {
		if content.Count() == 0 {
			return Manifest{}, fmt.Errorf("export: scan: %w", scanErr)
		}
		cp.Items, cp.Bytes, cp.SavedAt = content.Count(), size, a.opts.Clock.Now().UTC()
		if err := a.saveCheckpoint(ctx, cp, f); err != nil {
			return Manifest{}, fmt.Errorf("export: scan: %w (and its checkpoint was not saved: %v)", scanErr, err)
		}
		a.opts.Logger.Warn("export stopped; the next resumes where it stopped", "table", table, "items", cp.Items, "err", scanErr)
		return Manifest{}, fmt.Errorf("export: scan stopped after %d items, kept for the next export to resume: %w", cp.Items, scanErr)
	}

	sum := sha256.New()
	if err := seekStart(f); err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	if _, err := io.Copy(sum, f); err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	if err := seekStart(f); err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	if err := a.target.put(ctx, dataKey, f, size); err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	m.ItemCount = content.Count()
	m.ContentSHA256 = content.Sum()
	m.DataBytes = size
	m.DataSHA256 = hex.EncodeToString(sum.Sum(nil))
	if a.opts.Format == family.ArchiveParquet {
		p, err := a.writeParquet(ctx, m, shards, f)
		if err != nil {
			return Manifest{}, fmt.Errorf("export: %w", err)
		}
		m.Parquet = []ParquetFile{p}
	}
	if err := a.writeManifest(ctx, m); err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	if err := a.dropCheckpoint(ctx, m.Table, m.generation()); err != nil {
		a.opts.Logger.Warn("export checkpoint not removed", "table", table, "err", err)
	}
	return m, nil
}

// resume loads the checkpoint of m's export, if any, into spool and
// content, and leaves spool at its end. resumed is false when there is
// none, or it does not hold together (then spool is empty again).
func (a *Archiver) resume(ctx context.Context, m Manifest, created time.Time, spool *os.File, content *ContentHash) (cp checkpoint, resumed bool, err error) {
	cp, found, err := a.loadCheckpoint(ctx, m, created, spool)
	if err != nil || !found {
		return checkpoint{}, false, err
	}
	if err := seekStart(spool); err != nil {
		return checkpoint{}, false, err
	}
	if err := readItems(spool, content, nil); err != nil || content.Count() != cp.Items {
		a.opts.Logger.Warn("export checkpoint ignored: partial data does not match", "table", m.Table, "err", err)
		*content = ContentHash{}
		return checkpoint{}, false, errors.Join(spool.Truncate(0), seekStart(spool))
	}
	if _, err := spool.Seek(0, io.SeekEnd); err != nil {
		return checkpoint{}, false, err
	}
	a.opts.Progress(int(cp.Items))
	a.opts.Logger.Info("export resumed", "table", m.Table, "items", cp.Items, "saved_at", cp.SavedAt)
	return cp, true, nil
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

// readItems decompresses a data file and parses its lines, adding each
// item to content when it is not nil.
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
		if content != nil {
			line, err := MarshalItem(item)
			if err != nil {
				return fmt.Errorf("line %d: %w", n, err)
			}
			content.Add(line)
		}
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
