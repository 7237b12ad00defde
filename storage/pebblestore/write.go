package pebblestore

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/timetabledb/timetable/storage"
)

// DynamoDB's key limits, in bytes.
const (
	maxPKLen = 2048
	maxSKLen = 1024
)

// sizeCheckThreshold is the encoded length above which BatchWrite computes
// an item's DynamoDB size exactly. DynamoDB counts at most about twice the
// bytes this encoding takes (the worst cases: a null list element counts 2
// bytes there and 1 here, an empty list element 4 against 2), so an item
// encoded in less than a third of storage.MaxItemSize is within the limit
// and the hot path skips a second walk over its attributes.
const sizeCheckThreshold = storage.MaxItemSize / 3

// BatchWrite puts the items into the table in one Pebble batch committed
// with Sync: it returns nil once every item is on disk, and on any error
// no item is written and the *storage.WriteError lists every index. Items
// DynamoDB would refuse are refused here too (see ErrInvalidItem). Of two
// items with the same key in one call, the later wins.
func (s *Store) BatchWrite(ctx context.Context, tableName string, items []storage.Item) error {
	if err := s.acquire(); err != nil {
		return writeError(tableName, items, err)
	}
	defer s.release()
	if err := ctx.Err(); err != nil {
		return writeError(tableName, items, err)
	}
	t := s.catalog.lookup(tableName)
	if t == nil {
		return writeError(tableName, items, storage.ErrTableNotFound)
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
			return writeError(tableName, items, fmt.Errorf("item %d (%q, %q): %w", i, it.PK, it.SK, err))
		}
		if err := b.Set(key, val, nil); err != nil {
			return writeError(tableName, items, err)
		}
	}

	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.dropped {
		return writeError(tableName, items, storage.ErrTableNotFound)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return writeError(tableName, items, err)
	}
	return nil
}

// encodeItem appends the item's key and value to key and val, and checks
// the item against DynamoDB's rules.
func encodeItem(key, val []byte, id uint64, it storage.Item) ([]byte, []byte, error) {
	switch {
	case it.PK == "" || it.SK == "":
		return key, val, fmt.Errorf("%w: empty key", ErrInvalidItem)
	case len(it.PK) > maxPKLen:
		return key, val, fmt.Errorf("%w: partition key longer than %d bytes", ErrInvalidItem, maxPKLen)
	case len(it.SK) > maxSKLen:
		return key, val, fmt.Errorf("%w: sort key longer than %d bytes", ErrInvalidItem, maxSKLen)
	}
	val, err := appendItem(val, it.Attrs)
	if err != nil {
		return key, val, fmt.Errorf("%w: %w", ErrInvalidItem, err)
	}
	if len(val)+len(it.PK)+len(it.SK) > sizeCheckThreshold {
		if n := storage.ItemSize(it); n > storage.MaxItemSize {
			return key, val, fmt.Errorf("%w: %d bytes, over DynamoDB's %d", ErrInvalidItem, n, storage.MaxItemSize)
		}
	}
	return appendItemKey(key, id, it.PK, it.SK), val, nil
}

// writeError reports that none of items was written.
func writeError(table string, items []storage.Item, err error) *storage.WriteError {
	unwritten := make([]int, len(items))
	for i := range unwritten {
		unwritten[i] = i
	}
	return &storage.WriteError{Table: table, Unwritten: unwritten, Err: err}
}
