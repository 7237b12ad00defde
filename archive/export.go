package archive

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync"
	"time"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
)

// maxLine bounds one line of a data file: an item is at most 400 KB in
// DynamoDB, and base64 and JSON quoting at most double it.
const maxLine = 16 << 20

// ErrStopped marks an export that stopped before it was done (its
// deadline near, its scan throttled past the SDK's retries) and saved a
// checkpoint: the next Archive of the table resumes it.
var ErrStopped = errors.New("timetable: archive stopped, to be resumed")

// export writes table's items to the target as a data file and then an
// unverified manifest, after removing any manifest the table's generation
// had. The data file is streamed to the target as the scan produces it
// (target.create): nothing is spooled, and memory holds a few buffers
// whatever the table's size. The table is scanned in Options.ScanSegments
// segments at once. A scan that stops (throttled past its retries, its
// deadline near) commits the data file as it is, without a manifest, and
// leaves a checkpoint, and the next export of the table resumes there.
func (a *Archiver) export(ctx context.Context, table string) (m Manifest, err error) {
	m, info, shards, eventual, err := a.startManifest(ctx, table)
	if err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	// From here until the new manifest is written, the table has no
	// archive: a crash leaves nothing that could pass for one.
	dataKey, manifestKey := m.keys()
	if err := a.target.del(ctx, manifestKey); err != nil {
		return Manifest{}, fmt.Errorf("export: remove old manifest: %w", err)
	}

	x, err := a.startExport(ctx, m, info.CreatedAt, dataKey)
	if err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, x.close())
		}
	}()
	if a.opts.Format == family.ArchiveParquet || a.opts.Format == "" && m.parquetLayout() {
		if x.parquet, err = a.newParquetParts(m, shards, x.cp.Parquet); err != nil {
			return Manifest{}, fmt.Errorf("export: %w", err)
		}
	}

	scanErr := x.scan(ctx, a.store, table, eventual, a.opts.Progress)
	if err := x.endMember(); err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	// What follows must run after a deadline too: the data scanned so far
	// is kept, for this export or the next.
	keep, cancel := context.WithTimeout(context.WithoutCancel(ctx), checkpointTimeout)
	defer cancel()
	if scanErr != nil {
		if ctx.Err() != nil && !errors.Is(scanErr, ctx.Err()) {
			// A backend's error need not say that the deadline ended it.
			scanErr = errors.Join(scanErr, ctx.Err())
		}
		if x.content.Count() == 0 {
			return Manifest{}, fmt.Errorf("export: scan: %w", scanErr)
		}
		if err := x.stop(keep, a); err != nil {
			return Manifest{}, fmt.Errorf("export: scan: %w (and its checkpoint was not saved: %v)", scanErr, err)
		}
		a.opts.Logger.Warn("export stopped; the next resumes where it stopped", "table", table, "items", x.cp.Items, "err", scanErr)
		return Manifest{}, fmt.Errorf("export: scan stopped after %d items, kept for the next export to resume: %w: %w", x.cp.Items, ErrStopped, scanErr)
	}
	if x.parquet != nil {
		if err := x.parquet.flush(keep, true); err != nil {
			return Manifest{}, fmt.Errorf("export: %w", err)
		}
		m.Parquet = x.parquet.files
	}
	if err := x.w.Commit(); err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	m.ItemCount = x.content.Count()
	m.ContentSHA256 = x.content.Sum()
	m.DataBytes = x.out.n
	m.DataSHA256 = hex.EncodeToString(x.sum.Sum(nil))
	if err := a.writeManifest(ctx, m); err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	if err := a.dropCheckpoint(ctx, m.Table, m.generation()); err != nil {
		a.opts.Logger.Warn("export checkpoint not removed", "table", table, "err", err)
	}
	return m, nil
}

