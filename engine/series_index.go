package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/storage"
)

// seriesCache remembers which series each physical table's series index is
// known to hold, so the write path adds an index entry only the first time
// it sees a series in a table. It forgets everything when it grows past
// its bound; the cost of forgetting is one extra small write per series.
//
// It also knows which entries a write is storing now, so that writers
// that find the same series missing at once, as every writer does with
// the first batch of a new table, write each entry once: the first
// claims it, the others wait for its write to end (claim, settle).
type seriesCache struct {
	max int
	mu  struct {
		sync.Mutex
		known map[string]struct{}
		// writing maps the key of each entry being written to its write.
		writing map[string]*indexWrite
		// versions counts, by tenant and logical table, the writes of
		// new index entries and the forgetting of them; dropped counts
		// the physical tables forgotten (SeriesVersion).
		versions map[string]uint64
		dropped  uint64
	}
}

// SeriesVersion returns a number that changes whenever this DB writes
// a new entry into the series index of a tenant's logical table (a
// series new to one of its physical tables), or forgets entries of it
// (a table purged or deleted): a list of the table's series made when it
// was v still holds while it is v, but for series written since by
// another process on the same store, which do not change it.
func (db *DB) SeriesVersion(tenant, table string) uint64 {
	c := db.series
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.versions[tenant+"\x00"+table] + c.mu.dropped
}

// indexWrite is one write of series index entries in flight. done is
// closed when it ends, after err is set: nil when the entries are
// stored.
type indexWrite struct {
	done chan struct{}
	err  error
}

func newSeriesCache(max int) *seriesCache {
	c := &seriesCache{max: max}
	c.mu.known = map[string]struct{}{}
	c.mu.writing = map[string]*indexWrite{}
	c.mu.versions = map[string]uint64{}
	return c
}

// seriesCacheKey names a series of a tenant's logical table in one
// generation of a physical table (physTable.indexed).
func seriesCacheKey(physical, tenant, table, series string) string {
	return physical + "\x00" + tenant + "\x00" + table + "\x00" + series
}

// indexed returns the name the series cache knows the table's series
// index under: its name and generation. A table made again under a
// deleted one's name (the entry's next generation, after the lifecycle
// archived and deleted the one before) starts with an empty series
// index, and a query of every series finds a table's events only through
// its index: a cache that took it for the generation before would let
// the writer store events whose series no query reads.
func (t physTable) indexed() string {
	return t.name + "\x00" + strconv.FormatInt(t.generation(), 10)
}

// forget drops the series known of a tenant's logical table, whose index
// entries were deleted: a write after must write them again.
func (c *seriesCache) forget(tenant, table string) {
	mid := "\x00" + tenant + "\x00" + table + "\x00"
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.versions[tenant+"\x00"+table]++
	for k := range c.mu.known {
		if strings.Contains(k, mid) {
			delete(c.mu.known, k)
		}
	}
}

// missing returns those of series the cache does not know in a table.
func (c *seriesCache) missing(physical, tenant, table string, series []string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, s := range series {
		if _, ok := c.mu.known[seriesCacheKey(physical, tenant, table, s)]; !ok {
			out = append(out, s)
		}
	}
	return out
}

// claim returns, of series, those whose index entries in a table the
// caller must write, now marked as being written by the returned write,
// and the writes of others storing the rest meanwhile. Series the cache
// knows are in neither. A caller that gets series to write must settle
// the write, whatever happens, before it waits for others'.
func (c *seriesCache) claim(physical, tenant, table string, series []string) (mine []string, w *indexWrite, others []*indexWrite) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range series {
		k := seriesCacheKey(physical, tenant, table, s)
		if _, ok := c.mu.known[k]; ok {
			continue
		}
		if o, ok := c.mu.writing[k]; ok {
			if !slices.Contains(others, o) {
				others = append(others, o)
			}
			continue
		}
		if w == nil {
			w = &indexWrite{done: make(chan struct{})}
		}
		c.mu.writing[k] = w
		mine = append(mine, s)
	}
	return mine, w, others
}

// settle ends w, the write of the claimed series' entries in a table,
// which err failed unless nil: the series are known from now on when it
// succeeded, and left for a later write to claim again when it failed.
func (c *seriesCache) settle(w *indexWrite, physical, tenant, table string, series []string, err error) {
	if w == nil {
		return
	}
	c.mu.Lock()
	for _, s := range series {
		delete(c.mu.writing, seriesCacheKey(physical, tenant, table, s))
	}
	if err == nil && len(series) > 0 {
		c.mu.versions[tenant+"\x00"+table]++
	}
	c.mu.Unlock()
	if err == nil {
		c.add(physical, tenant, table, series)
	}
	w.err = err
	close(w.done)
}

// add records series as present in a table's index.
func (c *seriesCache) add(physical, tenant, table string, series []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.mu.known)+len(series) > c.max {
		c.mu.known = map[string]struct{}{}
	}
	for _, s := range series {
		c.mu.known[seriesCacheKey(physical, tenant, table, s)] = struct{}{}
	}
}

