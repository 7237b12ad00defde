package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// physTable is a live physical table, as its registry entry describes it.
type physTable struct {
	name   string
	family string
	ref    naming.Ref
	shards int
	// entry is the registry entry, shared and never changed: a new
	// read of the registry makes a new one.
	entry *registry.Entry
	// archive, when not nil, says the table was archived and deleted: it is
	// read through the archive reader (read_archive.go).
	archive *archiveRef
	// learned is when the catalog read entry from the registry (its
	// clock): a write trusts it for RouteTTL (write_fence.go).
	learned time.Time
}

// tableOf returns the table of an entry: name is the physical table that
// holds its events (registry.Entry.TableName), which a compaction's
// rewrite changes; the entry's own name (entryName) stays.
func tableOf(e registry.Entry) physTable {
	return physTable{name: e.TableName(), family: e.Family(), ref: e.Ref, shards: e.Shards(), entry: &e}
}

// catalog finds a family's physical tables through the table registry and
// makes the tables writes need.
//
// Reads keep each family's registry entries and read the family's
// registry version (one GetItem) per query, or once per context under
// WithCatalogSnapshot (a server's read request), reading the entries
// again only when the version changed (catalog_listing.go): since every
// write of an entry raises the version before it returns, a table another
// server made before the read began is never missed. The version is not
// cached across requests: no clock bound would keep that rule. Writes route events through a cache of the tables this
// engine has seen, and ask the registry only when no cached table can
// take an event.
type catalog struct {
	store storage.Store
	reg   *registry.Registry
	clock clock.Clock
	log   *slog.Logger
	// readOnly keeps the catalog from writing registry entries: tables
	// found without one are adopted in memory only.
	readOnly bool
	// readsArchives says the engine reads archived tables (Options.Archives).
	readsArchives bool
	// routeTTL is Options.RouteTTL.
	routeTTL time.Duration
	// idScheme is Options.IDScheme: the scheme of the tables it makes.
	idScheme event.IDScheme

	// creating makes concurrent writers look up or create a table once.
	creating singleflight.Group
	// listed makes concurrent readers that found one new registry version
	// read a family's entries once.
	listed singleflight.Group

	mu struct {
		sync.RWMutex
		// routes holds the live tables writes may go to, by family,
		// sorted by period start, then name.
		routes map[string][]physTable
		// adopted holds, in a read-only catalog, the tables found without
		// a registry entry, by family.
		adopted map[string][]physTable
		// listings holds each family's registry entries, as last read.
		listings map[string]*listing
		// versions coalesces the reads of each family's registry
		// version.
		versions map[string]*versionReads
	}
}

func newCatalog(store storage.Store, reg *registry.Registry, clk clock.Clock, log *slog.Logger, readOnly bool, idScheme event.IDScheme) *catalog {
	c := &catalog{store: store, reg: reg, clock: clk, log: log, readOnly: readOnly, idScheme: idScheme}
	c.mu.routes = map[string][]physTable{}
	c.mu.adopted = map[string][]physTable{}
	c.mu.listings = map[string]*listing{}
	c.mu.versions = map[string]*versionReads{}
	return c
}

// adopt registers the tables of families that exist in the store without
// a registry entry: tables made by a version of timetable before the
// registry, or by hand. A read-only catalog keeps them in memory.
func (c *catalog) adopt(ctx context.Context, families []family.Family) error {
	for _, f := range families {
		entries, err := c.reg.List(ctx, f.Name)
		if err != nil {
			return err
		}
		found, err := c.reg.Unregistered(ctx, c.store, f, entries, c.clock.Now())
		if err != nil {
			return err
		}
		for _, e := range found {
			if c.readOnly {
				c.mu.adopted[f.Name] = append(c.mu.adopted[f.Name], tableOf(e))
				continue
			}
			switch _, err := c.reg.Register(ctx, e); {
			case err == nil:
				c.log.Info("adopted table into the registry", "table", e.Name, "family", f.Name, "source", e.Source)
			case errors.Is(err, registry.ErrStale):
				// Another server adopted it first.
			default:
				return err
			}
		}
	}
	return nil
}

// tables returns the live tables of a family whose periods overlap [from,
// to], in period order: one read of the registry's version, and of its
// entries when they changed.
func (c *catalog) tables(ctx context.Context, f family.Family, from, to time.Time) ([]physTable, error) {
	ts, _, err := c.tablesAndGaps(ctx, f, from, to)
	return ts, err
}

