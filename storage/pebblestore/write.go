package pebblestore

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/timetabledb/timetable/storage"
)

// BatchWrite puts the items into the table in one Pebble batch committed
// with Sync: it returns nil once every item is on disk, and on any error
// no item is written and the *storage.BatchWriteError lists every index. An
// item storage.Item.Validate refuses, as DynamoDB would, fails the call
// with an error wrapping storage.ErrInvalid. Of two items with the same
// key in one call, the later wins.
func (s *Store) BatchWrite(ctx context.Context, tableName string, items []storage.Item) error {
	if err := s.gate.Enter(); err != nil {
		return writeError(tableName, len(items), err)
	}
	defer s.gate.Exit()
	if err := ctx.Err(); err != nil {
		return writeError(tableName, len(items), err)
	}
	t := s.catalog.lookup(tableName)
	if t == nil {
		return writeError(tableName, len(items), storage.ErrTableNotFound)
	}
	if len(items) == 0 {
		return nil
	}

	b := s.db.NewBatch()
	defer b.Close()
	var key, val []byte
	for i, it := range items {
		var err error
		if key, val, err = encodeItem(key[:0], val[:0], t.id, it); err != nil {
			return writeError(tableName, len(items), fmt.Errorf("item %d (%q, %q): %w", i, it.PK, it.SK, err))
		}
		if err := b.Set(key, val, nil); err != nil {
			return writeError(tableName, len(items), err)
		}
	}

	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.dropped {
		return writeError(tableName, len(items), storage.ErrTableNotFound)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return writeError(tableName, len(items), err)
	}
	return nil
}

// encodeItem validates the item and appends its key and value to key and
// val.
func encodeItem(key, val []byte, id uint64, it storage.Item) ([]byte, []byte, error) {
	if err := it.Validate(); err != nil {
		return key, val, err
	}
	val, err := appendItem(val, it.Attrs)
	if err != nil {
		return key, val, err
	}
	return appendItemKey(key, id, it.PK, it.SK), val, nil
}

// writeError reports that none of n items or keys was written.
func writeError(table string, n int, err error) *storage.BatchWriteError {
	unwritten := make([]int, n)
	for i := range unwritten {
		unwritten[i] = i
	}
	return &storage.BatchWriteError{Table: table, Unwritten: unwritten, Err: err}
}

// BatchDelete deletes the items of the keys in one Pebble batch committed
// with Sync: it returns nil once every deletion is on disk, and on any
// error nothing is deleted and the *storage.BatchWriteError lists every
// index. A key DynamoDB would refuse fails the call with an error
// wrapping storage.ErrInvalid.
func (s *Store) BatchDelete(ctx context.Context, tableName string, keys []storage.Key) error {
	fail := func(err error) error { return writeError(tableName, len(keys), err) }
	if err := s.gate.Enter(); err != nil {
		return fail(err)
	}
	defer s.gate.Exit()
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	t := s.catalog.lookup(tableName)
	if t == nil {
		return fail(storage.ErrTableNotFound)
	}
	if len(keys) == 0 {
		return nil
	}
	b := s.db.NewBatch()
	defer b.Close()
	var key []byte
	for i, k := range keys {
		if err := k.Validate(); err != nil {
			return fail(fmt.Errorf("key %d (%q, %q): %w", i, k.PK, k.SK, err))
		}
		key = appendItemKey(key[:0], t.id, k.PK, k.SK)
		if err := b.Delete(key, nil); err != nil {
			return fail(err)
		}
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.dropped {
		return fail(storage.ErrTableNotFound)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fail(err)
	}
	return nil
}