// startManifest starts the manifest of an export of table from what the
// store and the registry know of it, and returns the table's description,
// its shards, and whether it takes no more writes (eventual reads do).
func (a *Archiver) startManifest(ctx context.Context, table string) (m Manifest, info storage.TableInfo, shards int, eventual bool, err error) {
	info, err = a.store.DescribeTable(ctx, table)
	if err != nil {
		return Manifest{}, info, 0, false, err
	}
	now := a.opts.Clock.Now().UTC()
	m = newManifest(info, now)
	shards = shardsOf(info)
	if a.opts.Facts != nil {
		e, found, err := a.opts.Facts(ctx, table)
		if err != nil {
			return Manifest{}, info, 0, false, fmt.Errorf("registry entry of %q: %w", table, err)
		}
		if found {
			m.recordEntry(e)
			m.Data, _ = objectNames(m.generation())
			shards = max(e.Policy.Shards, 1)
			eventual = e.Settled(now)
		}
	}
	return m, info, shards, eventual, nil
}

// exportRun is one export under way: the data object being written, the
// gzip member this run appends to it, and what the scan has produced.
// Segments scanned in parallel add their items through add, under mu.
type exportRun struct {
	w   objectWriter
	sum hash.Hash
	out *countWriter // the data object, as written: counts and hashes

	mu      sync.Mutex
	zw      *gzip.Writer
	bw      *bufio.Writer
	content ContentHash
	cp      checkpoint
	parquet *parquetParts
}

// startExport opens the data object and, when a checkpoint of an earlier
// export of the same table is found, copies that export's data into it
// first, checking it on the way.
func (a *Archiver) startExport(ctx context.Context, m Manifest, created time.Time, dataKey string) (*exportRun, error) {
	open := func() (*exportRun, error) {
		w, err := a.target.create(ctx, dataKey)
		if err != nil {
			return nil, err
		}
		x := &exportRun{w: w, sum: sha256.New()}
		x.out = &countWriter{w: io.MultiWriter(w, x.sum)}
		return x, nil
	}
	x, err := open()
	if err != nil {
		return nil, err
	}
	cp, found, err := a.loadCheckpoint(ctx, m, created)
	if err == nil && found {
		var ok bool
		ok, err = a.resume(ctx, m, cp, x)
		if err == nil && !ok {
			// What was copied does not hold together: start over.
			err = x.w.Abort()
			if err == nil {
				x, err = open()
			}
			found = false
		}
	}
	if err != nil {
		return nil, errors.Join(err, x.close())
	}
	segments := max(a.opts.ScanSegments, 1)
	if !found {
		cp = checkpoint{Segments: make([]segmentCheckpoint, segments)}
	}
	x.cp = checkpoint{Version: checkpointVersion, Table: m.Table, Generation: m.generation(),
		TableCreatedAt: created, Segments: cp.Segments, Parquet: cp.Parquet}
	// Each run appends a gzip member of its own: a gzip reader reads the
	// members as one stream.
	x.zw = gzip.NewWriter(x.out)
	x.bw = bufio.NewWriterSize(x.zw, 1<<16)
	return x, nil
}

// close aborts the data object, unless it was committed, and removes
// the Parquet spool, if any.
func (x *exportRun) close() error {
	err := x.w.Abort()
	if x.parquet != nil {
		err = errors.Join(err, x.parquet.close())
	}
	return err
}