// tablesAndGaps returns the tables tables does and the gaps of [from, to]:
// the periods of tables deleted with no archive to read (DB.archivedTable).
// Tables archived and deleted are among the tables, read through the
// archive reader.
func (c *catalog) tablesAndGaps(ctx context.Context, f family.Family, from, to time.Time) ([]physTable, []Gap, error) {
	tables, err := c.overlapping(ctx, f.Name, from, to)
	if err != nil {
		return nil, nil, err
	}
	out := make([]physTable, 0, len(tables))
	// gaps are of the tables' current generations, pending of their
	// earlier ones.
	var gaps, pending []Gap
	for _, lt := range tables {
		e := lt.entry
		past, pastGaps := pastTables(*e, c.readsArchives)
		out = append(out, past...)
		if e.Ref.Period.Overlaps(from, to) {
			pending = append(pending, pastGaps...)
		}
		if e.State.Live() {
			out = append(out, *lt)
			continue
		}
		t, gap, ok := archivedTable(*e, c.readsArchives)
		if ok {
			out = append(out, t)
		} else if gap != nil && e.Ref.Period.Overlaps(from, to) {
			gaps = append(gaps, *gap)
		}
	}
	c.mu.RLock()
	for _, t := range c.mu.adopted[f.Name] {
		if t.ref.Period.Overlaps(from, to) && !slices.ContainsFunc(out, func(o physTable) bool { return o.name == t.name }) {
			out = append(out, t)
		}
	}
	c.mu.RUnlock()
	// A live table made again under an archived one's name holds the
	// later events; the gap of an older generation is no gap of it.
	gaps = slices.DeleteFunc(gaps, func(g Gap) bool {
		return slices.ContainsFunc(out, func(o physTable) bool { return o.name == g.Table })
	})
	gaps = append(gaps, pending...)
	sortTables(out)
	return out, clipGaps(gaps, from, to), nil
}

// learn updates the write routes with entries read from the registry.
func (c *catalog) learn(fam string, entries []registry.Entry) {
	if len(entries) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ts := c.mu.routes[fam]
	now := c.clock.Now()
	for _, e := range entries {
		ts = slices.DeleteFunc(ts, func(o physTable) bool { return o.entryName() == e.Name })
		if e.State.Live() {
			t := tableOf(e)
			t.learned = now
			ts = append(ts, t)
		}
	}
	sortTables(ts)
	c.mu.routes[fam] = ts
}

// entryName returns the name of t's registry entry: the name of the table
// as made, which a rewritten table's name (name) is not.
func (t physTable) entryName() string {
	if t.entry != nil && t.entry.Name != "" {
		return t.entry.Name
	}
	return t.name
}

func sortTables(ts []physTable) {
	slices.SortFunc(ts, func(a, b physTable) int {
		if c := a.ref.Period.Start.Compare(b.ref.Period.Start); c != 0 {
			return c
		}
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return cmp.Compare(a.generation(), b.generation())
	})
}

// generation returns the generation of the table that t reads: an
// archived one's, or the entry's.
func (t physTable) generation() int64 {
	if t.archive != nil {
		return t.archive.generation
	}
	if t.entry == nil {
		return 0
	}
	return t.entry.Generation
}

// cached returns the first cached live table of a family that takes an
// event of time eventTime written at writeTime.
func (c *catalog) cached(fam string, eventTime, writeTime time.Time) (physTable, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, t := range c.mu.routes[fam] {
		if t.ref.Period.Start.After(eventTime) {
			break
		}
		if t.entry.Covers(eventTime, writeTime) {
			return t, true
		}
	}
	return physTable{}, false
}

// route returns the table an event of time eventTime written at
// writeTime goes to, making it if there is none.
//
// A registered live table whose period holds the event and whose write
// month (if it has one) holds the write takes it, whatever the family's
// period is today: after a change of period the old tables keep taking
// the events of their periods. Otherwise the family's current policy
// names a new table. Two granularities can give different periods one
// name (a day and the week starting that day, under date naming): when
// the registry has the name for another period, the new table takes the
// registered table's granularity, so the old one finishes out the new
// period it partly covers.
func (c *catalog) route(ctx context.Context, f family.Family, eventTime, writeTime time.Time) (physTable, error) {
	t, err := c.find(ctx, f, eventTime, writeTime)
	if err != nil || t.entry.State != registry.Creating {
		return t, retryable(err)
	}
	// Registered by a creator that may have stopped before making it.
	e, err := c.reg.Finish(ctx, c.store, *t.entry, c.clock.Now())
	if err != nil {
		return physTable{}, retryable(err)
	}
	c.learn(f.Name, []registry.Entry{e})
	return tableOf(e), nil
}

// retryable marks an error of the registry's entry changing under a
// write (registry.ErrStale: the lifecycle, or another server, wrote the
// table's entry meanwhile) as one a retry cures: the write is refused
// with storage.ErrUnavailable, and its retry routes from what the
// registry says then.
func retryable(err error) error {
	if errors.Is(err, registry.ErrStale) && !errors.Is(err, storage.ErrUnavailable) {
		return fmt.Errorf("%w: %w", storage.ErrUnavailable, err)
	}
	return err
}

