package archive

import (
	"context"
	"errors"
	"fmt"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
)

// Restore writes the items of table's archives back into the table named
// into (table itself when into is empty), creating it with the archived
// table's tags, so that the engine's catalog recognizes it and queries see
// its events again. Every generation's archive is restored, oldest first:
// the tables once made under one name held events of one period. Each
// archive is read twice: first checked whole against its manifest, so
// that nothing is written from a damaged archive, then written. Items
// replace those of the same key, so a restore that was interrupted can
// simply be run again.
//
// The table is created with Options.RestoreCapacity (on-demand by default)
// and without TTL, and the items' TTL attribute (family.TTLAttribute) is
// removed, so that DynamoDB does not delete restored items whose expiry
// is past. Registering the table as restored, so that the lifecycle
// manager keeps it for a while, is the caller's (registry.MarkRestored;
// `timetable archive restore --keep`).
func (a *Archiver) Restore(ctx context.Context, table, into string) error {
	if into == "" {
		into = table
	}
	if err := checkTableName(into); err != nil {
		return err
	}
	ms, err := a.generations(ctx, table)
	if err != nil {
		return fmt.Errorf("restore %q: %w", table, err)
	}
	for _, m := range ms {
		got, err := a.readBack(ctx, m, nil)
		if err != nil {
			return fmt.Errorf("restore %q: %w", table, err)
		}
		if err := compare("manifest", m, got); err != nil {
			return fmt.Errorf("restore %q: %w", table, err)
		}
	}

	spec := storage.TableSpec{Name: into, Capacity: a.opts.RestoreCapacity, Tags: ms[len(ms)-1].Tags}
	if err := a.store.CreateTable(ctx, spec); err != nil && !errors.Is(err, storage.ErrTableExists) {
		return fmt.Errorf("restore %q into %q: %w", table, into, err)
	}
	batch := make([]storage.Item, 0, a.opts.RestoreBatch)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := a.store.BatchWrite(ctx, into, batch); err != nil {
			return err
		}
		a.opts.Progress(len(batch))
		batch = batch[:0]
		return nil
	}
	var items int64
	for _, m := range ms {
		_, err = a.readBack(ctx, m, func(it storage.Item) error {
			// The items' expiry stamps are in the past: a table with TTL
			// enabled would lose them again.
			delete(it.Attrs, family.TTLAttribute)
			batch = append(batch, it)
			if len(batch) == cap(batch) {
				return flush()
			}
			return nil
		})
		if err == nil {
			err = flush()
		}
		if err != nil {
			return fmt.Errorf("restore %q into %q: %w", table, into, err)
		}
		items += m.ItemCount
	}
	a.opts.Logger.Info("restored table", "table", table, "into", into, "generations", len(ms), "items", items)
	return nil
}

// generations returns the manifests of table's archives, oldest
// generation first, or an error wrapping ErrNotFound when it has none.
// It looks for generations 1 to the registry's current one.
func (a *Archiver) generations(ctx context.Context, table string) ([]Manifest, error) {
	if err := checkTableName(table); err != nil {
		return nil, err
	}
	last, err := a.generation(ctx, table)
	if err != nil {
		return nil, err
	}
	var ms []Manifest
	for g := int64(1); g <= last; g++ {
		m, err := a.readManifest(ctx, manifestKey(table, g))
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("%w: no archive of %q", ErrNotFound, table)
	}
	return ms, nil
}
