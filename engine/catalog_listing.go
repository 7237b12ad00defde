package engine

import (
	"context"
	"sort"
	"strconv"
	"sync"
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
	snap, _ := ctx.Value(catalogSnapshotKey{}).(*catalogSnapshot)
	if snap == nil {
		return c.currentListing(ctx, fam)
	}
	snap.mu.Lock()
	l := snap.of(fam)
	snap.mu.Unlock()
	if l != nil {
		return l, nil
	}
	l, err := c.currentListing(ctx, fam)
	if err != nil {
		return nil, err
	}
	snap.mu.Lock()
	defer snap.mu.Unlock()
	// Of two first reads at once, the first kept is every later one's.
	if kept := snap.of(fam); kept != nil {
		return kept, nil
	}
	snap.keep(fam, l)
	return l, nil
}

// currentListing is listing without a catalog snapshot.
func (c *catalog) currentListing(ctx context.Context, fam string) (*listing, error) {
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

// catalogSnapshot holds the listings the reads under one context read
// (WithCatalogSnapshot): that of the first family read, and those of
// any other, by family. Its fields are guarded by mu.
type catalogSnapshot struct {
	mu    sync.Mutex
	fam   string
	first *listing
	more  map[string]*listing
}

// of returns the listing kept of fam, or nil.
func (s *catalogSnapshot) of(fam string) *listing {
	if s.first != nil && s.fam == fam {
		return s.first
	}
	return s.more[fam]
}

// keep keeps the listing of fam, which has none yet.
func (s *catalogSnapshot) keep(fam string, l *listing) {
	if s.first == nil {
		s.fam, s.first = fam, l
		return
	}
	if s.more == nil {
		s.more = map[string]*listing{}
	}
	s.more[fam] = l
}

type catalogSnapshotKey struct{}

// WithCatalogSnapshot returns a context under which the engine's reads
// read each family's registry version (and, when it changed, its
// entries) once, at the first read of the family, and every later read
// under the context shares what that one found: an aggregate and its
// gaps, or the statements of one InfluxQL request, cost one read of the
// version between them, and see one set of tables.
//
// The staleness is bounded by the context, not by a clock: the reads
// under it see every table made before the first of them began, as
// without the snapshot, and may miss one made (by this server or any
// other) after it; a context of one request therefore sees what the
// request would have seen had all its reads begun with it. Give it only
// to a context that ends (a request's), and never to one that writes:
// writes route through the catalog's own cache (RouteTTL).
func WithCatalogSnapshot(ctx context.Context) context.Context {
	return context.WithValue(ctx, catalogSnapshotKey{}, &catalogSnapshot{})
}
