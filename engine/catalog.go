package engine

import (
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
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/storage"
)

// physTable is a physical table the catalog knows.
type physTable struct {
	name   string
	family string
	ref    naming.Ref
	shards int
	status storage.Status
	// added is the catalog's generation when add recorded the table.
	added uint64
}

// catalog caches the physical tables of every family, sorted by period,
// and creates missing ones.
type catalog struct {
	store    storage.Store
	families map[string]family.Family
	clock    clock.Clock
	log      *slog.Logger

	// creating makes concurrent writers create a table once.
	creating singleflight.Group
	// onGone, when set, is told the name of a table a listing found
	// deleted.
	onGone func(name string)

	mu struct {
		sync.RWMutex
		// tables holds each family's tables, sorted by period start, then
		// name.
		tables map[string][]physTable
		// refreshed is when each family was last listed.
		refreshed map[string]time.Time
		// gen counts the tables add has recorded; each table keeps the
		// count at its addition, so a listing can tell tables made while
		// it ran from tables deleted since the last one.
		gen uint64
	}
}

func newCatalog(store storage.Store, families []family.Family, clk clock.Clock, log *slog.Logger) *catalog {
	c := &catalog{store: store, families: map[string]family.Family{}, clock: clk, log: log}
	for _, f := range families {
		c.families[f.Name] = f
	}
	c.mu.tables = map[string][]physTable{}
	c.mu.refreshed = map[string]time.Time{}
	return c
}

// refreshAll lists the tables of every family.
func (c *catalog) refreshAll(ctx context.Context) error {
	for _, f := range c.families {
		if err := c.refresh(ctx, f); err != nil {
			return err
		}
	}
	return nil
}

// refresh lists a family's tables and replaces its part of the catalog.
// The listing starts at the family's first possible name (the naming
// scheme's exclusive start for the epoch), so it reads the family's
// tables and never the rest of the account.
func (c *catalog) refresh(ctx context.Context, f family.Family) error {
	namer := f.Namer()
	start := c.clock.Now()
	c.mu.RLock()
	gen := c.mu.gen
	known := map[string]physTable{}
	for _, t := range c.mu.tables[f.Name] {
		known[t.name] = t
	}
	c.mu.RUnlock()

	var found []physTable
	var listErr error
	err := c.store.ListTables(ctx, namer.ListFrom(time.Unix(0, 0).UTC()), func(name string) bool {
		if !strings.HasPrefix(name, f.Prefix) {
			return name < f.Prefix
		}
		ref, err := namer.Parse(name)
		if err != nil {
			return true // not ours: never touched
		}
		if t, ok := known[name]; ok && t.status == storage.StatusActive {
			found = append(found, t)
			return true
		}
		t, err := c.describe(ctx, f, name, ref)
		if errors.Is(err, storage.ErrTableNotFound) {
			return true // deleted while we listed
		}
		if err != nil {
			listErr = err
			return false
		}
		found = append(found, t)
		return true
	})
	if err == nil {
		err = listErr
	}
	if err != nil {
		return fmt.Errorf("list tables of family %q: %w", f.Name, err)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	listed := make(map[string]bool, len(found))
	for _, t := range found {
		listed[t.name] = true
	}
	for _, t := range c.mu.tables[f.Name] {
		switch {
		case listed[t.name]:
		case t.added > gen:
			// Made by this engine while the listing ran.
			found = append(found, t)
		case c.onGone != nil:
			// Deleted by another process since the last listing.
			c.onGone(t.name)
		}
	}
	sortTables(found)
	c.mu.tables[f.Name] = found
	c.mu.refreshed[f.Name] = start
	return nil
}

func sortTables(ts []physTable) {
	slices.SortFunc(ts, func(a, b physTable) int {
		if c := a.ref.Period.Start.Compare(b.ref.Period.Start); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
}

func (c *catalog) describe(ctx context.Context, f family.Family, name string, ref naming.Ref) (physTable, error) {
	info, err := c.store.DescribeTable(ctx, name)
	if err != nil {
		return physTable{}, err
	}
	return physTable{name: name, family: f.Name, ref: ref, shards: f.ShardsOf(info.Tags), status: info.Status}, nil
}

// tables returns the tables of a family whose periods overlap [from, to],
// in period order, listing them again first when the cached list is older
// than maxAge.
func (c *catalog) tables(ctx context.Context, f family.Family, from, to time.Time, maxAge time.Duration) ([]physTable, error) {
	c.mu.RLock()
	stale := c.clock.Now().Sub(c.mu.refreshed[f.Name]) > maxAge
	c.mu.RUnlock()
	if stale {
		// The listing starts at the family's prefix: it reads the
		// family's tables and never the rest of the account.
		if err := c.refresh(ctx, f); err != nil {
			return nil, err
		}
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	all := c.mu.tables[f.Name]
	i, _ := slices.BinarySearchFunc(all, from, func(t physTable, from time.Time) int {
		if !t.ref.Period.End.After(from) {
			return -1
		}
		return 1
	})
	var out []physTable
	for _, t := range all[i:] {
		if t.ref.Period.Start.After(to) {
			break
		}
		if t.ref.Period.Overlaps(from, to) {
			out = append(out, t)
		}
	}
	return out, nil
}

// ensure returns the table ref of a family, creating it if it is missing:
// a table for late data is made on demand. Concurrent callers create it
// once.
func (c *catalog) ensure(ctx context.Context, f family.Family, ref naming.Ref) (physTable, error) {
	name := f.Namer().Format(ref)
	if t, ok := c.lookup(f.Name, name); ok && t.status == storage.StatusActive {
		return t, nil
	}
	v, err, _ := c.creating.Do(name, func() (any, error) {
		if t, ok := c.lookup(f.Name, name); ok && t.status == storage.StatusActive {
			return t, nil
		}
		spec := f.Spec(ref, f.TierAt(ref, c.clock.Now()))
		err := c.store.CreateTable(ctx, spec)
		switch {
		case err == nil:
			c.log.Info("created table", "table", name, "family", f.Name, "tier", spec.Tags[family.TagTier])
		case errors.Is(err, storage.ErrTableExists):
		default:
			return nil, fmt.Errorf("create table %q: %w", name, err)
		}
		t, err := c.describe(ctx, f, name, ref)
		if err != nil {
			return nil, fmt.Errorf("describe table %q: %w", name, err)
		}
		c.add(t)
		return t, nil
	})
	if err != nil {
		return physTable{}, err
	}
	return v.(physTable), nil
}

func (c *catalog) lookup(fam, name string) (physTable, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, t := range c.mu.tables[fam] {
		if t.name == name {
			return t, true
		}
	}
	return physTable{}, false
}

func (c *catalog) add(t physTable) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.gen++
	t.added = c.mu.gen
	ts := slices.DeleteFunc(c.mu.tables[t.family], func(o physTable) bool { return o.name == t.name })
	ts = append(ts, t)
	sortTables(ts)
	c.mu.tables[t.family] = ts
}

// forgetTable drops what the engine knows of a table found deleted.
func (db *DB) forgetTable(t physTable) {
	db.catalog.forget(t.family, t.name)
	db.series.forgetTable(t.name)
}

// forget drops a table from the catalog, after it was deleted.
func (c *catalog) forget(fam, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.tables[fam] = slices.DeleteFunc(c.mu.tables[fam], func(o physTable) bool { return o.name == name })
}
