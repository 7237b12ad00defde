package archive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/parquetfile"
	"github.com/timetabledb/timetable/storage"
)

// Reader reads archives back: it answers the engine's storage queries of a
// table that was archived and deleted from the Parquet files of its
// verified archive (engine.Options.Archives), so that a query over an
// archived period reads it as it read the table.
//
// A partition's query (tenant, logical table, series and shard) reads
// the row groups of the table's Parquet files whose statistics may hold
// the series and the time range: the archive writes them sorted by
// tenant, table, series and time, in row groups of ParquetRowGroupRows.
// Of such a row group it reads the key columns, and then whole rows
// only where they are the partition's and the range's
// (parquetfile.File.Events); a page after the first reads on from its
// cursor.
// Its events come back as row items, whatever the table's layout was, in
// the order, range, projection, filter and limit of the query; an event
// the archive holds twice (two chunks of a window held it) comes back
// once, so that the engine reads an archived table of the chunk layout
// as one of rows. A query
// of the series index lists the series of the files. Other items
// (rollups, their version markers) are not archived in Parquet: their
// queries find none.
//
// The files of a file:// target are read where they are; those of an
// s3:// target are fetched, whole, into ReaderOptions.CacheDir, and read
// there. An archive's files, once opened, stay open until Close, or, for
// an s3:// target, until the archive is evicted from the cache: the
// cache holds at most ReaderOptions.CacheBytes, and makes room for a file
// by evicting the archives least recently read that no query is reading
// (closing their files and removing them), so an evicted archive is
// fetched again by the next query that reads it. Only the archives that
// queries read at once may take the cache past its bound.
//
// A Reader may be used by several goroutines at once.
type Reader struct {
	opts ReaderOptions
	mu   struct {
		sync.Mutex
		targets map[string]target
		tables  map[archivedKey]*archivedTable
		// cache holds the cache's files by path, nil until the first
		// file of an s3:// target (reader_cache.go); cacheUsed is the sum
		// of their sizes.
		cache     map[string]*cacheFile
		cacheUsed int64
		// tick orders the uses of archives and cache files.
		tick uint64
		// verified holds, by path, the stamp of the local file last
		// found to match its manifest (reader_verify.go).
		verified map[string]fileStamp
	}
}

// ReaderOptions configure a Reader.
type ReaderOptions struct {
	// S3 configures s3:// targets.
	S3 S3Options
	// CacheDir is where the Parquet files of s3:// targets are kept once
	// fetched, made when missing; empty means os.TempDir().
	CacheDir string
	// CacheBytes bounds the size of the Parquet files kept in CacheDir;
	// zero means DefaultReaderCacheBytes (1 GiB). The archives that
	// queries read at once are kept whatever their size.
	CacheBytes int64
	// Logger receives the tier's warnings; nil means slog.Default().
	Logger *slog.Logger
}

// archivedKey names an archive: a generation of a table in a target.
type archivedKey struct {
	target, table string
	generation    int64
}

// archivedTable is an archive's Parquet files, opened.
type archivedTable struct {
	once  sync.Once
	key   archivedKey
	files []*parquetfile.File
	// keys are the files' keys under the target's root, and manifest
	// the manifest they were opened by, for DamagedError.
	keys     []string
	manifest Manifest
	// stamps are the versions of the files read in place (a file://
	// target's, its manifest among them), checked by every query: an
	// archive whose files changed is opened again.
	stamps []fileStamp
	closer []io.Closer
	err    error
	// refs counts the queries reading the archive, lastUse orders its
	// reads, and cached lists the cache files it holds open (of an s3://
	// target): guarded by Reader.mu.
	refs    int
	lastUse uint64
	cached  []string
	// stale marks an archive taken out of Reader.mu.tables while queries
	// read it (its files changed, or one failed to read): the last
	// release closes it.
	stale bool
	// series holds the series of each of the archive's logical tables,
	// by tenant and table, once listed (reader_series.go): guarded by
	// Reader.mu.
	series map[tenantTable][]string
}

// NewReader returns a Reader.
func NewReader(opts ReaderOptions) *Reader {
	c := &Reader{opts: opts}
	c.mu.targets = map[string]target{}
	c.mu.tables = map[archivedKey]*archivedTable{}
	c.mu.verified = map[string]fileStamp{}
	return c
}

// Close closes the files the tier opened. It is safe to call twice.
func (c *Reader) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for k, t := range c.mu.tables {
		for _, cl := range t.closer {
			errs = append(errs, cl.Close())
		}
		delete(c.mu.tables, k)
	}
	return errors.Join(errs...)
}

func (c *Reader) log() *slog.Logger {
	if c.opts.Logger == nil {
		return slog.Default()
	}
	return c.opts.Logger
}