// listSeries reads the series index of a logical table in one physical
// table.
func listSeries(ctx context.Context, store itemQuerier, physical, tenant, table string) ([]string, error) {
	it := store.Query(ctx, storage.Query{Table: physical, PK: itemenc.SeriesIndexKey(tenant, table)})
	defer it.Close()
	var out []string
	for it.Next() {
		if s, ok := strings.CutPrefix(it.Item().SK, itemenc.SeriesIndexPrefix); ok {
			out = append(out, s)
		}
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("read series index of %q: %w", physical, err)
	}
	return out, nil
}

// forgetTable drops what the cache knows of every generation of a
// physical table, after it was deleted.
func (c *seriesCache) forgetTable(physical string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.dropped++
	prefix := physical + "\x00"
	for k := range c.mu.known {
		if strings.HasPrefix(k, prefix) {
			delete(c.mu.known, k)
		}
	}
}

// Defaults of ListSeries.
const (
	// DefaultSeriesLimit is the page size of ListSeries when it sets none.
	DefaultSeriesLimit = 1000
	// MaxSeriesLimit caps the page size of ListSeries.
	MaxSeriesLimit = 10000
)

// SeriesPage is a page of a logical table's series, in bytewise order.
type SeriesPage struct {
	Series []string
	// Next is the last series of the page when more follow, to pass as
	// the next call's after; "" on the last page.
	Next string
}

// ListSeries returns the series of a tenant's logical table that start
// with prefix and sort after after, at most limit of them
// (DefaultSeriesLimit when zero, at most MaxSeriesLimit). A table's series
// are those of the series indexes of the physical tables its events went
// to, within the range of event times the table records: one Query per
// physical table, each reading at most limit+1 entries, merged. A table
// archived and deleted lists its series from its archive
// (Options.Archives), as a read of it does, so that an archived period
// lists the series it listed before.
func (db *DB) ListSeries(ctx context.Context, tenant, table, prefix, after string, limit int) (SeriesPage, error) {
	done, err := db.enter()
	if err != nil {
		return SeriesPage{}, err
	}
	defer done()
	if err := checkTableName(table); err != nil {
		return SeriesPage{}, err
	}
	switch {
	case limit < 0 || limit > MaxSeriesLimit:
		return SeriesPage{}, fmt.Errorf("%w: limit %d: use 1 to %d", ErrBadQuery, limit, MaxSeriesLimit)
	case limit == 0:
		limit = DefaultSeriesLimit
	}
	lt, err := db.meta.logicalTable(ctx, tenant, table)
	if err != nil {
		return SeriesPage{}, err
	}
	from, to := lt.First, lt.Last
	if from.IsZero() || to.IsZero() {
		// Written before ranges were recorded: every table of the family.
		from, to = time.Unix(0, 0), db.opts.Clock.Now().Add(db.opts.Limits.MaxFutureSkew+24*time.Hour)
	}
	tables, err := db.catalog.tables(ctx, db.opts.Schema.Family(table), from, to)
	if err != nil {
		return SeriesPage{}, fmt.Errorf("list series of %q: %w", table, err)
	}
	q := storage.Query{PK: itemenc.SeriesIndexKey(tenant, table), Low: itemenc.SeriesIndexPrefix + prefix, Limit: limit + 1}
	if prefix != "" {
		q.High = itemenc.SeriesIndexPrefix + prefix + string(utf8.MaxRune)
	}
	if after != "" && itemenc.SeriesIndexPrefix+after >= q.Low {
		q.After = itemenc.SeriesIndexPrefix + after
	}
	var mu sync.Mutex
	found := map[string]struct{}{}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(db.opts.QueryParallelism)
	for _, t := range tables {
		g.Go(func() error {
			q := q
			q.Table = t.name
			it := db.itemsOf(t).Query(gctx, q)
			defer it.Close()
			var got []string
			for it.Next() {
				if s, ok := strings.CutPrefix(it.Item().SK, itemenc.SeriesIndexPrefix); ok && strings.HasPrefix(s, prefix) {
					got = append(got, s)
				}
			}
			if err := it.Err(); err != nil && (t.archive != nil || !errors.Is(err, storage.ErrTableNotFound)) {
				return fmt.Errorf("read series index of %q: %w", t.name, err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, s := range got {
				found[s] = struct{}{}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return SeriesPage{}, err
	}
	// Each table gave its first limit+1: the first limit of the union
	// are the first limit of the table's series, and more follow exactly
	// when the union has more.
	series := slices.Sorted(maps.Keys(found))
	page := SeriesPage{Series: series}
	if len(series) > limit {
		page.Series = series[:limit]
		page.Next = series[limit-1]
	}
	if page.Series == nil {
		page.Series = []string{}
	}
	return page, nil
}

// seriesOf returns the series of a logical table in the series indexes
// of the physical tables, in name order, each once: an archived table's
// from its archive. A table gone since the registry was read holds none.
func (db *DB) seriesOf(ctx context.Context, tenant, table string, tables []physTable) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, t := range tables {
		names, err := listSeries(ctx, db.itemsOf(t), t.name, tenant, table)
		if errors.Is(err, storage.ErrTableNotFound) && t.archive == nil {
			db.forgetTable(t)
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, s := range names {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}
