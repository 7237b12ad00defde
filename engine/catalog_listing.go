package engine

import (
	"context"
	"sort"
	"strconv"
	"time"

	"github.com/timetabledb/timetable/registry"
)

// listing is a family's registry entries as read at one version of the
// family's registry (registry.Version): current for as long as the
// version is unchanged.
type listing struct {
	version int64
	// entries are in period order (the registry's sort key order).
	entries []registry.Entry
}

// overlapping returns the entries of a family whose periods overlap the
// closed range [from, to], in period order, as Registry.Overlapping does,
// with one read of the family's registry version: the entries are read
// again only when the version changed since they were last read. Since
// every write of an entry raises the version before it returns, an entry
// another server wrote before this call began is among them.
//
// The returned slice is the caller's; the entries' own fields are shared
// and must not be changed.
func (c *catalog) overlapping(ctx context.Context, fam string, from, to time.Time) ([]registry.Entry, error) {
	l, err := c.listing(ctx, fam)
	if err != nil {
		return nil, err
	}
	low := from.Add(-registry.MaxPeriod)
	if low.After(from) { // overflow near the zero time
		low = time.Time{}
	}
	i := sort.Search(len(l.entries), func(i int) bool { return !l.entries[i].Ref.Period.Start.Before(low) })
	var out []registry.Entry
	for _, e := range l.entries[i:] {
		if e.Ref.Period.Start.After(to) {
			break
		}
		if e.Ref.Period.Overlaps(from, to) {
			out = append(out, e)
		}
	}
	return out, nil
}

// listing returns a family's current listing: the one kept when its
// version is the registry's, else one read now and kept. Callers that
// find the same new version read the entries once between them.
func (c *catalog) listing(ctx context.Context, fam string) (*listing, error) {
	v, err := c.reg.Version(ctx, fam)
	if err != nil {
		return nil, err
	}
	c.mu.RLock()
	l := c.mu.listings[fam]
	c.mu.RUnlock()
	if l != nil && l.version == v {
		return l, nil
	}
	got, err, _ := c.listed.Do(fam+"\x00"+strconv.FormatInt(v, 10), func() (any, error) {
		// Read after the version: the entries are at least as new as v.
		entries, err := c.reg.List(ctx, fam)
		if err != nil {
			return nil, err
		}
		l := &listing{version: v, entries: entries}
		c.mu.Lock()
		if cur := c.mu.listings[fam]; cur == nil || cur.version < v {
			c.mu.listings[fam] = l
		}
		c.mu.Unlock()
		c.learn(fam, entries)
		return l, nil
	})
	if err != nil {
		return nil, err
	}
	return got.(*listing), nil
}