// Query answers a storage query of the generation of table archived in
// target, a table of shards shards, as the table answered it. Its
// iterator fails with a *DamagedError (wrapping storage.ErrDamaged, and
// ErrNotFound for what is missing) when the target holds no verified
// archive in Parquet of that generation, or a file of it that does not
// match the manifest.
func (c *Reader) Query(ctx context.Context, targetURL, table string, generation int64, shards int, q storage.Query) storage.Iterator {
	items, err := c.items(ctx, targetURL, table, generation, shards, q)
	var de *DamagedError
	if errors.As(err, &de) {
		// It names the table, period and file, and not the target (a
		// host or bucket the client has no business knowing), for the
		// client it answers.
		return &readerIterator{IteratorEnd: storage.IteratorEnd{Failure: fmt.Errorf("archive reader: %w", err)}}
	}
	if err != nil {
		return &readerIterator{IteratorEnd: storage.IteratorEnd{Failure: fmt.Errorf("archive reader: %s of %s: %w", table, targetURL, err)}}
	}
	return newReaderIterator(items, q)
}

// items returns the items of q's partition, unsorted, unbounded by the
// query's keys, unfiltered and unprojected (newReaderIterator).
func (c *Reader) items(ctx context.Context, targetURL, table string, generation int64, shards int, q storage.Query) ([]storage.Item, error) {
	tenant, logical, series, shard, err := itemenc.ParsePartitionKey(q.PK)
	if err != nil {
		// The series index of a logical table: "{tenant}#{table}".
		tenant, logical, ok := strings.Cut(q.PK, "#")
		if !ok || strings.Contains(logical, "#") {
			return nil, nil // rollups and markers: not archived
		}
		return c.seriesIndex(ctx, targetURL, table, generation, tenant, logical, q.PK)
	}
	t, err := c.table(ctx, targetURL, table, generation)
	if err != nil {
		return nil, err
	}
	defer c.release(t)
	sel := parquetfile.Selection{Tenant: tenant, Table: logical, Series: series, From: time.Unix(0, 0).UTC(), To: time.Unix(0, math.MaxInt64).UTC()}
	if from, ok := keyTime(q.Low); ok {
		sel.From = from
	}
	if to, ok := keyTime(q.High); ok {
		sel.To = to
	}
	// A page after the first reads on from its cursor: the row groups
	// of the events before it (after it, descending) are not decoded
	// again.
	if after, ok := keyTime(q.After); ok {
		if q.Desc {
			sel.To = minTime(sel.To, after)
		} else {
			sel.From = maxTime(sel.From, after)
		}
	}
	var out []storage.Item
	for i, f := range t.files {
		err := f.Events(sel, func(e event.Event) error {
			if itemenc.Shard(e.ID, shards) != shard {
				return nil
			}
			out = append(out, storage.Item{PK: q.PK, SK: itemenc.SortKey(e.Time, e.ID), Attrs: e.Fields})
			return nil
		})
		if err != nil {
			return nil, c.unreadable(t, i, err)
		}
	}
	return out, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// keyTime returns the time a sort key bound starts with, if it does: a
// time key, or a time prefix alone (chunk.LowKey's).
func keyTime(k string) (time.Time, bool) {
	if len(k) < itemenc.TimeKeyLen {
		return itemenc.ParseTimePrefix(k)
	}
	return itemenc.ParseTimeKey(k[:itemenc.TimeKeyLen])
}

// table returns the opened Parquet files of an archive, opening them on
// first use, and again when a file read in place changed since. The
// caller reads them until it calls release: the cache does not evict
// them before.
func (c *Reader) table(ctx context.Context, targetURL, table string, generation int64) (*archivedTable, error) {
	k := archivedKey{targetURL, table, max(generation, 1)}
	for {
		t, opened, err := c.tableOnce(ctx, k)
		if err != nil || opened || !t.changed() {
			return t, err
		}
		c.mu.Lock()
		c.discardLocked(t)
		c.mu.Unlock()
		c.release(t)
	}
}

// changed reports whether a file the archive reads in place changed
// since it was opened.
func (t *archivedTable) changed() bool {
	for _, s := range t.stamps {
		if s.changed() {
			return true
		}
	}
	return false
}

// discardLocked takes an archive out of the tier, to be opened again,
// its files checked again, by the next query; the last release closes
// it.
func (c *Reader) discardLocked(t *archivedTable) {
	if c.mu.tables[t.key] == t {
		delete(c.mu.tables, t.key)
	}
	t.stale = true
	c.forgetLocked(t)
}

// unreadable returns the error of file i of archive t that failed to
// read, which the archive's check did not find, and discards the
// archive, so that the next query checks its files again.
func (c *Reader) unreadable(t *archivedTable, i int, err error) error {
	c.mu.Lock()
	c.discardLocked(t)
	c.mu.Unlock()
	return damaged(t.key, t.manifest, t.keys[i], fmt.Sprintf("does not read as Parquet: %v", err), false)
}

// tableOnce returns the archive of k, opening it when it is not open,
// and whether this call opened it.
func (c *Reader) tableOnce(ctx context.Context, k archivedKey) (*archivedTable, bool, error) {
	c.mu.Lock()
	t, ok := c.mu.tables[k]
	if !ok {
		t = &archivedTable{key: k}
		c.mu.tables[k] = t
	}
	t.refs++
	t.lastUse = c.tickLocked()
	c.mu.Unlock()
	opened := false
	t.once.Do(func() { t.err, opened = c.open(ctx, t, k), true })
	if t.err != nil {
		// Try again on the next query: the archive may be written, or
		// repaired, by then.
		c.mu.Lock()
		if c.mu.tables[k] == t {
			delete(c.mu.tables, k)
		}
		t.refs--
		if t.refs == 0 {
			if err := c.closeTableLocked(t); err != nil {
				c.log().Warn("archive reader: close an archive that failed to open", "table", k.table, "generation", k.generation, "err", err)
			}
		}
		c.mu.Unlock()
		return nil, false, t.err
	}
	return t, opened, nil
}

// release ends a read of an archive that table returned. When the reads
// at once took the cache past its bound, it evicts the other archives no
// query reads until the cache is within its bound.
func (c *Reader) release(t *archivedTable) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t.refs--
	if t.stale && t.refs == 0 {
		if err := c.closeTableLocked(t); err != nil {
			c.log().Warn("archive reader: close an archive opened again", "table", t.key.table, "generation", t.key.generation, "err", err)
		}
	}
	for c.mu.cacheUsed > c.cacheBytes() && c.evictLocked(t) {
	}
}

