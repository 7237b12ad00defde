package registry

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
)

// Creator is what Create needs of a store: making tables, besides the
// registry's items.
type Creator interface {
	CreateTable(ctx context.Context, spec storage.TableSpec) error
}

// Create makes the table of an entry from NewEntry: it registers it (state
// creating), creates the table and waits for it, and marks the entry
// active. It returns the entry the table has: when another caller
// registered a live table of that name first, that caller's entry, which
// may hold another period (two granularities can name a table alike), so
// callers check what it covers. A table of that name that is gone is made
// again as the entry's next generation, with the id scheme of the
// generation before it rather than e's: a retried write of an event of
// that generation, read back from its archive beside the new one, then
// computes the id it was stored under. Running Create again after a
// failure finishes the job: a table left creating is created and marked
// active by whoever comes next.
func (r *Registry) Create(ctx context.Context, store Creator, e Entry, now time.Time) (Entry, error) {
	for range 4 {
		registered, err := r.Register(ctx, e)
		if err == nil {
			return r.Finish(ctx, store, registered, now)
		}
		if !errors.Is(err, ErrStale) {
			return Entry{}, err
		}
		cur, err := r.Get(ctx, e.Policy.Name, e.Ref.Period.Start, e.Name)
		if errors.Is(err, ErrNotFound) {
			continue // deleted in between: register anew
		}
		if err != nil {
			return Entry{}, err
		}
		if cur.State.Live() {
			return r.Finish(ctx, store, cur, now)
		}
		e = cur.next(e)
		e.Policy.IDScheme = cur.IDScheme()
	}
	return Entry{}, fmt.Errorf("create table %q: the registry entry keeps changing", e.Name)
}

// Finish creates the table of an entry left creating (its creator may
// have stopped between registering and creating it) and marks it active;
// it returns any other entry as it is. A table being created by another
// caller is waited for. When the store refuses the table, the entry keeps
// the reason (CreateError), so that listings of the registry show why the
// table is still creating; an entry that cannot be updated either (the
// store is down) is left as it was. An entry another caller wrote
// meanwhile is read again: marked active by them, it is returned; gone
// to another state or generation, Finish fails with an error wrapping
// ErrStale.
func (r *Registry) Finish(ctx context.Context, store Creator, e Entry, now time.Time) (Entry, error) {
	for range 4 {
		done, err := r.finish(ctx, store, e, now)
		if !errors.Is(err, ErrStale) {
			return done, err
		}
		cur, gerr := r.Get(ctx, e.Policy.Name, e.Ref.Period.Start, e.Name)
		if gerr != nil || cur.Generation != e.Generation || !cur.State.Live() {
			return Entry{}, err
		}
		e = cur
	}
	return Entry{}, fmt.Errorf("create table %q: the registry entry keeps changing: %w", e.Name, ErrStale)
}

func (r *Registry) finish(ctx context.Context, store Creator, e Entry, now time.Time) (Entry, error) {
	if e.State != Creating {
		return e, nil
	}
	if err := store.CreateTable(ctx, r.spec(e)); err != nil && !errors.Is(err, storage.ErrTableExists) {
		err = fmt.Errorf("create table %q: %w", e.Name, err)
		if ctx.Err() == nil && e.CreateError != err.Error() {
			e.CreateError, e.UpdatedAt = err.Error(), now.UTC()
			if _, serr := r.Save(ctx, e); serr != nil && !errors.Is(serr, ErrStale) {
				err = errors.Join(err, serr)
			}
		}
		return Entry{}, err
	}
	e.State, e.CreateError, e.UpdatedAt = Active, "", now.UTC()
	return r.Save(ctx, e)
}

// spec returns the specification an entry's table is created with: the
// entry's, tagged with this registry's meta table (family.TagMeta), which
// proves the table is this deployment's should its entry ever be lost.
func (r *Registry) spec(e Entry) storage.TableSpec {
	spec := e.Spec()
	tags := make(map[string]string, len(spec.Tags)+1)
	maps.Copy(tags, spec.Tags)
	tags[family.TagMeta] = r.table
	spec.Tags = tags
	return spec
}

// CreateRewriteTable creates the table named name that a compaction
// rewrites the table of entry e into (Entry.Rewrite): e's specification
// (the capacity and class its tier was last given, its tags with this
// registry's meta table, family.TagMeta) under the new name, through the
// store's CreateTable as every table timetable makes. A table of that
// name that exists already (a rewrite resumed) is no error.
func (r *Registry) CreateRewriteTable(ctx context.Context, store Creator, e Entry, name string) error {
	spec := r.spec(e)
	spec.Name = name
	if err := store.CreateTable(ctx, spec); err != nil && !errors.Is(err, storage.ErrTableExists) {
		return fmt.Errorf("create table %q to rewrite %q into: %w", name, e.TableName(), err)
	}
	return nil
}