// find is route without finishing a table left creating.
func (c *catalog) find(ctx context.Context, f family.Family, eventTime, writeTime time.Time) (physTable, error) {
	if t, ok := c.cached(f.Name, eventTime, writeTime); ok && c.fresh(t) {
		return t, checkFence(t)
	}
	ref := f.TableFor(eventTime, writeTime)
	v, err, _ := c.creating.Do(f.Name+"\x00"+f.Namer().Format(ref), func() (any, error) {
		entries, err := c.reg.Overlapping(ctx, f.Name, eventTime, eventTime)
		if err != nil {
			return nil, err
		}
		c.learn(f.Name, entries)
		if t, ok := c.cached(f.Name, eventTime, writeTime); ok {
			return t, checkFence(t)
		}
		policy := f
		policy.IDScheme = schemeFor(entries, eventTime, c.idScheme)
		for range 3 {
			ref := policy.TableFor(eventTime, writeTime)
			e, err := c.reg.Create(ctx, c.store, registry.NewEntry(policy, ref, c.clock.Now()), c.clock.Now())
			if err != nil {
				return nil, err
			}
			c.learn(f.Name, []registry.Entry{e})
			if e.Covers(eventTime, writeTime) {
				if e.Source == registry.SourceCreated && e.CreatedAt.Equal(e.UpdatedAt) {
					c.log.Info("created table", "table", e.Name, "family", f.Name, "tier", e.Tier)
				}
				return tableOf(e), nil
			}
			// The name is taken by a table of another period.
			policy.Granularity = e.Policy.Granularity
			if policy.Granularity == f.Granularity {
				break
			}
		}
		return nil, fmt.Errorf("no table can take an event of %s written %s in family %q: its name is taken by a table of another period",
			eventTime.UTC().Format(time.RFC3339Nano), writeTime.UTC().Format(time.RFC3339), f.Name)
	})
	if err != nil {
		return physTable{}, err
	}
	t := v.(physTable)
	if !t.entry.Covers(eventTime, writeTime) {
		// Shared with a caller of the same new table name whose event
		// went elsewhere: look again.
		return c.find(ctx, f, eventTime, writeTime)
	}
	return t, nil
}

// schemeFor returns the id scheme of a table to be made for an event of
// time t, given entries, the family's tables overlapping t: the scheme
// of the first table whose period holds t, or def when none does. The
// tables holding one time share its events' ids, so that a retried write
// that lands in another table than the first attempt (the next write
// month's, past a month's end) gives the event the id it has in the
// first one, and reads, which merge the tables' events by time and id,
// return it once, as they did before tables had id schemes.
func schemeFor(entries []registry.Entry, t time.Time, def event.IDScheme) event.IDScheme {
	for _, e := range entries {
		if e.Ref.Period.Contains(t) {
			return e.IDScheme()
		}
	}
	return def
}

// home returns the name of the table an event of time t written at time t
// goes to, without making it: the table a rollup of the period starting at
// t lives in.
func (c *catalog) home(f family.Family, t time.Time) string {
	if pt, ok := c.cached(f.Name, t, t); ok {
		return pt.name
	}
	return f.Namer().Format(f.TableFor(t, t))
}

// recreate makes a table found deleted while the registry had it live
// (late data for a period whose table the lifecycle just deleted) again,
// with the same name, period and policy, as the entry's next generation.
func (c *catalog) recreate(ctx context.Context, t physTable) (physTable, error) {
	now := c.clock.Now()
	cur, err := c.reg.Get(ctx, t.family, t.ref.Period.Start, t.entryName())
	if err != nil && !errors.Is(err, registry.ErrNotFound) {
		return physTable{}, err
	}
	if err == nil && cur.State.Live() && cur.TableName() != t.name {
		// A compaction rewrote the table into another and deleted it:
		// the entry names the table that holds the events now.
		c.forget(t.family, t.name)
		c.learn(t.family, []registry.Entry{cur})
		return tableOf(cur), nil
	}
	if err == nil && cur.State.Live() && cur.Generation == t.entry.Generation {
		cur.State, cur.UpdatedAt = registry.Missing, now
		if _, err := c.reg.Save(ctx, cur); err != nil && !errors.Is(err, registry.ErrStale) {
			return physTable{}, err
		}
	}
	c.forget(t.family, t.name)
	e, err := c.reg.Create(ctx, c.store, registry.NewEntry(t.entry.Policy, t.ref, now), now)
	if err != nil {
		return physTable{}, retryable(err)
	}
	c.learn(t.family, []registry.Entry{e})
	return tableOf(e), nil
}

// forgetTable drops what the engine knows of a table found deleted.
func (db *DB) forgetTable(t physTable) {
	db.catalog.forget(t.family, t.name)
	db.series.forgetTable(t.name)
}

// forget drops a table from the write routes, after it was found deleted.
func (c *catalog) forget(fam, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.routes[fam] = slices.DeleteFunc(c.mu.routes[fam], func(o physTable) bool { return o.name == name })
	c.mu.adopted[fam] = slices.DeleteFunc(c.mu.adopted[fam], func(o physTable) bool { return o.name == name })
}