// target returns the target of a URL, opening it on first use.
func (c *Reader) target(ctx context.Context, targetURL string) (target, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.mu.targets[targetURL]; ok {
		return t, nil
	}
	t, err := parseTarget(ctx, targetURL, c.opts.S3)
	if err != nil {
		return nil, err
	}
	c.mu.targets[targetURL] = t
	return t, nil
}

// open reads an archive's manifest and opens its Parquet files, each
// checked against the manifest: its size and SHA-256 once per version of
// the file (fileStamp), its row count, from the file's footer, at every
// open.
func (c *Reader) open(ctx context.Context, t *archivedTable, k archivedKey) error {
	tg, err := c.target(ctx, k.target)
	if err != nil {
		return err
	}
	mkey := manifestKey(k.table, k.generation)
	ft, inPlace := tg.(*fileTarget)
	if inPlace {
		// Stamped before it is read: a manifest written since is another
		// version at the next query.
		if st, err := os.Stat(ft.path(mkey)); err == nil {
			t.stamps = append(t.stamps, stampOf(ft.path(mkey), st, ""))
		}
	}
	a := &Archiver{target: tg}
	m, err := a.readManifest(ctx, mkey)
	switch {
	case errors.Is(err, ErrNotFound):
		return damaged(k, Manifest{}, mkey, "is missing", true)
	case errors.Is(err, ErrFormat):
		return damaged(k, Manifest{}, mkey, fmt.Sprintf("does not read: %v", err), false)
	case err != nil:
		return err
	}
	t.manifest = m
	if !m.Verified() {
		return damaged(k, m, mkey, "is not verified: the archive was never checked", true)
	}
	if len(m.Parquet) == 0 {
		return damaged(k, m, mkey, "lists no Parquet file: the archive is in NDJSON alone, which the archive reader does not read", true)
	}
	for _, p := range m.Parquet {
		f, err := c.local(ctx, t, tg, p)
		if err != nil {
			return err
		}
		t.closer = append(t.closer, f)
		st, err := f.Stat()
		if err != nil {
			return err
		}
		stamp := stampOf(f.Name(), st, p.SHA256)
		diff, err := c.verify(f, stamp, p)
		if err != nil {
			return fmt.Errorf("check %s: %w", p.Key, err)
		}
		if diff != "" {
			return damaged(k, m, p.Key, diff, false)
		}
		pf, err := parquetfile.OpenFile(f, st.Size())
		if err != nil {
			return damaged(k, m, p.Key, fmt.Sprintf("does not read as Parquet: %v", err), false)
		}
		if diff := diffParquet(ParquetFile{Bytes: p.Bytes, SHA256: p.SHA256, Rows: pf.NumRows()}, p); diff != "" {
			return damaged(k, m, p.Key, diff, false)
		}
		c.markVerified(stamp)
		if inPlace {
			t.stamps = append(t.stamps, stamp)
		}
		t.files = append(t.files, pf)
		t.keys = append(t.keys, p.Key)
	}
	return nil
}

