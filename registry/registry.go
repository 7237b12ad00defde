package registry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/timetabledb/timetable/metatable"
	"github.com/timetabledb/timetable/storage"
)

// Errors of the registry.
var (
	// ErrNotFound is returned for a table the registry has no entry for.
	ErrNotFound = errors.New("timetable: table not in the registry")
	// ErrStale is returned by Save when the entry changed generation
	// since it was read, and by Register when another caller registered
	// the table first.
	ErrStale = errors.New("timetable: registry entry changed since it was read")
)

// Store is what the registry needs of a store: the items of the meta
// table.
type Store interface {
	GetItem(ctx context.Context, table, pk, sk string) (storage.Item, error)
	Update(ctx context.Context, u storage.Update) error
	Query(ctx context.Context, q storage.Query) storage.Iterator
}

// Registry reads and writes the entries of one meta table. Its methods
// may be called from any number of goroutines at once.
type Registry struct {
	store Store
	table string
}

// New returns the registry kept in the meta table of a store. The table
// must exist when the registry is used.
func New(store Store, metaTable string) *Registry {
	return &Registry{store: store, table: metaTable}
}

// Table returns the name of the meta table.
func (r *Registry) Table() string { return r.table }

// List returns every entry of a family, in any state, in period order.
func (r *Registry) List(ctx context.Context, family string) ([]Entry, error) {
	return r.query(ctx, storage.Query{Table: r.table, PK: metatable.RegistryPK(family)})
}

// Overlapping returns the entries of a family, in any state, whose
// periods overlap the closed range [from, to], in period order. It is one
// Query of the meta table.
func (r *Registry) Overlapping(ctx context.Context, family string, from, to time.Time) ([]Entry, error) {
	es, err := r.query(ctx, storage.Query{Table: r.table, PK: metatable.RegistryPK(family), Low: metatable.RegistryStart(EarliestStart(from)), High: metatable.RegistryHigh(to)})
	if err != nil {
		return nil, err
	}
	out := es[:0]
	for _, e := range es {
		if e.Ref.Period.Overlaps(from, to) {
			out = append(out, e)
		}
	}
	return out, nil
}

func (r *Registry) query(ctx context.Context, q storage.Query) ([]Entry, error) {
	it := r.store.Query(ctx, q)
	defer it.Close()
	var out []Entry
	for it.Next() {
		e, err := decode(it.Item().Attrs)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("read table registry: %w", err)
	}
	return out, nil
}

