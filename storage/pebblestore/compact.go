package pebblestore

import (
	"context"
	"fmt"
)

// Compact flushes the memtables to sstables and compacts every key of the
// DB into the bottom level, where the store's strongest compression
// applies (see coldBlockSize): the disk a store takes once compacted, and the
// smallest it takes. Pebble compacts on its own as data arrive, so a
// store needs Compact only to give disk back at once (after deleting
// data, or before copying the directory) or to measure its size. It reads
// and rewrites the DB, so it takes time in proportion to its size; reads
// and writes go on meanwhile. An sstable that overlaps nothing below it
// is moved down rather than rewritten, and keeps the compression it was
// written with.
func (s *Store) Compact(ctx context.Context) error {
	if err := s.gate.Enter(); err != nil {
		return err
	}
	defer s.gate.Exit()
	if err := s.db.Flush(); err != nil {
		return fmt.Errorf("compact pebble store: flush: %w", err)
	}
	// Every key starts with a prefix byte below 0xff (keys.go).
	if err := s.db.Compact(ctx, []byte{metaPrefix}, []byte{0xff}, true); err != nil {
		return fmt.Errorf("compact pebble store: %w", err)
	}
	return nil
}
