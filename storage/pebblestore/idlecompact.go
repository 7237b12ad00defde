package pebblestore

import (
	"bytes"
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// idleCompactRatio bounds an idle compaction (settle): it compacts the
// key span of the store's L0 sstables only when the sstables of the
// levels below that overlap the span hold at most this many times L0's
// bytes. Pebble's levels grow by the same factor (its LevelMultiplier).
const idleCompactRatio = 10

// settle is what the idle flusher does once writes have stopped: flush
// the memtable, then compact what the flushes left in L0 into the levels
// below, as InfluxDB compacts a shard fully once its writes have gone
// cold (compact-full-write-cold-duration). A flush writes its sstables to
// L0 with the fast codec and small blocks of the upper levels (options.go),
// where they stay until Pebble's own compactions, which an idle store
// never runs, move them down: compacted, the same data takes half the
// disk or less (for the disk benchmark's 100,000 events, 4.0 MiB of
// sstables became 2.3 MiB in rows, 2.4 MiB became 1.2 MiB in chunks).
//
// The cost is bounded (idleCompactRatio): the compaction rewrites L0 and
// what lies below it in L0's key span, and is skipped when that is more
// than idleCompactRatio times L0, so an idle compaction rewrites at most
// 11 times what the flushes since the last one wrote; a span it skips
// is left to Pebble's compactions, as before. One caveat: Pebble moves
// a lone sstable that overlaps nothing below down as it is, with the
// codec it was written with (Compact says more), so the first flush of
// a store that has nothing else in its span stays as the flush wrote it.
//
// ctx is cancelled by Close, which a compaction in progress then stops
// for.
func (s *Store) settle(ctx context.Context) error {
	if err := s.db.Flush(); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	levels, err := s.db.SSTables()
	if err != nil {
		return fmt.Errorf("list sstables: %w", err)
	}
	start, end, ok := idleCompaction(spansOf(levels), idleCompactRatio)
	if !ok {
		return nil
	}
	if err := s.db.Compact(ctx, start, end, false); err != nil {
		return fmt.Errorf("compact what the flushes wrote: %w", err)
	}
	return nil
}

// fileSpan is what idleCompaction needs of an sstable: its first and
// last user keys, and its size.
type fileSpan struct {
	smallest, largest []byte
	size              uint64
}

// spansOf returns the spans of Pebble's sstables, level by level.
func spansOf(levels [][]pebble.SSTableInfo) [][]fileSpan {
	out := make([][]fileSpan, len(levels))
	for i, files := range levels {
		for _, f := range files {
			out[i] = append(out[i], fileSpan{smallest: f.Smallest.UserKey, largest: f.Largest.UserKey, size: f.Size})
		}
	}
	return out
}

// idleCompaction decides an idle compaction of the sstables levels
// (levels[0] is L0): the key span [start, end) of every L0 sstable, when
// L0 has any and the sstables of the levels below that overlap it hold at
// most ratio times L0's bytes.
func idleCompaction(levels [][]fileSpan, ratio uint64) (start, end []byte, ok bool) {
	if len(levels) == 0 || len(levels[0]) == 0 {
		return nil, nil, false
	}
	var top uint64
	for i, f := range levels[0] {
		if i == 0 || bytes.Compare(f.smallest, start) < 0 {
			start = f.smallest
		}
		if i == 0 || bytes.Compare(f.largest, end) > 0 {
			end = f.largest
		}
		top += f.size
	}
	var below uint64
	for _, files := range levels[1:] {
		for _, f := range files {
			if bytes.Compare(f.largest, start) >= 0 && bytes.Compare(f.smallest, end) <= 0 {
				below += f.size
			}
		}
	}
	if below > ratio*top {
		return nil, nil, false
	}
	// Pebble compacts every sstable that overlaps [start, end] with end
	// included, and wants start < end: the key just after end does both.
	return start, append(bytes.Clone(end), 0), true
}
