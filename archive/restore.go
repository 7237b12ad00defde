package archive

import (
	"context"
	"errors"
	"fmt"

	"github.com/timetabledb/timetable/storage"
)

// Restore writes the items of table's archive back into the table named
// into (table itself when into is empty), creating it with the archived
// table's tags, so that the engine's catalog recognizes it and queries see
// its events again. The archive is read twice: first checked whole against
// its manifest, so that nothing is written from a damaged archive, then
// written. Items replace those of the same key, so a restore that was
// interrupted can simply be run again.
//
// The table is created with Options.RestoreCapacity (on-demand by default)
// and without TTL, so that restored items with an expiry in the past are
// not deleted again by DynamoDB.
func (a *Archiver) Restore(ctx context.Context, table, into string) error {
	if into == "" {
		into = table
	}
	if err := checkTableName(into); err != nil {
		return err
	}
	m, err := a.Manifest(ctx, table)
	if err != nil {
		return fmt.Errorf("restore %q: %w", table, err)
	}
	got, err := a.readBack(ctx, table, nil)
	if err != nil {
		return fmt.Errorf("restore %q: %w", table, err)
	}
	if err := compare("manifest", m, got); err != nil {
		return fmt.Errorf("restore %q: %w", table, err)
	}

	spec := storage.TableSpec{Name: into, Capacity: a.opts.RestoreCapacity, Tags: m.Tags}
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
	_, err = a.readBack(ctx, table, func(it storage.Item) error {
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
	a.opts.Logger.Info("restored table", "table", table, "into", into, "items", m.ItemCount)
	return nil
}
