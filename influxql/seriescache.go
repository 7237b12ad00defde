package influxql

import (
	"sync"
	"time"
)

// SeriesCache keeps the series index of measurements, their tags parsed,
// between queries, so that a statement on one series of a measurement of
// many does not list them all each time: a dashboard asks the same
// measurements again and again. An entry serves while the engine's
// SeriesVersion of its table is what it was when the entry was listed
// (no series new to the table was written through this process since),
// and for at most its TTL, after which series written through other
// processes on the same store are seen too. The zero value is not
// usable: NewSeriesCache.
type SeriesCache struct {
	ttl time.Duration
	max int
	now func() time.Time
	mu  sync.Mutex
	// entries by tenant and table; held is their series in all.
	entries map[string]seriesEntry
	held    int
}

// seriesEntry is one table's series as listed at version, at listed.
type seriesEntry struct {
	series  []seriesTags
	version uint64
	listed  time.Time
}

// Defaults of NewSeriesCache.
const (
	// DefaultSeriesTTL bounds how long a listing serves.
	DefaultSeriesTTL = 5 * time.Second
	// DefaultSeriesHeld bounds the series the cache holds in all, a few
	// hundred bytes each.
	DefaultSeriesHeld = 100_000
)

// NewSeriesCache returns a cache whose listings serve for at most ttl
// (DefaultSeriesTTL when zero), holding at most held series in all
// (DefaultSeriesHeld when zero); now is the clock (time.Now when nil).
func NewSeriesCache(ttl time.Duration, held int, now func() time.Time) *SeriesCache {
	if ttl <= 0 {
		ttl = DefaultSeriesTTL
	}
	if held <= 0 {
		held = DefaultSeriesHeld
	}
	if now == nil {
		now = time.Now
	}
	return &SeriesCache{ttl: ttl, max: held, now: now, entries: map[string]seriesEntry{}}
}

// clock returns the cache's time now; the zero time for no cache.
func (c *SeriesCache) clock() time.Time {
	if c == nil {
		return time.Time{}
	}
	return c.now()
}

// get returns the series of a table listed at version, when still fresh.
func (c *SeriesCache) get(tenant, table string, version uint64) ([]seriesTags, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[tenant+"\x00"+table]
	if !ok || e.version != version || c.now().Sub(e.listed) >= c.ttl {
		return nil, false
	}
	return e.series, true
}

// put keeps the series of a table, listed at version from the time
// listed; a listing larger than the whole cache is not kept, and one
// that does not fit empties it first. The slice is shared read-only
// from then on.
func (c *SeriesCache) put(tenant, table string, version uint64, listed time.Time, series []seriesTags) {
	if c == nil || len(series) > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := tenant + "\x00" + table
	if old, ok := c.entries[key]; ok {
		c.held -= len(old.series)
		delete(c.entries, key)
	}
	if c.held+len(series) > c.max {
		clear(c.entries)
		c.held = 0
	}
	c.entries[key] = seriesEntry{series: series, version: version, listed: listed}
	c.held += len(series)
}