// scan scans the segments of the table that are not done, in parallel,
// and adds their items; it returns the scans' errors.
func (x *exportRun) scan(ctx context.Context, store Store, table string, eventual bool, progress func(int)) error {
	var wg sync.WaitGroup
	errs := make([]error, len(x.cp.Segments))
	for i := range x.cp.Segments {
		if x.cp.Segments[i].Done {
			continue
		}
		seg := storage.Segment{Index: i, Total: len(x.cp.Segments), After: x.cp.Segments[i].After, Eventual: eventual}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = x.scanSegment(ctx, store, table, seg, progress)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (x *exportRun) scanSegment(ctx context.Context, store Store, table string, seg storage.Segment, progress func(int)) error {
	it := store.ScanSegment(ctx, table, seg)
	for it.Next() {
		item := it.Item()
		line, err := MarshalItem(item)
		if err != nil {
			it.Close()
			return err
		}
		if err := x.add(ctx, seg.Index, item, line, progress); err != nil {
			it.Close()
			return err
		}
	}
	if err := errors.Join(it.Err(), it.Close()); err != nil {
		return err
	}
	x.mu.Lock()
	x.cp.Segments[seg.Index].Done = true
	x.mu.Unlock()
	return nil
}

// add writes one item of segment seg to the data object (and the
// Parquet part being gathered), and moves the segment's checkpoint past
// it.
func (x *exportRun) add(ctx context.Context, seg int, item storage.Item, line []byte, progress func(int)) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.bw.Write(line)
	if err := x.bw.WriteByte('\n'); err != nil {
		return err
	}
	if x.parquet != nil {
		if err := x.parquet.add(ctx, item, line); err != nil {
			return err
		}
	}
	x.content.Add(line)
	x.cp.Segments[seg].After = item.Key()
	progress(1)
	return nil
}

// endMember ends this run's gzip member.
func (x *exportRun) endMember() error {
	return errors.Join(x.bw.Flush(), x.zw.Close())
}

// stop keeps a stopped export: the Parquet part gathered so far is
// written, the data object committed as it is (a data file without a
// manifest is no archive), and the checkpoint saved after it.
func (x *exportRun) stop(ctx context.Context, a *Archiver) error {
	cpKey, _ := checkpointKeys(x.cp.Table, x.cp.Generation)
	if err := a.target.del(ctx, cpKey); err != nil {
		return err
	}
	if x.parquet != nil {
		if err := x.parquet.flush(ctx, false); err != nil {
			return err
		}
		x.cp.Parquet = x.parquet.files
	}
	if err := x.w.Commit(); err != nil {
		return err
	}
	x.cp.Items, x.cp.Bytes, x.cp.SavedAt = x.content.Count(), x.out.n, a.opts.Clock.Now().UTC()
	x.cp.DataSHA256 = hex.EncodeToString(x.sum.Sum(nil))
	return a.saveCheckpoint(ctx, x.cp)
}

// resume copies the data file of the stopped export cp describes into
// x's data object, parsing it on the way into x's content hash. ok is
// false when it does not match the checkpoint; x's object then holds
// bytes that must be discarded.
func (a *Archiver) resume(ctx context.Context, m Manifest, cp checkpoint, x *exportRun) (ok bool, err error) {
	dataKey, _ := m.keys()
	r, err := a.target.get(ctx, dataKey)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer r.Close()
	cr := &countReader{r: io.TeeReader(r, x.out)}
	err = readItems(cr, &x.content, nil)
	if err == nil {
		_, err = io.Copy(io.Discard, cr)
	}
	if err != nil && !errors.Is(err, ErrMismatch) {
		return false, fmt.Errorf("read stopped export: %w", err)
	}
	if err != nil || x.content.Count() != cp.Items || cr.n != cp.Bytes || hex.EncodeToString(x.sum.Sum(nil)) != cp.DataSHA256 {
		a.opts.Logger.Warn("export checkpoint ignored: the data so far does not match it", "table", m.Table,
			"items", x.content.Count(), "want_items", cp.Items, "bytes", cr.n, "want_bytes", cp.Bytes, "err", err)
		x.content = ContentHash{}
		return false, nil
	}
	a.opts.Progress(int(cp.Items))
	a.opts.Logger.Info("export resumed", "table", m.Table, "items", cp.Items, "saved_at", cp.SavedAt)
	return true, nil
}

// readResult is what reading a data file found.
type readResult struct {
	bytes   int64
	fileSHA string
	count   int64
	content string
}

// readBack reads the data file of m's archive from the target, checks
// that every line parses, and calls fn, when not nil, with each item. It
// returns the file's size and SHA-256 and the items' count and content
// hash, as m's format version computes it.
func (a *Archiver) readBack(ctx context.Context, m Manifest, fn func(storage.Item) error) (readResult, error) {
	dataKey, _ := m.keys()
	if m.Export != nil {
		dataKey = "the export " + m.Export.ARN
	}
	r, err := a.dataReader(ctx, m)
	if err != nil {
		return readResult{}, fmt.Errorf("read back: %w", err)
	}
	defer r.Close()
	sum := sha256.New()
	cr := &countReader{r: io.TeeReader(r, sum)}
	content := newContentHasher(m.FormatVersion)
	if err := readItems(cr, content, fn); err != nil {
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
func readItems(r io.Reader, content contentHasher, fn func(storage.Item) error) error {
	zr, err := gzip.NewReader(r)
	if gzipEmpty(err) {
		return nil // no bytes: no items, as an export of an empty table may be
	}
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
