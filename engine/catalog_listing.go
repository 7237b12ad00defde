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
	// tables are the entries, each as a table, in period order (the
	// registry's sort key order); the tables of entries not live say
	// only what their entries say.
	tables []physTable
}

// overlapping returns the tables of a family whose periods overlap the
// closed range [from, to], in period order, as Registry.Overlapping returns
// their entries, with one read of the family's registry version: the
// entries are read again only when the version changed since they were
// last read. Since every write of an entry raises the version before it
// returns, an entry another server wrote before this call began is among
// them.
//
// The tables are the listing's, shared: they must not be changed.
func (c *catalog) overlapping(ctx context.Context, fam string, from, to time.Time) ([]*physTable, error) {
	l, err := c.listing(ctx, fam)
	if err != nil {
		return nil, err
	}
	low := registry.EarliestStart(from)
	ts := l.tables
	i := sort.Search(len(ts), func(i int) bool { return !ts[i].ref.Period.Start.Before(low) })
	var out []*physTable
	for j := i; j < len(ts); j++ {
		if ts[j].ref.Period.Start.After(to) {
			break
		}
		if ts[j].ref.Period.Overlaps(from, to) {
			out = append(out, &ts[j])
		}
	}
	return out, nil
}

// listing returns a family's current listing: the one kept when its
// version is the registry's (read by a read that began after the call
// did, shared with the calls that can share it: catalog_version.go), else
// one read now and kept. Callers that
// find the same new version read the entries once between them.
func (c *catalog) listing(ctx context.Context, fam string) (*listing, error) {
	c.mu.RLock()
	vr := c.mu.versions[fam]
	c.mu.RUnlock()
	if vr == nil {
		c.mu.Lock()
		if vr = c.mu.versions[fam]; vr == nil {
			vr = &versionReads{}
			c.mu.versions[fam] = vr
		}
		c.mu.Unlock()
	}
	v, err := vr.read(ctx, func(ctx context.Context) (int64, error) { return c.reg.Version(ctx, fam) })
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
		l := &listing{version: v, tables: make([]physTable, len(entries))}
		for i, e := range entries {
			l.tables[i] = tableOf(e)
		}
		// Kept whatever the version kept was: a listing of an older
		// version that lands last is read again by the next query, and a
		// version that went back (a meta table made anew) is kept too.
		c.mu.Lock()
		c.mu.listings[fam] = l
		c.mu.Unlock()
		c.learn(fam, entries)
		return l, nil
	})
	if err != nil {
		return nil, err
	}
	return got.(*listing), nil
}