// local opens a Parquet file of archive t: in place in a folder, or
// fetched into CacheDir from S3, counted in the cache. A file fetched is
// hashed on the way, and kept only when its size and SHA-256 are the
// manifest's; a cache file, named by its SHA-256, is checked once.
func (c *Reader) local(ctx context.Context, t *archivedTable, tg target, p ParquetFile) (*os.File, error) {
	if ft, ok := tg.(*fileTarget); ok {
		f, err := os.Open(ft.path(p.Key))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, damaged(t.key, t.manifest, p.Key, "is missing", true)
		}
		return f, err
	}
	dir := c.cacheDir()
	path := filepath.Join(dir, cachePrefix+p.SHA256+cacheSuffix)
	c.mu.Lock()
	err := c.reserveLocked(t, path, p.Bytes)
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if f, err := os.Open(path); err == nil {
		if st, err := f.Stat(); err == nil {
			s := stampOf(path, st, p.SHA256)
			if diff, err := c.verify(f, s, p); err == nil && diff == "" {
				c.markVerified(s)
				return f, nil
			}
		}
		f.Close() // a damaged copy: fetched again
	}
	r, err := tg.get(ctx, p.Key)
	if errors.Is(err, ErrNotFound) {
		return nil, damaged(t.key, t.manifest, p.Key, "is missing", true)
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// A fetch of this file that a kill stopped left its own: removed.
	if err := removeLeftovers(dir, filepath.Base(path)+fetchSuffix); err != nil {
		return nil, fmt.Errorf("archive reader cache: %w", err)
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+fetchSuffix+"*")
	if err != nil {
		return nil, err
	}
	sum := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, sum), r)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("fetch %s: %w", p.Key, err), tmp.Close(), os.Remove(tmp.Name()))
	}
	if err := tmp.Close(); err != nil {
		return nil, errors.Join(err, os.Remove(tmp.Name()))
	}
	if diff := diffParquet(ParquetFile{Bytes: n, SHA256: hex.EncodeToString(sum.Sum(nil)), Rows: -1}, p); diff != "" {
		return nil, errors.Join(damaged(t.key, t.manifest, p.Key, diff, false), os.Remove(tmp.Name()))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, errors.Join(err, os.Remove(tmp.Name()))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err == nil {
		c.markVerified(stampOf(path, st, p.SHA256))
	}
	return f, nil
}

// readerIterator returns a partition's items as a store's query would: in
// key order, within the query's bounds, up to its limit.
type readerIterator struct {
	storage.IteratorEnd
	items []storage.Item
	i     int
	cur   storage.Item
}

func newReaderIterator(items []storage.Item, q storage.Query) *readerIterator {
	// An event that two chunks of the table held is in the archive twice,
	// with the same sort key: kept once, the first in the files' order,
	// as a read of the chunks keeps the first (chunk.WindowEvents).
	slices.SortStableFunc(items, func(a, b storage.Item) int { return strings.Compare(a.SK, b.SK) })
	items = slices.CompactFunc(items, func(a, b storage.Item) bool { return a.SK == b.SK })
	items = slices.DeleteFunc(items, func(it storage.Item) bool {
		if q.Low != "" && it.SK < q.Low || q.High != "" && it.SK > q.High {
			return true
		}
		if q.Filter != nil && !q.Filter.Match(it.Attrs) {
			return true
		}
		if q.After != "" {
			if q.Desc {
				return it.SK >= q.After
			}
			return it.SK <= q.After
		}
		return false
	})
	if q.Desc {
		slices.Reverse(items)
	}
	it := &readerIterator{items: items}
	if q.Limit > 0 && len(items) > q.Limit {
		it.items = items[:q.Limit]
		it.Limited, it.ResumeAfter = true, items[q.Limit-1].SK
	}
	if q.Attrs != nil {
		for _, item := range it.items {
			for name := range item.Attrs {
				if !slices.Contains(q.Attrs, name) {
					delete(item.Attrs, name)
				}
			}
		}
	}
	return it
}

// Next advances to the next item.
func (it *readerIterator) Next() bool {
	if it.Failure != nil || it.i >= len(it.items) {
		return false
	}
	it.cur = it.items[it.i]
	it.items[it.i] = storage.Item{}
	it.i++
	return true
}

// Item returns the current item.
func (it *readerIterator) Item() storage.Item { return it.cur }

// SortKey returns the current item's sort key.
func (it *readerIterator) SortKey() string { return it.cur.SK }

// Attrs calls fn with each of the current item's attributes.
func (it *readerIterator) Attrs(fn func(name string, v any) bool) error {
	for name, v := range it.cur.Attrs {
		if !fn(name, v) {
			return nil
		}
	}
	return nil
}

// Close lets the items go, and returns the error that stopped the
// iteration, as storage.Iterator's Close does: a reader that checks only
// Close must not take an archive it could not read for an empty one.
func (it *readerIterator) Close() error {
	it.items = nil
	return it.Err()
}
