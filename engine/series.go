package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/timetabledb/timetable/storage"
)

// seriesCache remembers which series each physical table's series index is
// known to hold, so the write path adds an index entry only the first time
// it sees a series in a table. It forgets everything when it grows past
// its bound; the cost of forgetting is one extra small write per series.
type seriesCache struct {
	max int
	mu  struct {
		sync.Mutex
		known map[string]struct{}
	}
}

func newSeriesCache(max int) *seriesCache {
	c := &seriesCache{max: max}
	c.mu.known = map[string]struct{}{}
	return c
}

func seriesCacheKey(physical, tenant, table, series string) string {
	return physical + "\x00" + tenant + "\x00" + table + "\x00" + series
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
func listSeries(ctx context.Context, store storage.Items, physical, tenant, table string) ([]string, error) {
	it := store.Query(ctx, storage.Query{Table: physical, PK: seriesIndexKey(tenant, table)})
	defer it.Close()
	var out []string
	for it.Next() {
		if s, ok := strings.CutPrefix(it.Item().SK, seriesIndexPrefix); ok {
			out = append(out, s)
		}
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("read series index of %q: %w", physical, err)
	}
	return out, nil
}

// forgetTable drops what the cache knows of a physical table, after it
// was deleted.
func (c *seriesCache) forgetTable(physical string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	prefix := physical + "\x00"
	for k := range c.mu.known {
		if strings.HasPrefix(k, prefix) {
			delete(c.mu.known, k)
		}
	}
}

// seriesOf returns the series of a logical table in the series indexes
// of the physical tables, in name order, each once. A table gone since
// the registry was read holds none.
func (db *DB) seriesOf(ctx context.Context, tenant, table string, tables []physTable) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, t := range tables {
		names, err := listSeries(ctx, db.store, t.name, tenant, table)
		if errors.Is(err, storage.ErrTableNotFound) {
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
