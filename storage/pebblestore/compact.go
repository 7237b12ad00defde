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
// and writes go on meanwhile. Each level is compacted whole, in one
// compaction rather than one per sstable: Pebble moves a compaction's
// lone sstable that overlaps nothing below down as it is, with the
// compression it was written with, and the sstables of one flush never
// overlap each other, so a store whose data came out of a single flush
// kept the upper levels' fast codec and small blocks at the bottom (1.65
// times the disk, for the peer benchmark's events with 11-character
// ids). A single sstable that overlaps nothing is still moved as it is.
func (s *Store) Compact(ctx context.Context) error {
	if err := s.gate.Enter(); err != nil {
		return err
	}
	defer s.gate.Exit()
	if err := s.db.Flush(); err != nil {
		return fmt.Errorf("compact pebble store: flush: %w", err)
	}
	// Every key starts with a prefix byte below 0xff (keys.go). Not
	// parallelized: each level in one compaction (see above).
	if err := s.db.Compact(ctx, []byte{metaPrefix}, []byte{0xff}, false); err != nil {
		return fmt.Errorf("compact pebble store: %w", err)
	}
	return nil
}