// Get returns the entry of the table name of family, whose period starts
// at start, or an error wrapping ErrNotFound.
func (r *Registry) Get(ctx context.Context, family string, start time.Time, name string) (Entry, error) {
	item, err := r.store.GetItem(ctx, r.table, metatable.RegistryPK(family), metatable.RegistrySK(start, name))
	if errors.Is(err, storage.ErrItemNotFound) {
		return Entry{}, fmt.Errorf("table %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return Entry{}, fmt.Errorf("read registry entry of %q: %w", name, err)
	}
	return decode(item.Attrs)
}

// Find returns the entry of the table name (its Name, or the table a
// compaction rewrote it into, TableName), looked for among the entries of
// the given families (one Query each, until found), and whether there is
// one.
func (r *Registry) Find(ctx context.Context, families []string, name string) (Entry, bool, error) {
	for _, f := range families {
		es, err := r.List(ctx, f)
		if err != nil {
			return Entry{}, false, err
		}
		for _, e := range es {
			if e.Name == name || e.TableName() == name {
				return e, true, nil
			}
		}
	}
	return Entry{}, false, nil
}

// Finder returns Find over the given families, in the form
// archive.Options.Facts takes.
func (r *Registry) Finder(families []string) func(ctx context.Context, name string) (Entry, bool, error) {
	return func(ctx context.Context, name string) (Entry, bool, error) {
		return r.Find(ctx, families, name)
	}
}

// MarkRestored records that the table of entry e was restored from its
// archive, into the physical table named table (e's name, or the table a
// compaction had rewritten it into), with capacity c and no TTL, to be
// kept until until: the lifecycle manager leaves it alone until then, and
// deletes it again after (its archive is still verified). The entry
// names table as its physical table (Entry.TableName), so that reads find
// the restored items. It returns the entry written.
func (r *Registry) MarkRestored(ctx context.Context, e Entry, table string, c storage.Capacity, until, now time.Time) (Entry, error) {
	e.State, e.RestoredUntil, e.UpdatedAt = Restored, until.UTC(), now.UTC()
	e.Capacity, e.TTLAttribute = c, ""
	e.Physical, e.Rewrite = table, nil
	if table == e.Name {
		e.Physical = ""
	}
	saved, err := r.Save(ctx, e)
	if err != nil {
		return Entry{}, fmt.Errorf("mark %q restored: %w", e.Name, err)
	}
	return saved, nil
}

// Register writes the entry of a table about to be made: generation 1
// when the registry has no entry of that name, or the next generation of
// one whose table is gone (Entry.next, which keeps the revision the
// entry of the generation before was read at: it is registered only if
// that entry did not change since). It fails with an error wrapping
// ErrStale when another caller registered it first: read the entry that
// won with Get. It returns the entry written, at revision e.Revision+1.
func (r *Registry) Register(ctx context.Context, e Entry) (Entry, error) {
	cond := []storage.Cond{storage.NotExists(storage.PKAttr)}
	if e.Generation > 1 {
		cond = []storage.Cond{storage.Exists(storage.PKAttr), storage.AtMost(attrGeneration, number(e.Generation-1)), atRevision(e.Revision)}
	}
	return r.write(ctx, e, cond)
}

// Save writes an entry read from the registry back with its changes, as
// revision e.Revision+1. It fails with an error wrapping ErrStale when
// the entry was written since it was read (its revision is not
// e.Revision): of two writers of one entry read at one revision, such as
// two reconcilers acting on the same plan, or a reconciler and a server
// making the table again, one wins and the other reads it again, rather
// than writing back what it read over what the other wrote (a fence, an
// archive, a deletion, a next generation). It returns the entry written,
// at its new revision, which a caller saves again after changing it.
func (r *Registry) Save(ctx context.Context, e Entry) (Entry, error) {
	return r.write(ctx, e, []storage.Cond{storage.Exists(storage.PKAttr), storage.AtMost(attrGeneration, number(e.Generation)), atRevision(e.Revision)})
}

// atRevision is the condition that an entry is at revision n: it has no
// revision when n is 0 (an entry written before revisions).
func atRevision(n int64) storage.Cond {
	if n == 0 {
		return storage.NotExists(attrRevision)
	}
	return storage.Equal(attrRevision, number(n))
}

// write writes e under cond, and returns it at its new revision.
func (r *Registry) write(ctx context.Context, e Entry, cond []storage.Cond) (Entry, error) {
	attrs, err := e.attrs()
	if err != nil {
		return Entry{}, err
	}
	u := storage.Update{Table: r.table, PK: metatable.RegistryPK(e.Policy.Name), SK: metatable.RegistrySK(e.Ref.Period.Start, e.Name), Conds: cond}
	for _, k := range attrOrder {
		u.Actions = append(u.Actions, storage.Set(k, attrs[k]))
	}
	err = r.store.Update(ctx, u)
	if errors.Is(err, storage.ErrConditionFailed) {
		return Entry{}, fmt.Errorf("registry entry of %q, generation %d: %w", e.Name, e.Generation, ErrStale)
	}
	if err != nil {
		return Entry{}, fmt.Errorf("write registry entry of %q: %w", e.Name, err)
	}
	if err := r.bump(ctx, e.Policy.Name); err != nil {
		return Entry{}, fmt.Errorf("write registry entry of %q: %w", e.Name, err)
	}
	e.Revision++
	return e, nil
}

// attrOrder lists an entry's attributes in the order they are written.
var attrOrder = []string{
	attrName, attrFamily, attrState, attrGeneration, attrStart, attrEnd, attrWriteMonth, attrPolicy,
	attrShards, attrLayout, attrIDScheme, attrTier, attrBilling, attrRead, attrWrite, attrTTL, attrCreated, attrUpdated,
	attrTarget, attrArchived, attrRestored, attrSource, attrCreateErr, attrFenced, attrChunked, attrCompactPK, attrCompactSK,
	attrClass, attrMaxRead, attrMaxWrite, attrWarmRead, attrWarmWrite, attrClassChg, attrClassIgn, attrPast, attrPhysical, attrRewrite, attrRewriteErr, attrRevision,
}
