package pebblestore

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

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

	// Every item is encoded first and set in the batch in key order:
	// Pebble inserts a batch's keys into the memtable's skiplist one after
	// the other, starting each search where the key before went, so a key
	// that follows the one before is placed in a few comparisons where one
	// in no order searches the whole memtable. Of two items with the same
	// key the later is still set last, and wins: items are encoded in
	// order, so the later has the later keyStart, which breaks the tie
	// (a stable sort does the same, more slowly).
	enc := encodings.Get().(*encoding)
	defer enc.release() // the batch holds copies
	enc.entries = slices.Grow(enc.entries, len(items))[:len(items)]
	for i, it := range items {
		e := encodedItem{keyStart: len(enc.keys), valStart: len(enc.vals)}
		var err error
		if enc.keys, enc.vals, err = encodeItem(enc.keys, enc.vals, t.id, it); err != nil {
			return writeError(tableName, len(items), fmt.Errorf("item %d (%q, %q): %w", i, it.PK, it.SK, err))
		}
		e.keyEnd, e.valEnd = len(enc.keys), len(enc.vals)
		enc.entries[i] = e
	}
	slices.SortFunc(enc.entries, func(a, b encodedItem) int {
		if c := bytes.Compare(a.key(enc.keys), b.key(enc.keys)); c != 0 {
			return c
		}
		return cmp.Compare(a.keyStart, b.keyStart)
	})
	b := s.db.NewBatchWithSize(batchSize(len(enc.keys), len(enc.vals), len(enc.entries)))
	defer b.Close()
	for _, e := range enc.entries {
		if err := b.Set(e.key(enc.keys), e.val(enc.vals), nil); err != nil {
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
	s.idle.wrote()
	return nil
}

// encodeItem validates the item, unless storage.Item.Checked did, and
// appends its key and value to key and val.
func encodeItem(key, val []byte, id uint64, it storage.Item) ([]byte, []byte, error) {
	if err := it.Valid(); err != nil {
		return key, val, err
	}
	val, err := appendItem(val, it.Attrs, it.NumbersCanonical())
	if err != nil {
		return key, val, err
	}
	return appendItemKey(key, id, it.PK, it.SK), val, nil
}

// encoding holds the buffers BatchWrite encodes a call's items into,
// reused through encodings so that a busy store does not make a batch's
// worth of garbage a call.
type encoding struct {
	keys, vals []byte
	entries    []encodedItem
}

var encodings = sync.Pool{New: func() any { return new(encoding) }}

// maxPooledEncoding is the most bytes of buffers an encoding keeps for
// the next call; those of a larger batch are left to the GC.
const maxPooledEncoding = 4 << 20

// release empties e and returns it to encodings.
func (e *encoding) release() {
	if cap(e.keys)+cap(e.vals) > maxPooledEncoding {
		return
	}
	e.keys, e.vals, e.entries = e.keys[:0], e.vals[:0], e.entries[:0]
	encodings.Put(e)
}

// encodedItem locates one item's key and value in the buffers BatchWrite
// encodes a call's items into.
type encodedItem struct {
	keyStart, keyEnd, valStart, valEnd int
}

func (e encodedItem) key(keys []byte) []byte { return keys[e.keyStart:e.keyEnd] }
func (e encodedItem) val(vals []byte) []byte { return vals[e.valStart:e.valEnd] }

// batchSize is the size of the Pebble batch of n entries with keys and
// values of these total lengths: a header, and per entry a kind byte and
// two length varints (at most 5 bytes each for what one item can hold).
func batchSize(keys, vals, n int) int {
	const header, perEntry = 12, 1 + 5 + 5
	return header + keys + vals + n*perEntry
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
	s.idle.wrote()
	return nil
}
