package archive

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// DefaultReaderCacheBytes is the default bound of the archive reader's cache of
// the Parquet files of s3:// targets (ReaderOptions.CacheBytes): 1 GiB.
const DefaultReaderCacheBytes = 1 << 30

// The names of the cache's files in ReaderOptions.CacheDir: a Parquet file
// of an s3:// archive, by its SHA-256, and one being fetched (its name,
// then fetchSuffix and a random part). The next fetch of a file removes
// the fetches of it that a kill left.
const (
	cachePrefix = "timetable-cold-"
	cacheSuffix = ".parquet"
	fetchSuffix = ".part"
)

// cacheFile is a Parquet file in the cache. Guarded by Reader.mu.
type cacheFile struct {
	bytes int64
	// tables counts the opened archives that hold the file open.
	tables int
	// lastUse orders a file that no archive holds among the archives,
	// for eviction: 0 for a file left by a former run.
	lastUse uint64
}

// cacheDir returns the folder of the cache.
func (c *Reader) cacheDir() string {
	if c.opts.CacheDir == "" {
		return os.TempDir()
	}
	return c.opts.CacheDir
}

// cacheBytes returns the bound of the cache.
func (c *Reader) cacheBytes() int64 {
	if c.opts.CacheBytes <= 0 {
		return DefaultReaderCacheBytes
	}
	return c.opts.CacheBytes
}

// reserveLocked makes room for a Parquet file of size bytes at path,
// which archive t is about to hold open, and counts it: it evicts the
// archives that no query reads and the files that no archive holds, least
// recently used first, until the cache holds at most ReaderOptions.
// CacheBytes with the file. Archives being read are never evicted, so the
// cache exceeds its bound while the archives that queries read at once
// take more. The first call adopts the files a former run left in the
// folder, as the least recently used.
func (c *Reader) reserveLocked(t *archivedTable, path string, bytes int64) error {
	if c.mu.cache == nil {
		if err := c.adoptCacheLocked(); err != nil {
			return err
		}
	}
	if f, ok := c.mu.cache[path]; ok && f.bytes == bytes {
		f.tables++
		t.cached = append(t.cached, path)
		return nil
	} else if ok {
		// A damaged file of that name: fetched again below.
		if err := c.removeCachedLocked(path); err != nil {
			return err
		}
	}
	for c.mu.cacheUsed+bytes > c.cacheBytes() {
		if !c.evictLocked(t) {
			break
		}
	}
	c.mu.cache[path] = &cacheFile{bytes: bytes, tables: 1}
	c.mu.cacheUsed += bytes
	t.cached = append(t.cached, path)
	return nil
}

// evictLocked evicts the least recently used archive that no query reads
// (other than keep), or file that no archive holds, and reports whether
// there was one.
func (c *Reader) evictLocked(keep *archivedTable) bool {
	var (
		oldest     uint64
		table      archivedKey
		file       string
		found, arc bool
	)
	for k, t := range c.mu.tables {
		if t == keep || t.refs > 0 || len(t.cached) == 0 || found && t.lastUse >= oldest {
			continue
		}
		oldest, table, found, arc = t.lastUse, k, true, true
	}
	for p, f := range c.mu.cache {
		if f.tables > 0 || found && f.lastUse >= oldest {
			continue
		}
		oldest, file, found, arc = f.lastUse, p, true, false
	}
	switch {
	case !found:
		return false
	case arc:
		t := c.mu.tables[table]
		delete(c.mu.tables, table)
		if err := c.closeTableLocked(t); err != nil {
			c.log().Warn("archive reader: evict an archive from the cache", "table", table.table, "generation", table.generation, "err", err)
		}
	default:
		if err := c.removeCachedLocked(file); err != nil {
			c.log().Warn("archive reader: evict a file from the cache", "file", file, "err", err)
			delete(c.mu.cache, file) // not counted again
		}
	}
	return true
}

// closeTableLocked closes an archive's files and lets go of its cache
// files, removing those no other archive holds.
func (c *Reader) closeTableLocked(t *archivedTable) error {
	var errs []error
	for _, cl := range t.closer {
		errs = append(errs, cl.Close())
	}
	t.closer, t.files = nil, nil
	for _, p := range t.cached {
		f, ok := c.mu.cache[p]
		if !ok {
			continue
		}
		if f.tables--; f.tables <= 0 {
			errs = append(errs, c.removeCachedLocked(p))
		}
	}
	t.cached = nil
	return errors.Join(errs...)
}

// removeCachedLocked removes a cache file and stops counting it.
func (c *Reader) removeCachedLocked(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("archive reader cache: %w", err)
	}
	if f, ok := c.mu.cache[path]; ok {
		c.mu.cacheUsed -= f.bytes
		delete(c.mu.cache, path)
	}
	return nil
}

// adoptCacheLocked counts the cache files a former run left in the
// folder, as used before any of this run's.
func (c *Reader) adoptCacheLocked() error {
	dir := c.cacheDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("archive reader cache: %w", err)
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("archive reader cache: %w", err)
	}
	c.mu.cache = map[string]*cacheFile{}
	for _, de := range des {
		name := de.Name()
		if !de.Type().IsRegular() || !strings.HasPrefix(name, cachePrefix) || !strings.HasSuffix(name, cacheSuffix) {
			continue // not the cache's, or a fetch (maybe another process's)
		}
		info, err := de.Info()
		if err != nil {
			continue // removed since
		}
		c.mu.cache[filepath.Join(dir, name)] = &cacheFile{bytes: info.Size()}
		c.mu.cacheUsed += info.Size()
	}
	return nil
}

// tickLocked returns the next use's order.
func (c *Reader) tickLocked() uint64 {
	c.mu.tick++
	return c.mu.tick
}
